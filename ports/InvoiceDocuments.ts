// An issued invoice or credit note as documents: the CII XML of EN 16931, and the Factur-X PDF (PDF/A-3 carrying that
// XML), in the customer's language. Rendering an issued document cannot fail for a reason the customer could fix: a
// failure is a defect.
import { Context, type Effect } from "effect"
import type { Invoice } from "../domain/billing/invoicing/Invoice.ts"

export class InvoiceDocuments extends Context.Service<InvoiceDocuments, {
  xml(invoice: Invoice): Effect.Effect<string>
  pdf(invoice: Invoice): Effect.Effect<Uint8Array>
}>()("zh/ports/InvoiceDocuments") {}
