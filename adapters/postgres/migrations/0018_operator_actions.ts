// What operators decide about a service and about money (issue 14 §2): a service held by an operator with the
// statement of reasons its customer was sent (DSA art. 17), and the refunds they ask for, reserved before the gateway
// is called so that two at once never give back more than was taken; and a customer's e-mails listed for a resend.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE service_holds (
      id uuid PRIMARY KEY,
      subscription_id uuid NOT NULL REFERENCES subscriptions (id),
      placed_by uuid NOT NULL,
      placed_at timestamptz NOT NULL,
      -- The statement of reasons: the facts and circumstances, and the legal or contractual ground relied on.
      facts text NOT NULL,
      ground text NOT NULL,
      lifted_by uuid,
      lifted_at timestamptz,
      lift_reason text,
      CHECK ((lifted_at IS NULL) = (lifted_by IS NULL))
    )`
  // One hold in force per service: two operators suspending at once place one.
  yield* sql`CREATE UNIQUE INDEX service_holds_in_force ON service_holds (subscription_id) WHERE lifted_at IS NULL`
  yield* sql`
    CREATE TABLE refund_requests (
      id uuid PRIMARY KEY,
      charge_id uuid NOT NULL REFERENCES ledger_entries (id),
      -- The operator's click: the same key twice is the same refund.
      idempotency_key text NOT NULL UNIQUE,
      amount_cents integer NOT NULL CHECK (amount_cents > 0),
      reason text NOT NULL,
      requested_by uuid NOT NULL,
      requested_at timestamptz NOT NULL,
      -- The ledger's refund entry once the gateway gave the money back; null while it is pending.
      refund_entry_id uuid REFERENCES ledger_entries (id)
    )`
  yield* sql`CREATE INDEX refund_requests_charge ON refund_requests (charge_id)`
  // The operators' list of failed orders.
  yield* sql`CREATE INDEX orders_failed ON orders (updated_at DESC, id DESC) WHERE status = 'failed'`
  // A customer's e-mails, for the operator who resends one.
  yield* sql`CREATE INDEX customer_notices_user ON customer_notices (user_id, created_at DESC)`
})
