// The contract of invoicing: the customer's billing profile, and their invoices and credit notes (JSON, Factur-X PDF,
// CII XML), owner only.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./AccountsApi.ts"
import { NotFound, Unprocessable } from "./ApiErrors.ts"
import { missingAnswers } from "./errorMapping.ts"
import { Line, MissingAnswer, PageQuery, PathId } from "./inputs.ts"
import { BillingProfileView, InvoiceView } from "./views.ts"

const BillingProfileInput = Schema.Struct({
  name: Line(200),
  companyName: Schema.optionalKey(Line(200)),
  address: Schema.Struct({
    line1: Line(200),
    line2: Schema.optionalKey(Line(200)),
    postcode: Line(16),
    city: Line(100),
    // ISO 3166-1 alpha-2, checked by the domain (422 BILLING_PROFILE_INVALID naming the field).
    country: Line(64)
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

const InvoicePage = Schema.Struct({
  invoices: Schema.Array(InvoiceView),
  /** Pass as `after` for the next (older) page; absent on the last one. */
  next: Schema.optionalKey(Schema.String)
})

export class InvoicesApi extends HttpApiGroup.make("invoices")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: PageQuery,
      success: InvoicePage
    }),
    HttpApiEndpoint.get("get", "/:id", { params: { id: PathId }, success: InvoiceView, error: NotFound }),
    HttpApiEndpoint.get("pdf", "/:id/pdf", {
      params: { id: PathId },
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/pdf" })),
      error: NotFound
    }),
    HttpApiEndpoint.get("xml", "/:id/xml", {
      params: { id: PathId },
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/xml" })),
      error: NotFound
    })
  )
  .middleware(Authentication)
  .annotate(MissingAnswer, missingAnswers.invoice)
  .prefix("/api/invoices")
  .annotateMerge(OpenApi.annotations({
    title: "Invoices",
    description: "The customer's invoices and credit notes, newest first (20 a page unless `limit`, at most 100), and " +
      "each as its Factur-X PDF (PDF/A-3 with the CII XML attached) or the CII XML alone. Another customer's is 404."
  }))
{}
