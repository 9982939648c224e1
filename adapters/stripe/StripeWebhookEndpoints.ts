// Registering the platform's webhook endpoint with Stripe (an operator's command, not a billing operation): the
// endpoint listens to the events billing handles, and Stripe answers its signing secret once, at creation.
import { Effect, Redacted } from "effect"
import Stripe from "stripe"
import { PaymentUnavailable } from "../../ports/PaymentGateway.ts"
import { HANDLED_EVENTS } from "./notifications.ts"
import type { StripeApi } from "./StripePaymentGateway.ts"

export const registerWebhookEndpoint = (request: {
  readonly secretKey: Redacted.Redacted<string>
  readonly api?: StripeApi | undefined
  readonly url: string
}) =>
  Effect.tryPromise({
    try: () =>
      new Stripe(Redacted.value(request.secretKey), { ...request.api, maxNetworkRetries: 2, telemetry: false }).webhookEndpoints.create({
        url: request.url,
        enabled_events: [...HANDLED_EVENTS],
        description: "ZH hosting platform"
      }),
    catch: (e) => e
  }).pipe(
    Effect.flatMap((endpoint) =>
      endpoint.secret === undefined
        ? Effect.fail(new PaymentUnavailable())
        : Effect.succeed({ id: endpoint.id, secret: Redacted.make(endpoint.secret) })
    ),
    Effect.catch((e) =>
      Effect.andThen(
        Effect.logError(`Stripe webhook registration failed: ${e instanceof Stripe.errors.StripeError ? `${e.type} ${e.code ?? ""}` : "unexpected failure"}`),
        Effect.fail(new PaymentUnavailable())
      )
    )
  )
