// The contract of the payment provider's calls to us: Stripe's webhook, authenticated by its signature alone.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, ServiceUnavailable } from "./ApiErrors.ts"

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
  .annotateMerge(OpenApi.annotations({ title: "Payments", description: "Notifications from the payment provider" }))
{}
