// What can go wrong with billing profiles and invoices, in the customer's terms.
import { Schema } from "effect"

export class InvalidBillingProfile extends Schema.TaggedError<InvalidBillingProfile>()("InvalidBillingProfile", {
  field: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `${this.field}: ${this.problem}`
  }
}

export class InvalidVatNumber extends Schema.TaggedError<InvalidVatNumber>()("InvalidVatNumber", {}) {
  override get message() {
    return "The VAT number must be an EU VAT number of the billing address's country (such as BE0123456749)."
  }
}

export class BillingProfileRequired extends Schema.TaggedError<BillingProfileRequired>()("BillingProfileRequired", {}) {
  override get message() {
    return "Fill in your billing details (name and billing address) before the first payment."
  }
}

export class InvoiceNotFound extends Schema.TaggedError<InvoiceNotFound>()("InvoiceNotFound", {}) {
  override get message() {
    return "No such invoice."
  }
}
