// The automatic renewal of each subscription's periods: one row per subscription and period (its start is the previous
// period's end), with the dunning's state: attempts, the last failure, the next attempt, the hosted payment page.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE renewals (
      subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
      period_start timestamptz NOT NULL,
      amount_cents integer NOT NULL CHECK (amount_cents >= 0),
      status text NOT NULL CHECK (status IN ('scheduled', 'retrying', 'awaiting_authentication', 'failed', 'paid')),
      -- Failed attempts recorded so far: the next charge's idempotency key names the attempt after them, so an attempt
      -- interrupted before its outcome was recorded is made again with the same key (charged once).
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      last_failure text,
      next_attempt_at timestamptz,
      pay_url text,
      charge_reference text,
      reminded_at timestamptz,
      paid_at timestamptz,
      -- One pass at a time charges a period: a pass that dies leaves the claim to lapse.
      claimed_until timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (subscription_id, period_start)
    )`
  yield* sql`CREATE INDEX renewals_next_attempt ON renewals (next_attempt_at) WHERE status IN ('scheduled', 'retrying')`
})
