// Nothing lost: failed orders whose undo is still being retried (shown to operators until it finishes), and the
// sandbox payment gateway's charges and refunds kept where every instance sees them (it stands for an external
// provider, which outlives our processes).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ADD COLUMN cleanup_pending_since timestamptz`
  yield* sql`ALTER TABLE orders ADD COLUMN cleanup_attempts integer NOT NULL DEFAULT 0 CHECK (cleanup_attempts >= 0)`
  yield* sql`ALTER TABLE orders ADD COLUMN cleanup_last_error text`
  yield* sql`CREATE INDEX orders_cleanup_pending ON orders (cleanup_pending_since) WHERE cleanup_pending_since IS NOT NULL`
  // One row per charge or refund; the idempotency key makes a replayed call answer the first one's reference.
  yield* sql`
    CREATE TABLE sandbox_payments (
      reference text PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('charge', 'refund')),
      idempotency_key text NOT NULL UNIQUE,
      customer text,
      amount_cents integer NOT NULL CHECK (amount_cents >= 0),
      description text NOT NULL DEFAULT '',
      charge text REFERENCES sandbox_payments (reference),
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`
})
