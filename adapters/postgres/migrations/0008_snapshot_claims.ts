// Snapshot names a request is working on right now, one claim per VPS and name (case-insensitive, as Proxmox
// compares them): two requests racing for one name are settled here rather than by the hypervisor, and creations
// still running count toward the plan's limit before the hypervisor lists them.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE snapshot_claims (
      id uuid PRIMARY KEY,
      vps_id uuid NOT NULL REFERENCES vps (id) ON DELETE CASCADE,
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 40),
      work text NOT NULL CHECK (work IN ('create', 'delete')),
      claimed_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL CHECK (expires_at > claimed_at)
    )`
  yield* sql`CREATE UNIQUE INDEX snapshot_claims_name ON snapshot_claims (vps_id, lower(name))`
})
