// The contract of payments: the customer's saved card and the page to change it; the payment provider's calls to us
// (Stripe's webhook, authenticated by its signature alone).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./AccountsApi.ts"
import { BadRequest, NotFound, ServiceUnavailable } from "./ApiErrors.ts"
import { PageQuery } from "./inputs.ts"
import { PaymentView, SavedCardView } from "./views.ts"

export class PaymentsApi extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.post("stripeWebhook", "/stripe/webhook", {
      // The exact bytes: the signature covers them, so the body is never parsed before it is verified.
      payload: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/json" })),
      headers: Schema.Struct({ "stripe-signature": Schema.optionalKey(Schema.String) }),
      success: Schema.Struct({ received: Schema.Literal(true), ignored: Schema.Boolean, duplicate: Schema.Boolean }),
      error: [BadRequest, ServiceUnavailable]
    }).annotateMerge(OpenApi.annotations({
      description: "Stripe's events, verified with the `Stripe-Signature` header (300 s tolerance); " +
        "400 WEBHOOK_SIGNATURE_INVALID otherwise. A verified event of a type not handled is answered 200 and ignored."
    }))
  )
  .prefix("/api/payments")
  .annotateMerge(OpenApi.annotations({ title: "Payment provider", description: "Notifications from the payment provider" }))
{}

export class PaymentMethodApi extends HttpApiGroup.make("paymentMethod")
  .add(
    HttpApiEndpoint.get("get", "/", { success: SavedCardView, error: [NotFound, ServiceUnavailable] }),
    HttpApiEndpoint.post("update", "/update", {
      success: Schema.Struct({ url: Schema.String }),
      error: ServiceUnavailable
    })
  )
  .middleware(Authentication)
  .prefix("/api/payment-method")
  .annotateMerge(OpenApi.annotations({
    title: "Payment method",
    description: "The saved card (brand, last 4 digits, expiry) and the payment provider's page to change it"
  }))
{}

export class PaymentHistoryApi extends HttpApiGroup.make("paymentHistory")
  .add(HttpApiEndpoint.get("list", "/", {
    query: PageQuery,
    success: Schema.Struct({
      payments: Schema.Array(PaymentView),
      /** Pass as `after` for the next (older) page; absent on the last one. */
      next: Schema.optionalKey(Schema.String)
    })
  }))
  .middleware(Authentication)
  .prefix("/api/payments")
  .annotateMerge(OpenApi.annotations({
    title: "Payments",
    description: "The customer's charges and refunds, newest first, 100 a page unless `limit` says fewer; `next` is the cursor of the following page (pass it as `after`)"
  }))
{}
