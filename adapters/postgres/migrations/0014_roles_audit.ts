// Operators and accountability: each user's role (customer, support, admin), the append-only audit log (the database
// itself refuses to change or remove a row), and the prefix indexes the back-office's customer search reads.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE users ADD COLUMN role text NOT NULL DEFAULT 'customer'
      CHECK (role IN ('customer', 'support', 'admin'))`
  // Keyset order is the id: a bigint identity grows with every insert, so "older than id N" is one index range.
  yield* sql`
    CREATE TABLE audit_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      at timestamptz NOT NULL,
      actor_id uuid,
      actor_role text NOT NULL CHECK (actor_role IN ('customer', 'support', 'admin', 'system', 'anonymous')),
      action text NOT NULL CHECK (length(action) <= 64),
      subject_user_id uuid,
      target_type text CHECK (length(target_type) <= 32),
      target_id text CHECK (length(target_id) <= 128),
      address text CHECK (length(address) <= 64),
      before jsonb,
      after jsonb,
      details jsonb
    )`
  // No foreign key to users: the trail of an account outlives it, and nothing may cascade into the log.
  yield* sql`CREATE INDEX audit_events_subject ON audit_events (subject_user_id, id DESC) WHERE subject_user_id IS NOT NULL`
  yield* sql`CREATE INDEX audit_events_actor ON audit_events (actor_id, id DESC) WHERE actor_id IS NOT NULL`
  yield* sql`CREATE INDEX audit_events_action ON audit_events (action, id DESC)`
  yield* sql`
    CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
    END
    $$`
  yield* sql`
    CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events
      FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`
  yield* sql`
    CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
      FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`
  // The back-office's customer search: prefixes of e-mail, names, company and SIRET, case-insensitive.
  yield* sql`CREATE INDEX users_email_prefix ON users (lower(email) text_pattern_ops)`
  yield* sql`CREATE INDEX users_last_name_prefix ON users (lower(last_name) text_pattern_ops)`
  yield* sql`CREATE INDEX users_first_name_prefix ON users (lower(first_name) text_pattern_ops)`
  yield* sql`CREATE INDEX users_company_prefix ON users (lower(company_name) text_pattern_ops)`
  yield* sql`CREATE INDEX users_siret_prefix ON users (siret bpchar_pattern_ops)`
  yield* sql`CREATE INDEX users_staff ON users (role) WHERE role <> 'customer'`
})
