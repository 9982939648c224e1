// Game server records, and the panel allocations (IP:port) and node room that orders hold while they build one.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One server per order and per subscription, like vps: a retried creation finds the first record, and the
  // lifecycle's lookup by subscription is never ambiguous. The panel's identifier routes customer calls.
  yield* sql`
    CREATE TABLE game_servers (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      subscription_id uuid NOT NULL UNIQUE REFERENCES subscriptions (id),
      order_id uuid NOT NULL UNIQUE REFERENCES orders (id),
      plan_id text NOT NULL,
      panel text NOT NULL,
      panel_server_id integer NOT NULL,
      uuid text NOT NULL,
      identifier text NOT NULL UNIQUE,
      name text NOT NULL,
      node integer NOT NULL,
      allocation_id integer NOT NULL,
      address text NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'suspended', 'deleted')),
      grace_until timestamptz,
      created_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`
  yield* sql`CREATE INDEX game_servers_user_id ON game_servers (user_id)`
  // UNIQUE (panel, allocation_id): an allocation is never held twice, whatever the code above it does.
  // claimed_at is the clock at insertion (not the transaction start), so claims list in the order the panel lock
  // let them in.
  yield* sql`
    CREATE TABLE game_allocation_claims (
      holder text PRIMARY KEY,
      panel text NOT NULL,
      node integer NOT NULL,
      allocation_id integer NOT NULL,
      memory_mib integer NOT NULL CHECK (memory_mib >= 0),
      disk_mib integer NOT NULL CHECK (disk_mib >= 0),
      created boolean NOT NULL DEFAULT false,
      claimed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (panel, allocation_id)
    )`
  // One row per panel, locked FOR UPDATE by whoever claims on it.
  yield* sql`CREATE TABLE game_panel_locks (panel text PRIMARY KEY)`
})
