// Server-side sessions: a session lives as long as its row. users.session_version is no longer read (tokens name
// their session instead); it stays so that instances of the previous release keep working during a rolling upgrade.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE sessions (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      remember_me boolean NOT NULL,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      user_agent text CHECK (length(user_agent) <= 256),
      address text CHECK (length(address) <= 64)
    )`
  // Log out everywhere ends a user's sessions; the purge takes the oldest caps first.
  yield* sql`CREATE INDEX sessions_user_id ON sessions (user_id)`
  yield* sql`CREATE INDEX sessions_expires_at ON sessions (expires_at)`
})
