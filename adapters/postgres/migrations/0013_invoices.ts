// Billing profiles, and invoices and credit notes: numbered from one counter row per series (locked by the issuing
// transaction, so a number is never skipped or reused: a sequence would leave gaps), and refused any UPDATE, DELETE
// or TRUNCATE by the database itself (an issued invoice is corrected by a credit note, never changed).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE billing_profiles (
      user_id uuid PRIMARY KEY REFERENCES users (id),
      name text NOT NULL,
      company_name text,
      address jsonb NOT NULL,
      vat_number text,
      vat_check jsonb,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE invoice_series (
      series text PRIMARY KEY,
      last_sequence integer NOT NULL CHECK (last_sequence > 0),
      last_issued_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE invoices (
      id uuid PRIMARY KEY,
      -- No cascade: invoices are kept 10 years (Code de commerce L123-22), whatever happens to the account.
      user_id uuid NOT NULL REFERENCES users (id),
      kind text NOT NULL CHECK (kind IN ('invoice', 'credit_note')),
      series text NOT NULL REFERENCES invoice_series (series),
      sequence integer NOT NULL CHECK (sequence > 0),
      series_year integer NOT NULL,
      number text NOT NULL UNIQUE,
      issued_at timestamptz NOT NULL,
      corrects_invoice_id uuid REFERENCES invoices (id),
      corrects_number text,
      currency text NOT NULL CHECK (currency = 'EUR'),
      language text NOT NULL,
      period_start timestamptz,
      period_end timestamptz,
      lines jsonb NOT NULL,
      vat_breakdown jsonb NOT NULL,
      total_excluding_vat_cents integer NOT NULL CHECK (total_excluding_vat_cents >= 0),
      vat_cents integer NOT NULL CHECK (vat_cents >= 0),
      total_including_vat_cents integer NOT NULL CHECK (total_including_vat_cents = total_excluding_vat_cents + vat_cents),
      mentions jsonb NOT NULL,
      exemption_code text,
      tax_country text,
      counts_towards_oss boolean NOT NULL,
      seller jsonb NOT NULL,
      buyer jsonb NOT NULL,
      settlement jsonb NOT NULL,
      ledger_kind text NOT NULL CHECK (ledger_kind IN ('charge', 'refund')),
      ledger_reference text NOT NULL,
      subscription_id uuid,
      order_id uuid,
      UNIQUE (series, sequence),
      -- One document per payment or refund: a replayed ledger entry issues nothing more.
      UNIQUE (ledger_kind, ledger_reference),
      CHECK ((kind = 'credit_note') = (corrects_invoice_id IS NOT NULL)),
      CHECK ((kind = 'invoice') = (ledger_kind = 'charge'))
    )`
  yield* sql`CREATE INDEX invoices_user ON invoices (user_id, issued_at DESC, id DESC)`
  yield* sql`CREATE INDEX invoices_issued_at ON invoices (issued_at)`
  yield* sql`
    CREATE FUNCTION refuse_invoice_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'invoices are immutable: % refused on %, issue a credit note instead', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
    END
    $$`
  yield* sql`
    CREATE TRIGGER invoices_immutable BEFORE UPDATE OR DELETE ON invoices
    FOR EACH ROW EXECUTE FUNCTION refuse_invoice_change()`
  yield* sql`
    CREATE TRIGGER invoices_never_truncated BEFORE TRUNCATE ON invoices
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_invoice_change()`
})
