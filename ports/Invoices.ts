// Issued invoices and credit notes: numbered in the caller's transaction, never changed afterwards.
import { Context, type Effect, type Option } from "effect"
import type { Invoice, InvoiceDraft } from "../domain/billing/invoicing/Invoice.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

/** Where a page of a customer's documents starts: after this one (newest first). */
export interface InvoiceCursor {
  readonly issuedAt: Date
  readonly id: string
}

export class Invoices extends Context.Service<Invoices, {
  /**
   * Takes the next number of the draft's series (gapless: the counter is locked until the caller's transaction
   * ends, and rolled back with it) and stores the document. The issue date never goes back within a series: a draft
   * dated before the last one issued takes the last one's date.
   */
  issue(draft: InvoiceDraft, series: string): Effect.Effect<Invoice, DatabaseUnavailable>
  get(id: string): Effect.Effect<Option.Option<Invoice>, DatabaseUnavailable>
  /** The document recording a ledger entry, if one was issued. */
  forLedgerEntry(kind: "charge" | "refund", reference: string): Effect.Effect<Option.Option<Invoice>, DatabaseUnavailable>
  /** A customer's documents, newest first, `limit` of them after `after`. */
  forUser(userId: string, after: InvoiceCursor | null, limit: number): Effect.Effect<ReadonlyArray<Invoice>, DatabaseUnavailable>
  /** Every document issued in [from, to), oldest first (the accountant's export). */
  issuedBetween(from: Date, to: Date): Effect.Effect<ReadonlyArray<Invoice>, DatabaseUnavailable>
  /** The cross-border consumer sales (excluding VAT) of a calendar year: invoices minus credit notes. */
  ossTotal(year: number): Effect.Effect<number, DatabaseUnavailable>
}>()("zh/ports/Invoices") {}
