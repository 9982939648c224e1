// An admin retries a failed order (domain/backoffice/orderRetry.ts) as a new order of the same customer, plan and
// options, which records the order it retries: at most one retry per failed order, which the database guarantees
// (concurrent retries insert one row; the others find it). The index also finds an order's retry.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ADD COLUMN IF NOT EXISTS retry_of uuid REFERENCES orders (id)`
  yield* sql`CREATE UNIQUE INDEX IF NOT EXISTS orders_retry_of ON orders (retry_of) WHERE retry_of IS NOT NULL`
})
