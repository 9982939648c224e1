// The contract of invoicing: the customer's billing profile, and their invoices and credit notes (JSON, Factur-X PDF,
// CII XML), owner only.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "./AccountsApi.ts"
import { Unprocessable } from "./ApiErrors.ts"
import { Line } from "./inputs.ts"
import { BillingProfileView } from "./views.ts"

const BillingProfileInput = Schema.Struct({
  name: Line(200),
  companyName: Schema.optionalKey(Line(200)),
  address: Schema.Struct({
    line1: Line(200),
    line2: Schema.optionalKey(Line(200)),
    postcode: Line(16),
    city: Line(100),
    country: Line(2)
  }),
  vatNumber: Schema.optionalKey(Line(20))
})

export class BillingProfileApi extends HttpApiGroup.make("billingProfile")
  .add(
    HttpApiEndpoint.get("get", "/", { success: BillingProfileView }),
    HttpApiEndpoint.put("save", "/", { payload: BillingProfileInput, success: BillingProfileView, error: Unprocessable })
  )
  .middleware(Authentication)
  .prefix("/api/billing-profile")
  .annotateMerge(OpenApi.annotations({
    title: "Billing profile",
    description: "Who invoices are addressed to: name or company, billing address, EU VAT number (checked with VIES). " +
      "Before the first save, GET answers a prefill (`saved: false`): for a professional account the registry's " +
      "company name and head office, and the French VAT number of its SIREN."
  }))
{}
