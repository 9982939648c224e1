// The payment provider's side of billing: the provider's customer of each user (created once, then remembered), and
// every provider notification received, under its own id, so a notification delivered twice has its effect once.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE payment_customers (
      user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      customer text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE payment_notifications (
      id text PRIMARY KEY,
      kind text NOT NULL,
      payment text,
      order_id text,
      refunded_cents integer CHECK (refunded_cents >= 0),
      received_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX payment_notifications_payment ON payment_notifications (payment) WHERE payment IS NOT NULL`
})
