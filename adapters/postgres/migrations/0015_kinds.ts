// What is sold is any product registered by kind (domain/billing/HostedService.ts), not a closed list: orders and
// subscriptions accept every kind in the form billing names them (ServiceKind), no longer only 'vps' and 'game'. The
// node reservations no longer carry a VMID: which machine an order got is the Proxmox adapter's (vmid_allocations).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const table of ["orders", "subscriptions"] as const) {
    yield* sql`ALTER TABLE ${sql(table)} DROP CONSTRAINT IF EXISTS ${sql(`${table}_kind_check`)}`
    yield* sql`ALTER TABLE ${sql(table)} ADD CONSTRAINT ${sql(`${table}_kind_format`)} CHECK (kind ~ '^[a-z][a-z0-9-]{0,31}$')`
  }
  yield* sql`ALTER TABLE node_reservations DROP COLUMN IF EXISTS vmid`
})
