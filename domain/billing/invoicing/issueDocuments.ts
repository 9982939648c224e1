// What a customer is charged (a quote: prices excluding VAT, the VAT their profile calls for), and the documents that
// record money moving: an invoice with every charge, a credit note with every refund, each issued in the same
// transaction as its ledger entry and only when that entry is new (a replayed payment issues nothing more).
import { Clock, Effect, Option } from "effect"
import { SecureRandom } from "effect/crypto"
import { type User, UserId } from "../../account/User.ts"
import { BillingProfiles } from "../../../ports/BillingProfiles.ts"
import { Invoices } from "../../../ports/Invoices.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { Users } from "../../../ports/Users.ts"
import type { LedgerEntry } from "../Billing.ts"
import { computeAmounts, type InvoiceAmounts } from "./amounts.ts"
import { amountsFromTotal } from "./amountsFromTotal.ts"
import { BillingProfile } from "./BillingProfile.ts"
import { type Buyer, type Invoice, InvoiceId, seriesOf } from "./Invoice.ts"
import { BillingProfileRequired } from "./InvoicingErrors.ts"
import { InvoicingSettings } from "./InvoicingSettings.ts"
import { recheckVatNumber } from "./manageBillingProfile.ts"
import { decideVat, ossDecides, type OssTotals, type VatBuyer, type VatDecision, type VatRules } from "./vatDecision.ts"

/** One thing sold, priced excluding VAT (a plan's month: `priceCents` is stored excluding VAT). */
export interface ChargeLine {
  readonly description: string
  readonly quantity: number
  readonly unitPriceExcludingVatCents: number
}

/** The price of a sale for one customer: charge `amounts.totalIncludingVatCents`, then record it with this quote. */
export interface Quote {
  readonly user: User
  readonly profile: BillingProfile
  readonly decision: VatDecision
  readonly amounts: InvoiceAmounts
  readonly period: { readonly start: Date; readonly end: Date } | null
}

const parisYear = (at: Date) =>
  Number(new Intl.DateTimeFormat("en", { timeZone: "Europe/Paris", year: "numeric" }).format(at))

export interface QuoteOptions {
  /**
   * A charge the customer already agreed to (a renewal, a payment being settled): a customer without a billing profile
   * (a subscription from before invoicing) is billed under their account's name (`accountProfile`), never refused.
   */
  readonly agreed?: boolean
  /** VIES is asked again about a number it could not check before (false inside a transaction). Default true. */
  readonly recheckVat?: boolean
}

/**
 * What an invoice names when the customer never filled in a billing profile: the account's name (and company), the
 * country France (the only one an account without a profile can be placed in: registration is French), no address.
 */
export const accountProfile = (user: User, at: Date) =>
  new BillingProfile({
    userId: user.id,
    name: `${user.firstName} ${user.lastName}`,
    companyName: user.companyName,
    address: { line1: "", line2: null, postcode: "", city: "", country: "FR" },
    vatNumber: null,
    vatCheck: null,
    updatedAt: at
  })

/**
 * Prices `lines` for `user`: the billing profile is required for a new sale (an invoice needs the billing address), a
 * VAT number VIES could not check before is checked again, and the year's cross-border consumer sales decide the OSS
 * rate.
 */
export const quoteCharge = Effect.fn("quoteCharge")(function*(
  user: User,
  lines: ReadonlyArray<ChargeLine>,
  period: Quote["period"] = null,
  options: QuoteOptions = {}
) {
  const at = new Date(yield* Clock.currentTimeMillis)
  const stored = yield* (yield* BillingProfiles).get(user.id)
  if (Option.isNone(stored) && options.agreed !== true) return yield* new BillingProfileRequired()
  const profile = Option.isNone(stored)
    ? accountProfile(user, at)
    : options.recheckVat === false
    ? stored.value
    : yield* recheckVatNumber(stored.value)
  const buyer = buyerOf(user, profile)
  const { amounts, decision } = priceWith(yield* vatContext(buyer), buyer, lines)
  return { user, profile, decision, amounts, period } satisfies Quote
})

const noOss: OssTotals = { currentYearCents: 0, previousYearCents: 0 }

