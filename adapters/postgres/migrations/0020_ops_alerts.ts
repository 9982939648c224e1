// The operators' alerts (issue 14 §3): incidents, one open at a time per key (the partial unique index is what makes
// an alert go out once however many instances notice the same trouble), the signals counted over a window, each
// cron's last start; and the indexes the back-office and the customers' lists read at scale (§4).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE ops_incidents (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      key text NOT NULL CHECK (length(key) <= 200),
      summary_en text NOT NULL,
      summary_fr text NOT NULL,
      opened_at timestamptz NOT NULL,
      told_at timestamptz,
      resolved_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX ops_incidents_open_key ON ops_incidents (key) WHERE resolved_at IS NULL`
  yield* sql`CREATE INDEX ops_incidents_untold ON ops_incidents (id) WHERE told_at IS NULL AND resolved_at IS NULL`
  yield* sql`
    CREATE TABLE ops_signals (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      kind text NOT NULL CHECK (length(kind) <= 64),
      at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX ops_signals_kind_at ON ops_signals (kind, at)`
  yield* sql`CREATE TABLE cron_runs (name text PRIMARY KEY, last_started_at timestamptz NOT NULL)`
  // Provisioning failures over a window: the failed orders by when they failed.
  yield* sql`CREATE INDEX orders_failed_at ON orders (updated_at) WHERE status = 'failed'`
  // A customer's orders and payments, newest first, one index range per page (keyset on created_at, id).
  yield* sql`CREATE INDEX orders_user_created ON orders (user_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX ledger_entries_user_created ON ledger_entries (user_id, created_at DESC, id DESC)`
  // The back-office's search by invoice number and by service address (an IP, a game server's ip:port): equal or prefix.
  yield* sql`CREATE INDEX invoices_number_prefix ON invoices (number text_pattern_ops)`
  yield* sql`CREATE INDEX vps_address_prefix ON vps (address text_pattern_ops)`
  yield* sql`CREATE INDEX game_servers_address_prefix ON game_servers (address text_pattern_ops)`
})
