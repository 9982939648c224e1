// Which VAT an electronically supplied service bears, by who buys it and where (reference/billing-fr.md §2):
// a pure decision on the buyer, the VAT rules (configuration) and the year's cross-border consumer sales.
import { isEuCountry } from "./vatNumber.ts"

/** EN 16931 VAT category codes (BT-118): standard rate, reverse charge, outside the scope of VAT. */
export type VatCategory = "S" | "AE" | "O"

/** Rates as basis points (2000 = 20 %, 550 = 5.5 %): every computation stays in integers. */
export interface VatRules {
  /** The French standard rate. */
  readonly frenchRateBasisPoints: number
  /** The yearly cross-border consumer sales (excluding VAT) below which French VAT applies (€10,000). */
  readonly ossThresholdCents: number
  /** The standard rate of every other member state, by ISO country code. */
  readonly memberStateRates: ReadonlyMap<string, number>
}

/** What VIES said about the buyer's VAT number; `Unavailable` never blocks a sale. */
export type VatCheckOutcome = "valid" | "invalid" | "unavailable" | "none"

export interface VatBuyer {
  /** ISO 3166-1 alpha-2 of the billing address. */
  readonly country: string
  /** A professional account, or a customer who gave a VAT number: a business, not a consumer. */
  readonly business: boolean
  readonly vatCheck: VatCheckOutcome
}

/** The seller's cross-border consumer sales to other member states (excluding VAT), from issued invoices. */
export interface OssTotals {
  readonly currentYearCents: number
  readonly previousYearCents: number
}

/** Invoice mentions a decision requires, by code (the document prints them in the customer's language). */
export type VatMention = "reverse_charge" | "outside_scope"

export interface VatDecision {
  readonly category: VatCategory
  readonly rateBasisPoints: number
  /** The member state whose VAT is charged (FR, or the consumer's state above the OSS threshold); null when none. */
  readonly taxCountry: string | null
  readonly mentions: ReadonlyArray<VatMention>
  /** BT-121: the VATEX code of an exemption (reverse charge, outside scope). */
  readonly exemptionCode: string | null
  /** Both VAT numbers are printed (reverse charge, or a French business whose number VIES confirmed). */
  readonly printBuyerVatNumber: boolean
  /** A cross-border consumer sale within the EU: it counts towards the OSS threshold. */
  readonly countsTowardsOss: boolean
  /** VIES could not answer: VAT is charged now and the number is checked again before the next invoice. */
  readonly recheckVatNumber: boolean
}

/**
 * Whether the year's cross-border consumer sales can change `buyer`'s decision: only for a buyer taxed as a consumer in
 * another member state (`decideVat` reads them for no one else), so the totals are read only then.
 */
export const ossDecides = (buyer: VatBuyer): boolean =>
  buyer.country !== "FR" && isEuCountry(buyer.country) && !(buyer.business && buyer.vatCheck === "valid")

const none = { mentions: [], exemptionCode: null, printBuyerVatNumber: false, countsTowardsOss: false, recheckVatNumber: false }

/**
 * The decision for one sale of `amountExcludingVatCents`. Above the threshold means: the previous year's sales
 * exceeded it, or this year's exceed it with this sale (the sale that crosses it is already taxed where the
 * consumer lives: Directive 2006/112/EC art. 59c).
 */
export const decideVat = (
  buyer: VatBuyer,
  rules: VatRules,
  oss: OssTotals,
  amountExcludingVatCents: number
): VatDecision => {
  const french = { ...none, category: "S" as const, rateBasisPoints: rules.frenchRateBasisPoints, taxCountry: "FR" }
  if (buyer.country === "FR") return { ...french, printBuyerVatNumber: buyer.business && buyer.vatCheck === "valid" }
  if (!isEuCountry(buyer.country)) {
    return { ...none, category: "O", rateBasisPoints: 0, taxCountry: null, mentions: ["outside_scope"], exemptionCode: "VATEX-EU-O" }
  }
  if (buyer.business && buyer.vatCheck === "valid") {
    return {
      ...none,
      category: "AE",
      rateBasisPoints: 0,
      taxCountry: null,
      mentions: ["reverse_charge"],
      exemptionCode: "VATEX-EU-AE",
      printBuyerVatNumber: true
    }
  }
  // A consumer, or a business whose number VIES rejected or could not check: VAT as for a consumer.
  const recheckVatNumber = buyer.business && buyer.vatCheck === "unavailable"
  const above = oss.previousYearCents > rules.ossThresholdCents ||
    oss.currentYearCents + amountExcludingVatCents > rules.ossThresholdCents
  const destinationRate = rules.memberStateRates.get(buyer.country)
  if (above && destinationRate !== undefined) {
    return { ...french, rateBasisPoints: destinationRate, taxCountry: buyer.country, countsTowardsOss: true, recheckVatNumber }
  }
  return { ...french, countsTowardsOss: true, recheckVatNumber }
}
