// Renewals in Postgres: every move is a conditional UPDATE … RETURNING, so concurrent passes act once.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { type RenewalRecord, Renewals } from "../../ports/Renewals.ts"
import { snakeColumns } from "./columns.ts"
import { stored } from "./failures.ts"

const Row = snakeColumns(Schema.Struct({
  subscriptionId: Schema.String,
  periodStart: Schema.Date,
  amountCents: Schema.Int,
  status: Schema.Literals(["scheduled", "retrying", "awaiting_authentication", "failed", "paid"]),
  attempts: Schema.Int,
  lastFailure: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Schema.Date),
  payUrl: Schema.NullOr(Schema.String),
  chargeReference: Schema.NullOr(Schema.String),
  remindedAt: Schema.NullOr(Schema.Date),
  paidAt: Schema.NullOr(Schema.Date)
}))
const Rows = Schema.Array(Row)

const COLUMNS = "subscription_id, period_start, amount_cents, status, attempts, last_failure, next_attempt_at, pay_url, " +
  "charge_reference, reminded_at, paid_at"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(COLUMNS)
  const decoded = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Rows)), stored)
  const one = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    Effect.map(decoded(query), (rows): Option.Option<RenewalRecord> => Option.fromNullishOr(rows[0]))
  const changed = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.map((rows) => rows.length === 1), stored)
  const get = (subscriptionId: string, periodStart: Date) =>
    one(sql`SELECT ${columns} FROM renewals WHERE subscription_id = ${subscriptionId} AND period_start = ${periodStart}`)

  return Renewals.of({
    open: ({ amountCents, now, periodStart, subscriptionId }) =>
      sql`INSERT INTO renewals ${
        sql.insert({
          subscription_id: subscriptionId,
          period_start: periodStart,
          amount_cents: amountCents,
          status: "scheduled",
          next_attempt_at: periodStart,
          created_at: now,
          updated_at: now
        })
      } ON CONFLICT (subscription_id, period_start) DO NOTHING`.pipe(
        stored,
        Effect.andThen(get(subscriptionId, periodStart)),
        Effect.flatMap(Option.match({
          onNone: () => Effect.die(new Error(`renewal ${subscriptionId}@${periodStart.toISOString()} vanished`)),
          onSome: Effect.succeed
        }))
      ),
    get,
    latest: (ids) =>
      ids.length === 0 ? Effect.succeed([]) : decoded(sql`
        SELECT DISTINCT ON (subscription_id) ${columns} FROM renewals
        WHERE subscription_id = ANY(${[...ids]}::uuid[]) ORDER BY subscription_id, period_start DESC`),
    markReminded: (subscriptionId, periodStart, now) =>
      changed(sql`UPDATE renewals SET reminded_at = ${now}, updated_at = ${now}
                  WHERE subscription_id = ${subscriptionId} AND period_start = ${periodStart} AND reminded_at IS NULL
                  RETURNING subscription_id`),
    claim: (subscriptionId, periodStart, now, until) =>
      one(sql`UPDATE renewals SET claimed_until = ${until}, updated_at = ${now}
              WHERE subscription_id = ${subscriptionId} AND period_start = ${periodStart}
                AND status IN ('scheduled', 'retrying') AND next_attempt_at <= ${now}
                AND (claimed_until IS NULL OR claimed_until <= ${now})
              RETURNING ${columns}`),
    recordFailure: (r) =>
      changed(sql`UPDATE renewals SET status = ${r.status}, attempts = attempts + 1, last_failure = ${r.reason},
                    next_attempt_at = ${r.nextAttemptAt}, pay_url = coalesce(${r.payUrl}, pay_url),
                    claimed_until = NULL, updated_at = ${r.now}
                  WHERE subscription_id = ${r.subscriptionId} AND period_start = ${r.periodStart}
                    AND attempts = ${r.attempts} AND status <> 'paid'
                  RETURNING subscription_id`),
    markPaid: (subscriptionId, periodStart, chargeReference, now) =>
      changed(sql`UPDATE renewals SET status = 'paid', charge_reference = ${chargeReference}, paid_at = ${now},
                    next_attempt_at = NULL, claimed_until = NULL, updated_at = ${now}
                  WHERE subscription_id = ${subscriptionId} AND period_start = ${periodStart} AND status <> 'paid'
                  RETURNING subscription_id`),
    release: (subscriptionId, periodStart) =>
      sql`UPDATE renewals SET claimed_until = NULL WHERE subscription_id = ${subscriptionId} AND period_start = ${periodStart}`
        .pipe(Effect.asVoid, stored)
  })
})

export const layer = Layer.effect(Renewals, make)
