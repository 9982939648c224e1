// Stripe's webhook: verified and recorded by billing; a refusal is logged without the payload.
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { receivePaymentNotification } from "../../domain/billing/paymentNotifications.ts"
import { Api } from "./Api.ts"
import { mapDomainErrors } from "./errorMapping.ts"

export const PaymentsHandlers = HttpApiBuilder.group(Api, "payments", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<Effect.Services<ReturnType<typeof receivePaymentNotification>>>()
  return handlers.handle("stripeWebhook", ({ headers, payload }) =>
    receivePaymentNotification({ payload, signature: headers["stripe-signature"] ?? "" }).pipe(
      Effect.tapError((e) =>
        Effect.logWarning(`Stripe webhook refused (${e._tag}); ${payload.byteLength} bytes, payload not logged`)
      ),
      Effect.map((receipt) => ({ received: true as const, ...receipt })),
      Effect.provideContext(services),
      mapDomainErrors
    ))
}))
