// The ledger in Postgres: UNIQUE (kind, reference) keeps a replayed charge or refund to one entry.
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { LedgerEntry } from "../../domain/billing/Billing.ts"
import { Ledger } from "../../ports/Ledger.ts"

const EntryRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  subscription_id: Schema.NullOr(Schema.String),
  order_id: Schema.NullOr(Schema.String),
  kind: Schema.Literals(["charge", "refund"]),
  amount_cents: Schema.Int,
  reference: Schema.String,
  created_at: Schema.Date
})

const toEntry = (r: typeof EntryRow.Type): LedgerEntry => ({
  id: r.id,
  userId: r.user_id,
  subscriptionId: r.subscription_id,
  orderId: r.order_id,
  kind: r.kind,
  amountCents: r.amount_cents,
  reference: r.reference,
  createdAt: r.created_at
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const many = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(EntryRow))),
      Effect.map((rows) => rows.map(toEntry)),
      Effect.orDie
    )
  return Ledger.of({
    record: (entry) =>
      sql`INSERT INTO ledger_entries ${
        sql.insert({
          id: entry.id,
          user_id: entry.userId,
          subscription_id: entry.subscriptionId,
          order_id: entry.orderId,
          kind: entry.kind,
          amount_cents: entry.amountCents,
          reference: entry.reference,
          created_at: entry.createdAt
        })
      } ON CONFLICT (kind, reference) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie),
    forOrder: (orderId) => many(sql`SELECT * FROM ledger_entries WHERE order_id = ${orderId} ORDER BY created_at, id`),
    forSubscription: (subscriptionId) =>
      many(sql`SELECT * FROM ledger_entries WHERE subscription_id = ${subscriptionId} ORDER BY created_at, id`)
  })
})

export const layer = Layer.effect(Ledger, make)
