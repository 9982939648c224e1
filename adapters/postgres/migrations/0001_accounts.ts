// Accounts, password reset tokens, login throttling counters.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE users (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      account_type text NOT NULL CHECK (account_type IN ('personal', 'professional')),
      first_name text NOT NULL,
      last_name text NOT NULL,
      company_name text,
      siret char(14),
      language text NOT NULL CHECK (language IN ('fr', 'en')),
      password_hash text NOT NULL,
      session_version integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      CHECK (account_type = 'personal' OR siret IS NOT NULL)
    )`
  // Case-insensitive uniqueness lives in the database: concurrent registrations cannot both win.
  yield* sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`
  yield* sql`
    CREATE TABLE password_resets (
      token_digest char(64) PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      invalidated_at timestamptz
    )`
  yield* sql`CREATE INDEX password_resets_user_id ON password_resets (user_id) WHERE used_at IS NULL AND invalidated_at IS NULL`
  yield* sql`
    CREATE TABLE login_attempts (
      key text PRIMARY KEY,
      count integer NOT NULL,
      window_start timestamptz NOT NULL,
      window_end timestamptz NOT NULL
    )`
})
