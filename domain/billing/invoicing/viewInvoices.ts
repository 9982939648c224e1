// A customer's invoices and credit notes: pages newest first (keyset: after the last one's issue date and id), one
// document, and its PDF or XML. Anyone else's document is InvoiceNotFound, as if it did not exist.
import { Effect, Option } from "effect"
import { InvoiceDocuments } from "../../../ports/InvoiceDocuments.ts"
import { type InvoiceCursor, Invoices } from "../../../ports/Invoices.ts"
import type { Invoice } from "./Invoice.ts"
import { InvoiceNotFound } from "./InvoicingErrors.ts"
import { decodeKeyset, encodeKeyset } from "../keyset.ts"

/** The cursor as the client holds it: opaque, `<issuedAt ISO>~<id>` in base64url (keyset.ts). */
export const encodeCursor = (invoice: Invoice): string => encodeKeyset(invoice.issuedAt, invoice.id)

/** A cursor the server did not make names no page: it is read as the first one. */
export const decodeCursor = (text: string | undefined): InvoiceCursor | null => {
  const key = decodeKeyset(text)
  return key === null ? null : { issuedAt: key.at, id: key.id }
}

export interface InvoicePage {
  readonly invoices: ReadonlyArray<Invoice>
  /** The cursor of the next page; null on the last one. */
  readonly next: string | null
}

export const listInvoices = Effect.fn("listInvoices")(function*(userId: string, after: string | undefined, limit: number) {
  // One more than asked says whether another page follows.
  const found = yield* (yield* Invoices).forUser(userId, decodeCursor(after), limit + 1)
  const invoices = found.slice(0, limit)
  const last = invoices[invoices.length - 1]
  return { invoices, next: found.length > limit && last !== undefined ? encodeCursor(last) : null } satisfies InvoicePage
})

export const ownedInvoice = Effect.fn("ownedInvoice")(function*(userId: string, invoiceId: string) {
  const found = yield* (yield* Invoices).get(invoiceId)
  if (Option.isNone(found) || found.value.userId !== userId) return yield* new InvoiceNotFound()
  return found.value
})

export const invoicePdf = (userId: string, invoiceId: string) =>
  Effect.flatMap(ownedInvoice(userId, invoiceId), (invoice) =>
    Effect.map(Effect.flatMap(InvoiceDocuments, (documents) => documents.pdf(invoice)), (pdf) => ({ invoice, pdf })))

export const invoiceXml = (userId: string, invoiceId: string) =>
  Effect.flatMap(ownedInvoice(userId, invoiceId), (invoice) =>
    Effect.map(Effect.flatMap(InvoiceDocuments, (documents) => documents.xml(invoice)), (xml) => ({ invoice, xml })))