/**
 * The VAT rules and the year's cross-border consumer sales a sale to `buyer` now is decided by, read once for many
 * prices; the sales only when they can change the decision (`ossDecides`: not for a French customer).
 */
export const vatContext = Effect.fn("vatContext")(function*(buyer: VatBuyer) {
  const { vatRules } = yield* InvoicingSettings
  if (!ossDecides(buyer)) return { rules: vatRules, oss: noOss }
  const invoices = yield* Invoices
  const year = parisYear(new Date(yield* Clock.currentTimeMillis))
  return {
    rules: vatRules,
    oss: { currentYearCents: yield* invoices.ossTotal(year), previousYearCents: yield* invoices.ossTotal(year - 1) }
  }
})

/** The buyer a VAT decision reads: a professional account, or a customer who gave a VAT number, is a business. */
export const buyerOf = (user: User, profile: BillingProfile): VatBuyer => ({
  country: profile.address.country,
  business: user.accountType === "professional" || profile.vatNumber !== null,
  vatCheck: profile.vatCheck?.status ?? "none"
})

/**
 * A visitor who is not signed in, or a customer whose billing profile is not filled in yet: a French consumer, as
 * registration is French and an account without a profile is invoiced in France (`accountProfile`).
 */
export const frenchConsumer: VatBuyer = { country: "FR", business: false, vatCheck: "none" }

/** The decision and the amounts of `lines` for `buyer`: pure, the same arithmetic for a price shown and a charge. */
export const priceWith = (
  context: { readonly rules: VatRules; readonly oss: OssTotals },
  buyer: VatBuyer,
  lines: ReadonlyArray<ChargeLine>
) => {
  const amount = lines.reduce((sum, line) => sum + line.quantity * line.unitPriceExcludingVatCents, 0)
  const decision = decideVat(buyer, context.rules, context.oss, amount)
  const amounts = computeAmounts(lines.map((line) => ({
    ...line,
    vatCategory: decision.category,
    vatRateBasisPoints: decision.rateBasisPoints
  })))
  return { decision, amounts }
}

/** A plan's month for `user`: what to charge (excluding VAT, VAT, total) and the quote to record the charge with. */
export const quotePlanMonth = (
  user: User,
  plan: { readonly name: string; readonly priceCents: number },
  period: { readonly start: Date; readonly end: Date },
  options: QuoteOptions = {}
) =>
  quoteCharge(user, [{ description: plan.name, quantity: 1, unitPriceExcludingVatCents: plan.priceCents }], period, options)

/** The account `userId` charges are billed to (a ledger entry always names an existing user). */
export const billedUser = Effect.fn("billedUser")(function*(userId: string) {
  const user = yield* (yield* Users).findById(UserId.make(userId))
  if (Option.isNone(user)) return yield* Effect.die(new Error(`user ${userId} is billed but does not exist`))
  return user.value
})

const invoiceBuyerOf = (quote: Quote): Buyer => ({
  name: quote.profile.name,
  companyName: quote.profile.companyName,
  address: quote.profile.address,
  vatNumber: quote.decision.printBuyerVatNumber ? quote.profile.vatNumber : null,
  siren: quote.user.accountType === "professional" && quote.user.siret !== null ? quote.user.siret.slice(0, 9) : null,
  business: quote.user.accountType === "professional" || quote.profile.vatNumber !== null,
  email: quote.user.email
})

/**
 * The charge in the ledger and its invoice, in the caller's transaction (run it inside `UnitOfWork.transaction` with
 * the rest of the payment). A replayed charge records and issues nothing and answers the invoice already issued.
 * The invoice states what was taken: a charge that differs from the quote (an amount priced before VAT existed) is
 * invoiced as its total including VAT, under the quote's VAT.
 */
