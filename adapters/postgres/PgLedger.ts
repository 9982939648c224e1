// The ledger in Postgres: UNIQUE (kind, reference) keeps a replayed charge or refund to one entry.
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Ledger } from "../../ports/Ledger.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const EntryRow = snakeColumns(Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  subscriptionId: Schema.NullOr(Schema.String),
  orderId: Schema.NullOr(Schema.String),
  kind: Schema.Literals(["charge", "refund"]),
  amountCents: Schema.Int,
  reference: Schema.String,
  createdAt: Schema.Date
}))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const record = SqlSchema.findAll({
    Request: EntryRow,
    Result: Schema.Struct({ id: Schema.String }),
    execute: (row) => sql`INSERT INTO ledger_entries ${sql.insert(row)} ON CONFLICT (kind, reference) DO NOTHING RETURNING id`
  })
  const entry = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: EntryRow,
    execute: (id) => sql`SELECT * FROM ledger_entries WHERE id = ${id}`
  })
  const forOrder = SqlSchema.findAll({
    Request: Schema.String,
    Result: EntryRow,
    execute: (orderId) => sql`SELECT * FROM ledger_entries WHERE order_id = ${orderId} ORDER BY created_at, id`
  })
  // One lookup of ledger_entries_order_id per order of the page.
  const paidAt = SqlSchema.findAll({
    Request: Schema.Array(Schema.String),
    Result: Schema.Struct({ order_id: Schema.String, paid_at: Schema.Date }),
    execute: (ids) =>
      sql`SELECT order_id, min(created_at) AS paid_at FROM ledger_entries
          WHERE order_id = ANY(${ids}::uuid[]) AND kind = 'charge' AND subscription_id IS NOT NULL GROUP BY order_id`
  })
  const forSubscription = SqlSchema.findAll({
    Request: Schema.String,
    Result: EntryRow,
    execute: (id) => sql`SELECT * FROM ledger_entries WHERE subscription_id = ${id} ORDER BY created_at, id`
  })
  // One range of ledger_entries_user_created (migration 20) however deep the page.
  const forUser = SqlSchema.findAll({
    Request: Schema.Struct({ userId: Schema.String, after: Schema.NullOr(Schema.Struct({ at: Schema.Date, id: Schema.String })), limit: Schema.Int }),
    Result: EntryRow,
    execute: ({ after, limit, userId }) =>
      after === null
        ? sql`SELECT * FROM ledger_entries WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`
        : sql`SELECT * FROM ledger_entries WHERE user_id = ${userId} AND (created_at, id) < (${after.at}, ${after.id})
              ORDER BY created_at DESC, id DESC LIMIT ${limit}`
  })
  return Ledger.of({
    record: (entry) => record(entry).pipe(Effect.map((rows) => rows.length === 1), stored),
    entry: (id) => entry(id).pipe(stored),
    forOrder: (orderId) => forOrder(orderId).pipe(stored),
    paidAt: (orderIds) =>
      (orderIds.length === 0 ? Effect.succeed([]) : paidAt(orderIds)).pipe(
        Effect.map((rows) => new Map(rows.map((r) => [r.order_id, r.paid_at] as const))),
        stored
      ),
    forSubscription: (subscriptionId) => forSubscription(subscriptionId).pipe(stored),
    forUser: (userId, after, limit) => forUser({ userId, after, limit }).pipe(stored)
  })
})

export const layer = Layer.effect(Ledger, make)
