// Orders, subscriptions, the payment ledger, VPS records, and the placement bookkeeping (node reservations, VMIDs).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE orders (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      plan_id text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('vps', 'game')),
      options jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'provisioning', 'completed', 'failed')),
      step integer NOT NULL CHECK (step >= 0),
      total_steps integer NOT NULL CHECK (total_steps >= 0),
      step_name text NOT NULL,
      failure_reason text,
      subscription_id uuid,
      service_id uuid,
      one_time_secret text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX orders_unfinished ON orders (created_at) WHERE status IN ('pending', 'provisioning')`
  yield* sql`
    CREATE TABLE subscriptions (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      plan_id text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('vps', 'game')),
      order_id uuid NOT NULL UNIQUE REFERENCES orders (id),
      status text NOT NULL CHECK (status IN ('active', 'suspended', 'terminated', 'failed')),
      current_period_end timestamptz NOT NULL,
      cancel_at_period_end boolean NOT NULL DEFAULT false,
      service_id uuid,
      created_at timestamptz NOT NULL
    )`
  // The order learns its subscription after both exist (Ordering: order, payment, subscription, progress).
  yield* sql`ALTER TABLE orders ADD FOREIGN KEY (subscription_id) REFERENCES subscriptions (id)`
  yield* sql`CREATE INDEX subscriptions_user_id ON subscriptions (user_id)`
  // The lifecycle sweeper reads active subscriptions by period end, and suspended ones.
  yield* sql`CREATE INDEX subscriptions_status_period_end ON subscriptions (status, current_period_end)`
  yield* sql`
    CREATE TABLE ledger_entries (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      subscription_id uuid REFERENCES subscriptions (id),
      order_id uuid REFERENCES orders (id),
      kind text NOT NULL CHECK (kind IN ('charge', 'refund')),
      amount_cents integer NOT NULL CHECK (amount_cents >= 0),
      reference text NOT NULL,
      created_at timestamptz NOT NULL,
      -- A charge or refund replayed by a retried step names the same gateway reference: recorded once.
      UNIQUE (kind, reference)
    )`
  yield* sql`CREATE INDEX ledger_entries_order_id ON ledger_entries (order_id)`
  yield* sql`CREATE INDEX ledger_entries_subscription_id ON ledger_entries (subscription_id)`
  yield* sql`
    CREATE TABLE vps (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      subscription_id uuid NOT NULL UNIQUE REFERENCES subscriptions (id),
      order_id uuid NOT NULL UNIQUE REFERENCES orders (id),
      plan_id text NOT NULL,
      cluster text NOT NULL,
      node text NOT NULL,
      vmid integer NOT NULL,
      hostname text NOT NULL,
      template_id text NOT NULL,
      address text NOT NULL,
      status text NOT NULL CHECK (status IN ('running', 'stopped', 'suspended', 'destroyed')),
      grace_until timestamptz,
      root_password_sealed text NOT NULL,
      created_at timestamptz NOT NULL,
      destroyed_at timestamptz
    )`
  yield* sql`CREATE INDEX vps_user_id ON vps (user_id)`
  yield* sql`
    CREATE TABLE node_reservations (
      holder text PRIMARY KEY,
      cluster text NOT NULL,
      node text NOT NULL,
      cpus integer NOT NULL CHECK (cpus >= 0),
      memory_mib integer NOT NULL CHECK (memory_mib >= 0),
      disk_gib integer NOT NULL CHECK (disk_gib >= 0),
      vmid integer,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX node_reservations_cluster ON node_reservations (cluster)`
  // A released VMID's row is deleted; a foreign one (taken upstream by something else) stays, holder NULL.
  // The column is is_foreign, not foreign: FOREIGN is a reserved word and would need quoting everywhere.
  yield* sql`
    CREATE TABLE vmid_allocations (
      cluster text NOT NULL,
      vmid integer NOT NULL,
      holder text,
      is_foreign boolean NOT NULL DEFAULT false,
      PRIMARY KEY (cluster, vmid),
      CHECK (is_foreign = (holder IS NULL))
    )`
  yield* sql`CREATE UNIQUE INDEX vmid_allocations_holder ON vmid_allocations (holder) WHERE holder IS NOT NULL`
  // One row per cluster, locked FOR UPDATE by whoever reserves capacity on it.
  yield* sql`CREATE TABLE placement_locks (cluster text PRIMARY KEY)`
})
