// The customer notices (issue 12 §4): one row per event key, recorded before its e-mail is sent, so an event told
// twice is sent once and a mail server that was down is retried later.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // user_id is not a foreign key: a notice outlives nothing it names, and one for a deleted account is given up.
  yield* sql`
    CREATE TABLE customer_notices (
      key text PRIMARY KEY,
      user_id text NOT NULL,
      tag text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      sent_at timestamptz,
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      last_error text,
      next_attempt_at timestamptz
    )`
  yield* sql`
    CREATE INDEX customer_notices_due ON customer_notices (next_attempt_at)
    WHERE sent_at IS NULL AND next_attempt_at IS NOT NULL`
})
