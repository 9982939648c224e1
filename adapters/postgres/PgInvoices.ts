// Invoices in Postgres. A number is the next of its series' counter row, taken by an upsert that keeps the row locked
// until the issuing transaction ends: concurrent issues queue on it, a rollback gives the number back, and nothing
// else ever writes the table (a trigger refuses UPDATE, DELETE and TRUNCATE: migration 0013).
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { formatNumber, Invoice } from "../../domain/billing/invoicing/Invoice.ts"
import { Invoices } from "../../ports/Invoices.ts"
import { stored } from "./failures.ts"
import { fromRow, rowOf } from "./jsonRows.ts"

const toRow = rowOf(Invoice, ["lines", "vatBreakdown", "mentions", "seller", "buyer", "settlement"])
const toInvoice = fromRow(Invoice)

const Counter = Schema.Struct({ last_sequence: Schema.Int, last_issued_at: Schema.Date })
const decodeCounter = Schema.decodeUnknownEffect(Counter)
const Total = Schema.Struct({ total: Schema.NullOr(Schema.NumberFromString) })
const decodeTotal = Schema.decodeUnknownEffect(Total)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const many = (rows: ReadonlyArray<Record<string, unknown>>) => Effect.forEach(rows, toInvoice)
  const first = (rows: ReadonlyArray<Record<string, unknown>>) =>
    rows[0] === undefined ? Effect.succeedNone : Effect.map(toInvoice(rows[0]), Option.some)

  const issue = (draft: Omit<Invoice, "number">, series: string) =>
    Effect.gen(function*() {
      const [counter] = yield* sql`
        INSERT INTO invoice_series (series, last_sequence, last_issued_at) VALUES (${series}, 1, ${draft.issuedAt})
        ON CONFLICT (series) DO UPDATE
          SET last_sequence = invoice_series.last_sequence + 1,
              last_issued_at = GREATEST(invoice_series.last_issued_at, EXCLUDED.last_issued_at)
        RETURNING last_sequence, last_issued_at`
      const { last_issued_at, last_sequence } = yield* decodeCounter(counter)
      const invoice = new Invoice({ ...draft, number: formatNumber(series, last_sequence), issuedAt: last_issued_at })
      yield* sql`INSERT INTO invoices ${
        sql.insert({ ...toRow(invoice), series, sequence: last_sequence, series_year: Number(series.slice(1)) })
      }`
      return invoice
    }).pipe(
      // A savepoint inside the caller's transaction, a transaction of its own otherwise: never a number without
      // its document.
      sql.withTransaction,
      stored
    )

  return Invoices.of({
    issue,
    get: (id) => sql`SELECT * FROM invoices WHERE id = ${id}`.pipe(Effect.flatMap(first), stored),
    forLedgerEntry: (kind, reference) =>
      sql`SELECT * FROM invoices WHERE ledger_kind = ${kind} AND ledger_reference = ${reference}`.pipe(
        Effect.flatMap(first),
        stored
      ),
    forUser: (userId, after, limit) =>
      (after === null
        ? sql`SELECT * FROM invoices WHERE user_id = ${userId} ORDER BY issued_at DESC, id DESC LIMIT ${limit}`
        : sql`SELECT * FROM invoices WHERE user_id = ${userId} AND (issued_at, id) < (${after.issuedAt}, ${after.id})
              ORDER BY issued_at DESC, id DESC LIMIT ${limit}`).pipe(Effect.flatMap(many), stored),
    issuedBetween: (from, to) =>
      sql`SELECT * FROM invoices WHERE issued_at >= ${from} AND issued_at < ${to} ORDER BY issued_at, id`.pipe(
        Effect.flatMap(many),
        stored
      ),
    ossTotal: (year) =>
      sql`SELECT sum(CASE kind WHEN 'invoice' THEN total_excluding_vat_cents ELSE -total_excluding_vat_cents END)::text
                 AS total
          FROM invoices WHERE series_year = ${year} AND counts_towards_oss`.pipe(
        Effect.flatMap((rows) => decodeTotal(rows[0])),
        Effect.map((row) => row.total ?? 0),
        stored
      )
  })
})

export const layer = Layer.effect(Invoices, make)
