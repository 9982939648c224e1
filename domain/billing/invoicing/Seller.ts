// The seller's identity printed on every invoice (reference/billing-fr.md §1): configuration, validated at start.
import { Schema } from "effect"
import { Address } from "./BillingProfile.ts"

const Text = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(300))

export const Seller = Schema.Struct({
  companyName: Text,
  /** "SAS", "SARL"… */
  legalForm: Text,
  shareCapitalCents: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  address: Address,
  siren: Schema.String.check(Schema.isPattern(/^\d{9}$/)),
  siret: Schema.String.check(Schema.isPattern(/^\d{14}$/)),
  /** "RCS Paris 123 456 789". */
  rcs: Text,
  vatNumber: Schema.String.check(Schema.isPattern(/^FR[0-9A-Z]{2}\d{9}$/)),
  /** "Option pour le paiement de la taxe d'après les débits". */
  vatOnDebits: Schema.Boolean,
  /** As printed: "3 × the legal interest rate", "10 % per year"… */
  latePaymentPenaltyRate: Text,
  mediator: Schema.Struct({ name: Text, url: Text }),
  legalPages: Schema.Struct({ legalNotice: Text, termsOfSale: Text, privacy: Text }),
  email: Text
})
export type Seller = typeof Seller.Type

/** The seller of sandbox mode: visibly fictitious, and consistent (its SIRET, SIREN and VAT number agree). */
export const demoSeller: Seller = {
  companyName: "ZH Hosting DÉMO (fictif)",
  legalForm: "SAS",
  shareCapitalCents: 1_000_000,
  address: { line1: "1 rue de l'Exemple", line2: null, postcode: "75001", city: "Paris", country: "FR" },
  siren: "000000097",
  siret: "00000009700012",
  rcs: "RCS Paris 000 000 097 (démo)",
  vatNumber: "FR12000000097",
  vatOnDebits: false,
  latePaymentPenaltyRate: "3 × le taux d'intérêt légal / 3 × the French legal interest rate",
  mediator: { name: "Médiateur démo", url: "https://mediateur.example" },
  legalPages: {
    legalNotice: "/legal/notice",
    termsOfSale: "/legal/terms",
    privacy: "/legal/privacy"
  },
  email: "billing@zh.invalid"
}
