// Builds documents and charges for the invoicing suites: a French consumer's month of VPS S unless a test says more.
import { randomUUID } from "node:crypto"
import type { LedgerEntry } from "../../domain/billing/Billing.ts"
import { BillingProfile } from "../../domain/billing/invoicing/BillingProfile.ts"
import { type InvoiceDraft, InvoiceId } from "../../domain/billing/invoicing/Invoice.ts"
import { demoSeller } from "../../domain/billing/invoicing/Seller.ts"

/** A draft invoice of `userId` for a 10.00 € month at 20 %, recording charge `ch_<random>`. */
export const invoiceDraft = (userId: string, overrides: Partial<InvoiceDraft> = {}): InvoiceDraft => ({
  id: InvoiceId.make(randomUUID()),
  userId,
  kind: "invoice",
  issuedAt: new Date("2026-03-01T10:00:00.000Z"),
  correctsInvoiceId: null,
  correctsNumber: null,
  currency: "EUR",
  language: "fr",
  periodStart: new Date("2026-03-01T10:00:00.000Z"),
  periodEnd: new Date("2026-04-01T10:00:00.000Z"),
  lines: [{ description: "VPS S", quantity: 1, unitPriceExcludingVatCents: 1000, vatCategory: "S", vatRateBasisPoints: 2000, totalExcludingVatCents: 1000 }],
  vatBreakdown: [{ vatCategory: "S", vatRateBasisPoints: 2000, baseCents: 1000, vatCents: 200 }],
  totalExcludingVatCents: 1000,
  vatCents: 200,
  totalIncludingVatCents: 1200,
  mentions: [],
  exemptionCode: null,
  taxCountry: "FR",
  countsTowardsOss: false,
  seller: demoSeller,
  buyer: {
    name: "Ada Lovelace",
    companyName: null,
    address: { line1: "1 rue de la Paix", line2: null, postcode: "75002", city: "Paris", country: "FR" },
    vatNumber: null,
    siren: null,
    business: false,
    email: "ada@example.com"
  },
  settlement: { at: new Date("2026-03-01T10:00:00.000Z"), means: "card", reference: `ch_${randomUUID()}` },
  ledgerKind: "charge",
  ledgerReference: `ch_${randomUUID()}`,
  subscriptionId: null,
  orderId: null,
  ...overrides
})

/** A charge of `userId` outside any order (the ledger's foreign keys allow it). */
export const chargeEntry = (userId: string, overrides: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id: randomUUID(),
  userId,
  subscriptionId: null,
  orderId: null,
  kind: "charge",
  amountCents: 1200,
  reference: `ch_${randomUUID()}`,
  createdAt: new Date("2026-03-01T10:00:00.000Z"),
  ...overrides
})

/** A saved billing profile in `country` (a consumer unless a VAT number is given). */
export const profileIn = (userId: string, country: string, overrides: Partial<BillingProfile> = {}) =>
  new BillingProfile({
    userId,
    name: "Ada Lovelace",
    companyName: null,
    address: { line1: "1 Main Street", line2: null, postcode: "1000", city: "Capital", country },
    vatNumber: null,
    vatCheck: null,
    updatedAt: new Date("2026-01-01T00:00:00.000Z"),
    ...overrides
  })