export const recordCharge = Effect.fn("recordCharge")(function*(entry: LedgerEntry, quote: Quote) {
  const invoices = yield* Invoices
  if (!(yield* (yield* Ledger).record(entry))) return yield* invoices.forLedgerEntry("charge", entry.reference)
  const { decision } = quote
  let amounts = quote.amounts
  if (amounts.totalIncludingVatCents !== entry.amountCents) {
    yield* Effect.logWarning(
      `charge ${entry.reference} of ${entry.amountCents} cents does not match its quote (${amounts.totalIncludingVatCents}): invoiced as charged`
    )
    amounts = amountsFromTotal(amounts.lines.map((l) => l.description).join(", "), entry.amountCents, decision.category, decision.rateBasisPoints)
  }
  const { seller } = yield* InvoicingSettings
  const draft = {
    id: InvoiceId.make(yield* (yield* SecureRandom.SecureRandom).uuidV4()),
    userId: entry.userId,
    kind: "invoice" as const,
    issuedAt: entry.createdAt,
    correctsInvoiceId: null,
    correctsNumber: null,
    currency: "EUR" as const,
    language: quote.user.language,
    periodStart: quote.period?.start ?? null,
    periodEnd: quote.period?.end ?? null,
    ...amounts,
    mentions: decision.mentions,
    exemptionCode: decision.exemptionCode,
    taxCountry: decision.taxCountry,
    countsTowardsOss: decision.countsTowardsOss,
    seller,
    buyer: invoiceBuyerOf(quote),
    settlement: { at: entry.createdAt, means: "card" as const, reference: entry.reference },
    ledgerKind: "charge" as const,
    ledgerReference: entry.reference,
    subscriptionId: entry.subscriptionId,
    orderId: entry.orderId
  }
  return Option.some(yield* invoices.issue(draft, seriesOf("invoice", draft.issuedAt)))
})

/** The lines of a credit note giving back `refundedCents` of `invoice`: all of it, or a part as one line. */
const creditedAmounts = (invoice: Invoice, refundedCents: number): InvoiceAmounts => {
  if (refundedCents === invoice.totalIncludingVatCents) return invoice
  const rate = invoice.vatBreakdown[0]!
  const label = invoice.language === "fr" ? `Remboursement partiel de la facture ${invoice.number}` : `Partial refund of invoice ${invoice.number}`
  return amountsFromTotal(label, refundedCents, rate.vatCategory, rate.vatRateBasisPoints)
}

/**
 * The refund in the ledger and its credit note (series `A`), in the caller's transaction. `chargeReference` names the
 * charge refunded; its invoice is the one the credit note corrects, and gives it its buyer, seller and VAT. A charge
 * recorded before invoicing existed has no invoice: the refund is recorded without a credit note.
 */
export const recordRefund = Effect.fn("recordRefund")(function*(entry: LedgerEntry, chargeReference: string) {
  const invoices = yield* Invoices
  if (!(yield* (yield* Ledger).record(entry))) return yield* invoices.forLedgerEntry("refund", entry.reference)
  const corrected = yield* invoices.forLedgerEntry("charge", chargeReference)
  if (Option.isNone(corrected)) {
    yield* Effect.logWarning(`refund ${entry.reference}: charge ${chargeReference} has no invoice, so no credit note`)
    return Option.none<Invoice>()
  }
  const invoice = corrected.value
  if (entry.amountCents > invoice.totalIncludingVatCents || entry.userId !== invoice.userId) {
    return yield* Effect.die(`refund ${entry.reference} of ${entry.amountCents} cents does not fit invoice ${invoice.number}`)
  }
  const amounts = creditedAmounts(invoice, entry.amountCents)
  const draft = {
    ...invoice,
    id: InvoiceId.make(yield* (yield* SecureRandom.SecureRandom).uuidV4()),
    kind: "credit_note" as const,
    issuedAt: entry.createdAt,
    correctsInvoiceId: invoice.id,
    correctsNumber: invoice.number,
    // The seller as it is now; the buyer as the corrected invoice named them.
    seller: (yield* InvoicingSettings).seller,
    lines: amounts.lines,
    vatBreakdown: amounts.vatBreakdown,
    totalExcludingVatCents: amounts.totalExcludingVatCents,
    vatCents: amounts.vatCents,
    totalIncludingVatCents: amounts.totalIncludingVatCents,
    settlement: { at: entry.createdAt, means: "card" as const, reference: entry.reference },
    ledgerKind: "refund" as const,
    ledgerReference: entry.reference
  }
  return Option.some(yield* invoices.issue(draft, seriesOf("credit_note", draft.issuedAt)))
})
