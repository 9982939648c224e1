// The catalog: Proxmox clusters, Pterodactyl panels, OS templates, IP pools and their addresses, plans.
// Credentials are not here: they are sealed in upstream_secrets. Retired rows stay (retired_at) for history.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE proxmox_clusters (
      name text PRIMARY KEY,
      url text NOT NULL,
      username text,
      token_id text,
      tls_ca text,
      tls_fingerprint text,
      tls_insecure boolean NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz,
      CHECK (username IS NOT NULL OR token_id IS NOT NULL)
    )`
  yield* sql`
    CREATE TABLE pterodactyl_panels (
      name text PRIMARY KEY,
      url text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    )`
  // One row per node holding a copy of the template (a full clone stays on the template's node).
  yield* sql`
    CREATE TABLE os_templates (
      id text NOT NULL,
      cluster text NOT NULL REFERENCES proxmox_clusters (name),
      node text NOT NULL,
      vmid integer NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz,
      PRIMARY KEY (id, cluster, node)
    )`
  yield* sql`
    CREATE TABLE ip_pools (
      id text PRIMARY KEY,
      cluster text NOT NULL REFERENCES proxmox_clusters (name),
      cidr cidr NOT NULL,
      gateway inet NOT NULL,
      bridge text NOT NULL,
      nodes jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    )`
  // An address belongs to one pool and, while assigned, to one holder (an order): both enforced here, so
  // concurrent assignments cannot hand out an address twice nor give a holder two. `inet` orders numerically.
  yield* sql`
    CREATE TABLE ip_addresses (
      pool_id text NOT NULL REFERENCES ip_pools (id),
      address inet NOT NULL UNIQUE,
      holder text,
      assigned_at timestamptz,
      withdrawn_at timestamptz,
      PRIMARY KEY (pool_id, address),
      CHECK ((holder IS NULL) = (assigned_at IS NULL))
    )`
  yield* sql`CREATE UNIQUE INDEX ip_addresses_holder_key ON ip_addresses (holder) WHERE holder IS NOT NULL`
  yield* sql`CREATE INDEX ip_addresses_free ON ip_addresses (pool_id, address) WHERE holder IS NULL AND withdrawn_at IS NULL`
  yield* sql`
    CREATE TABLE plans (
      id text PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('vps', 'game')),
      name text NOT NULL,
      price_cents integer NOT NULL CHECK (price_cents >= 0),
      spec jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    )`
})
