// The back-office. A plan can be taken off sale by an operator (and put back) without retiring it: the catalog file's
// entry stays as it is, a new order is refused, subscriptions on it renew as before; few plans are ever off sale (a
// partial index). The dashboard's aggregates get the indexes they lacked: orders by creation time (today's orders),
// renewals waiting for a retry or the bank, refunds not confirmed yet, a subscription's latest invoice.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE plans ADD COLUMN IF NOT EXISTS off_sale boolean NOT NULL DEFAULT false`
  yield* sql`CREATE INDEX IF NOT EXISTS plans_off_sale ON plans (id) WHERE off_sale`
  yield* sql`CREATE INDEX IF NOT EXISTS orders_created_at ON orders (created_at)`
  yield* sql`CREATE INDEX IF NOT EXISTS renewals_failed ON renewals (status) WHERE status IN ('retrying', 'awaiting_authentication')`
  yield* sql`CREATE INDEX IF NOT EXISTS invoices_subscription ON invoices (subscription_id, issued_at DESC, id DESC) WHERE kind = 'invoice'`
  yield* sql`CREATE INDEX IF NOT EXISTS refund_requests_pending ON refund_requests (requested_at) WHERE refund_entry_id IS NULL`
  yield* sql`CREATE INDEX IF NOT EXISTS invoices_order ON invoices (order_id, issued_at DESC, id DESC) WHERE kind = 'invoice'`
})
