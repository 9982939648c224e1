// Stripe's keys as sealed upstream secrets (reference/stripe.md § Keys): the secret key (a restricted key is the
// recommended one), the webhook endpoint's secret, and the previous one, still accepted while a rotation is under way.
import { Effect, Option, type Redacted } from "effect"
import type { StripeCredentials } from "../adapters/stripe/StripePaymentGateway.ts"
import { readSecret, storeSecret } from "../domain/secrets/UpstreamCredentials.ts"
import { UpstreamSecrets } from "../ports/UpstreamSecrets.ts"

export const SECRET_KEY = "stripe:secret-key"
export const WEBHOOK_SECRET = "stripe:webhook-secret"
export const PREVIOUS_WEBHOOK_SECRET = "stripe:webhook-secret:previous"

/** A stored secret's value, none when it is not stored; one that does not open is logged (by name) and skipped. */
const optional = (name: string) =>
  readSecret(name).pipe(
    Effect.map(Option.some),
    Effect.catchTag("SecretNotFound", () => Effect.succeedNone),
    Effect.catch((e) => Effect.as(Effect.logError(`The secret "${name}" cannot be opened: ${e._tag}`), Option.none()))
  )

/** The keys now: none until the secret key is stored (the gateway is then not configured). */
export const stripeCredentials = Effect.gen(function*() {
  const secretKey = yield* optional(SECRET_KEY)
  if (Option.isNone(secretKey)) return Option.none<StripeCredentials>()
  const webhookSecrets = [yield* optional(WEBHOOK_SECRET), yield* optional(PREVIOUS_WEBHOOK_SECRET)].flatMap(Option.toArray)
  return Option.some<StripeCredentials>({ secretKey: secretKey.value, webhookSecrets })
})

/** A new endpoint secret becomes the current one; the current one stays accepted as the previous one. */
export const rotateWebhookSecret = Effect.fn("rotateWebhookSecret")(function*(secret: Redacted.Redacted<string>) {
  const secrets = yield* UpstreamSecrets
  const current = yield* secrets.get(WEBHOOK_SECRET)
  if (Option.isSome(current)) {
    // The sealed value is bound to its name: open it and seal it again under the previous one's name.
    yield* storeSecret(PREVIOUS_WEBHOOK_SECRET, yield* readSecret(WEBHOOK_SECRET))
  }
  yield* storeSecret(WEBHOOK_SECRET, secret)
})
