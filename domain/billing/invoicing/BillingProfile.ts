// Who is billed: the name or company and the billing address an invoice is addressed to, with the buyer's VAT number
// and the evidence of its last VIES check. Editable; an issued invoice keeps a copy of the profile it was made with.
import { Schema } from "effect"

/** ISO 3166-1 alpha-2, a code a region actually has (ZZ, XX… are refused). */
const regionNames = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" })
export const isCountryCode = (code: string): boolean =>
  /^[A-Z]{2}$/.test(code) && code !== "ZZ" && !code.startsWith("X") && regionNames.of(code) !== undefined

export const Address = Schema.Struct({
  line1: Schema.String,
  line2: Schema.NullOr(Schema.String),
  postcode: Schema.String,
  city: Schema.String,
  country: Schema.String
})
export type Address = typeof Address.Type

/** The evidence a VAT number was checked: VIES's answer, its consultation number when it gave one, and when. */
export const VatCheckRecord = Schema.Struct({
  status: Schema.Literals(["valid", "invalid", "unavailable"]),
  checkedAt: Schema.Date,
  /** VIES's request identifier (consultation number): quoted to a tax auditor as proof of the check. */
  requestIdentifier: Schema.NullOr(Schema.String),
  /** The name and address VIES holds for the number, as it answered them. */
  registeredName: Schema.NullOr(Schema.String),
  registeredAddress: Schema.NullOr(Schema.String)
})
export type VatCheckRecord = typeof VatCheckRecord.Type

export class BillingProfile extends Schema.Class<BillingProfile>("BillingProfile")({
  userId: Schema.String,
  /** The person's name (a consumer) or the contact's (a business). */
  name: Schema.String,
  companyName: Schema.NullOr(Schema.String),
  address: Address,
  /** Normalised, with its prefix (`BE0123456749`). */
  vatNumber: Schema.NullOr(Schema.String),
  vatCheck: Schema.NullOr(VatCheckRecord),
  updatedAt: Schema.Date
}) {}

/** What a customer sends (API.md § Invoices). */
export interface BillingProfileInput {
  readonly name: string
  readonly companyName?: string | undefined
  readonly address: {
    readonly line1: string
    readonly line2?: string | undefined
    readonly postcode: string
    readonly city: string
    readonly country: string
  }
  readonly vatNumber?: string | undefined
}
