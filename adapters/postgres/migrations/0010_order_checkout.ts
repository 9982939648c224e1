// Orders paid on the provider's hosted checkout (issue 12 §2): an order waits for its payment (`awaiting_payment`, with
// the checkout session, its URL and when the order expires unpaid) and ends `expired` if never paid. Orders left
// "pending" by the charge-at-order flow become failed and are watched as a pending cleanup: a charge the provider took
// for one is found by the order recovery and refunded.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ADD COLUMN checkout_session text`
  yield* sql`ALTER TABLE orders ADD COLUMN checkout_url text`
  yield* sql`ALTER TABLE orders ADD COLUMN expires_at timestamptz`
  yield* sql`ALTER TABLE orders DROP CONSTRAINT orders_status_check`
  yield* sql`
    UPDATE orders SET status = 'failed',
      failure_reason = 'The order was interrupted before its payment was confirmed. Nothing is kept from it: a payment ' ||
        'that still goes through is refunded.',
      cleanup_pending_since = coalesce(cleanup_pending_since, now()),
      updated_at = now()
    WHERE status = 'pending'`
  yield* sql`ALTER TABLE orders ADD CONSTRAINT orders_status_check
    CHECK (status IN ('awaiting_payment', 'provisioning', 'completed', 'failed', 'expired'))`
  yield* sql`DROP INDEX orders_unfinished`
  yield* sql`CREATE INDEX orders_unfinished ON orders (created_at) WHERE status IN ('awaiting_payment', 'provisioning')`
  // The expiry reads unpaid orders by their deadline.
  yield* sql`CREATE INDEX orders_awaiting_payment ON orders (expires_at) WHERE status = 'awaiting_payment'`
})
