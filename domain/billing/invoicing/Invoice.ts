// Invoices and credit notes as issued: immutable documents modelled on EN 16931's business terms (BT-/BG-), with a
// copy of the seller and of the buyer as they were, numbered in one gapless series per kind and per year.
import { Schema } from "effect"
import { Language } from "../../account/User.ts"
import { Address } from "./BillingProfile.ts"
import { Seller } from "./Seller.ts"

export const InvoiceId = Schema.String.pipe(Schema.brand("InvoiceId"))
export type InvoiceId = typeof InvoiceId.Type

/** BT-3: 380 commercial invoice, 381 credit note. */
export const InvoiceKind = Schema.Literals(["invoice", "credit_note"])
export type InvoiceKind = typeof InvoiceKind.Type

export const VatCategory = Schema.Literals(["S", "AE", "O"])

/** BG-25: one line (BT-153 name, BT-129 quantity, BT-146 net price, BT-151/152 VAT, BT-131 net amount). */
export const InvoiceLine = Schema.Struct({
  description: Schema.String,
  quantity: Schema.Int,
  unitPriceExcludingVatCents: Schema.Int,
  vatCategory: VatCategory,
  vatRateBasisPoints: Schema.Int,
  totalExcludingVatCents: Schema.Int
})
export type InvoiceLine = typeof InvoiceLine.Type

/** BG-23: VAT per category and rate (BT-116 base, BT-117 amount). */
export const VatBreakdown = Schema.Struct({
  vatCategory: VatCategory,
  vatRateBasisPoints: Schema.Int,
  baseCents: Schema.Int,
  vatCents: Schema.Int
})

/** BG-7 as issued: the billing profile then, and what the seller must print about a business (its SIREN, BT-47). */
export const Buyer = Schema.Struct({
  name: Schema.String,
  companyName: Schema.NullOr(Schema.String),
  address: Address,
  /** BT-48, printed only when the VAT decision requires it (reverse charge, or a confirmed French number). */
  vatNumber: Schema.NullOr(Schema.String),
  /** BT-47: the SIREN of a French business (Décret 2022-1299). */
  siren: Schema.NullOr(Schema.String),
  business: Schema.Boolean,
  email: Schema.String
})
export type Buyer = typeof Buyer.Type

/** BG-16 / "payée le … par carte": when and how it was paid, or refunded for a credit note. */
export const Settlement = Schema.Struct({
  at: Schema.Date,
  means: Schema.Literal("card"),
  /** The gateway's reference of the charge or refund. */
  reference: Schema.String
})

export const VatMention = Schema.Literals(["reverse_charge", "outside_scope"])

export class Invoice extends Schema.Class<Invoice>("Invoice")({
  id: InvoiceId,
  userId: Schema.String,
  kind: InvoiceKind,
  /** BT-1: `F2026-000123`, `A2026-000007`. */
  number: Schema.String,
  /** BT-2. */
  issuedAt: Schema.Date,
  /** BT-25: the invoice a credit note corrects, and its number. */
  correctsInvoiceId: Schema.NullOr(InvoiceId),
  correctsNumber: Schema.NullOr(Schema.String),
  /** BT-5. */
  currency: Schema.Literal("EUR"),
  language: Language,
  /** BG-14: the period of service invoiced. */
  periodStart: Schema.NullOr(Schema.Date),
  periodEnd: Schema.NullOr(Schema.Date),
  lines: Schema.Array(InvoiceLine),
  vatBreakdown: Schema.Array(VatBreakdown),
  totalExcludingVatCents: Schema.Int,
  vatCents: Schema.Int,
  totalIncludingVatCents: Schema.Int,
  mentions: Schema.Array(VatMention),
  /** BT-121. */
  exemptionCode: Schema.NullOr(Schema.String),
  /** The member state whose VAT is charged; null when none is. */
  taxCountry: Schema.NullOr(Schema.String),
  /** A cross-border consumer sale within the EU: counted in the OSS total. */
  countsTowardsOss: Schema.Boolean,
  seller: Seller,
  buyer: Buyer,
  settlement: Settlement,
  /** The ledger entry this document records (one document per entry). */
  ledgerKind: Schema.Literals(["charge", "refund"]),
  ledgerReference: Schema.String,
  subscriptionId: Schema.NullOr(Schema.String),
  orderId: Schema.NullOr(Schema.String)
}) {}

/** What the issuing code hands to the repository: everything but the number, allocated in the same transaction. */
export type InvoiceDraft = Omit<Invoice, "number">

/** `F` for invoices, `A` (avoir) for credit notes. */
export const seriesPrefix = (kind: InvoiceKind): string => kind === "invoice" ? "F" : "A"

/** The series of a document: its kind and the calendar year of its issue in France (Europe/Paris). */
export const seriesOf = (kind: InvoiceKind, issuedAt: Date): string => {
  const year = new Intl.DateTimeFormat("en", { timeZone: "Europe/Paris", year: "numeric" }).format(issuedAt)
  return `${seriesPrefix(kind)}${year}`
}

export const formatNumber = (series: string, sequence: number): string => `${series}-${String(sequence).padStart(6, "0")}`
