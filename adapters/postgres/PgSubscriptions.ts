// Subscriptions in Postgres: each move is one compare-and-set UPDATE, so concurrent ones apply once.
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Subscription } from "../../domain/billing/Billing.ts"
import { moveWith } from "../../domain/billing/subscriptionMoves.ts"
import { subscriptionSources } from "../../domain/billing/transitions.ts"
import { type SubscriptionMove, Subscriptions } from "../../ports/Subscriptions.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const SubscriptionRow = snakeColumns(Subscription)
const NewSubscriptionRow = snakeColumns(Schema.Struct(Subscription.fields))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const insert = SqlSchema.findOne({
    Request: NewSubscriptionRow,
    Result: SubscriptionRow,
    execute: (row) => sql`INSERT INTO subscriptions ${sql.insert(row)} RETURNING *`
  })
  const byId = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: SubscriptionRow,
    execute: (id) => sql`SELECT * FROM subscriptions WHERE id = ${id}`
  })
  const forUser = SqlSchema.findAll({
    Request: Schema.String,
    Result: SubscriptionRow,
    execute: (userId) => sql`SELECT * FROM subscriptions WHERE user_id = ${userId} ORDER BY created_at, id`
  })
  // One range of subscriptions_user_id; a customer's few rows are sorted after it.
  const pageForUser = SqlSchema.findAll({
    Request: Schema.Struct({ userId: Schema.String, after: Schema.NullOr(Schema.Struct({ at: Schema.Date, id: Schema.String })), limit: Schema.Int }),
    Result: SubscriptionRow,
    execute: ({ after, limit, userId }) =>
      after === null
        ? sql`SELECT * FROM subscriptions WHERE user_id = ${userId} ORDER BY created_at, id LIMIT ${limit}`
        : sql`SELECT * FROM subscriptions WHERE user_id = ${userId} AND (created_at, id) > (${after.at}, ${after.id})
              ORDER BY created_at, id LIMIT ${limit}`
  })
  const due = SqlSchema.findAll({
    Request: Schema.Date,
    Result: SubscriptionRow,
    execute: (now) =>
      sql`SELECT * FROM subscriptions WHERE status = 'active' AND current_period_end <= ${now} ORDER BY current_period_end, id`
  })
  /** The statuses a renewal may leave (domain/billing/transitions.ts). */
  const renewableStatuses = subscriptionSources("renewed").map(([from]) => from)
  const renewable = SqlSchema.findAll({
    Request: Schema.Date,
    Result: SubscriptionRow,
    execute: (until) =>
      sql`SELECT * FROM subscriptions WHERE status = ANY(${renewableStatuses}) AND NOT cancel_at_period_end
          AND current_period_end <= ${until} ORDER BY current_period_end, id`
  })
  const suspended = SqlSchema.findAll({
    Request: Schema.Void,
    Result: SubscriptionRow,
    execute: () => sql`SELECT * FROM subscriptions WHERE status = 'suspended' ORDER BY current_period_end, id`
  })
  const unsettledWithdrawals = SqlSchema.findAll({
    Request: Schema.Void,
    Result: SubscriptionRow,
    execute: () =>
      sql`SELECT * FROM subscriptions WHERE withdrawn_at IS NOT NULL AND withdrawal_settled_at IS NULL
          ORDER BY withdrawn_at, id`
  })
  /** Whether the conditional statement (with `RETURNING id`) changed a row. */
  const changed = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.map((rows) => rows.length === 1), stored)

  /**
   * The stored period end is the one the caller read: compared at the precision the caller holds it (a JavaScript
   * Date: milliseconds), since timestamptz keeps microseconds a row written by other means may carry.
   */
  const samePeriodEnd = (expected: Date) => sql`date_trunc('milliseconds', current_period_end) = ${expected}`

  /** The compare-and-set: one UPDATE guarded by the status the move leaves (and the period end, when given). */
  const transition = (id: string, move: SubscriptionMove) =>
    changed(sql`UPDATE subscriptions
                SET status = ${move.to}, current_period_end = coalesce(${move.nextPeriodEnd ?? null}::timestamptz, current_period_end)
                WHERE id = ${id} AND status = ${move.from}
                  AND ${move.periodEnd === undefined ? sql`true` : samePeriodEnd(move.periodEnd)}
                RETURNING id`)

  /** The withdrawal: one compare-and-set per status the `withdrawn` move may leave, recording when. */
  const withdraw = (id: string, at: Date) =>
    Effect.gen(function*() {
      for (const [from, to] of subscriptionSources("withdrawn")) {
        const moved = yield* changed(sql`UPDATE subscriptions SET status = ${to}, withdrawn_at = ${at}
                                         WHERE id = ${id} AND status = ${from} AND withdrawn_at IS NULL
                                         RETURNING id`)
        if (moved) return true
      }
      return false
    })

  return Subscriptions.of({
    create: ({ now, ...s }) =>
      insert({ ...s, status: "active", cancelAtPeriodEnd: false, serviceId: null, withdrawnAt: null, createdAt: now }).pipe(stored),
    get: (id) => byId(id).pipe(stored),
    forUser: (userId) => forUser(userId).pipe(stored),
    pageForUser: (userId, after, limit) => pageForUser({ userId, after, limit }).pipe(stored),
    attachService: (id, serviceId) =>
      sql`UPDATE subscriptions SET service_id = ${serviceId} WHERE id = ${id}`.pipe(Effect.asVoid, stored),
    transition,
    extend: (id, expected, next) => moveWith({ transition })(id, "renewed", { periodEnd: expected, next }),
    setCancelAtPeriodEnd: (id, cancel) =>
      sql`UPDATE subscriptions SET cancel_at_period_end = ${cancel} WHERE id = ${id}`.pipe(Effect.asVoid, stored),
    due: (now) => due(now).pipe(stored),
    renewable: (until) => renewable(until).pipe(stored),
    suspended: suspended(undefined).pipe(stored),
    withdraw,
    withdrawalSettled: (id, at) =>
      sql`UPDATE subscriptions SET withdrawal_settled_at = ${at} WHERE id = ${id}`.pipe(Effect.asVoid, stored),
    unsettledWithdrawals: unsettledWithdrawals(undefined).pipe(stored)
  })
})

export const layer = Layer.effect(Subscriptions, make)
