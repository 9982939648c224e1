// Sandbox mode's payments (issue 12 §3): the sandbox Stripe on loopback (its own port, its state beside the embedded
// database), the REAL Stripe gateway on its keys, and our own webhook route as its one endpoint once the server
// listens. Production never builds it: there the service holds none.
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { HttpServer } from "effect/http"
import { randomBytes } from "node:crypto"
import { sandboxStripe, type SandboxStripe } from "../../adapters/stripe/sandbox/SandboxStripe.ts"
import { keepInFile } from "./StateFile.ts"
import * as StripePaymentGateway from "../../adapters/stripe/StripePaymentGateway.ts"

/** The sandbox Stripe of this process and the secret its deliveries to us are signed with (none outside sandbox mode). */
export class SandboxStripeApp extends Context.Service<
  SandboxStripeApp,
  Option.Option<{ readonly sandbox: SandboxStripe; readonly webhookSecret: string }>
>()("zh/app/SandboxStripe") {
  static readonly none = Layer.succeed(SandboxStripeApp, Option.none())
}

export interface SandboxStripeOptions {
  readonly port: number
  /** Where its whole state is kept across restarts (with the embedded database); none: in memory. */
  readonly stateFile: string | undefined
  readonly timeoutMs: number
  readonly maxNetworkRetries: number
}

/** The sandbox Stripe, listening for the lifetime of the layer, and the payment gateway on it. */
export const SandboxStripePaymentsLive = (options: SandboxStripeOptions) => {
  const sandbox = Layer.effect(SandboxStripeApp, Effect.gen(function*() {
    const started = yield* sandboxStripe({
      host: "127.0.0.1",
      port: options.port,
      keepState: options.stateFile === undefined ? undefined : keepInFile(options.stateFile, "sandbox Stripe", "no objects"),
      // Stripe retries for days; a sandbox whose server is restarting catches up within half a minute.
      webhooks: { initialRetryDelayMs: 250, maxRetryDelayMs: 30_000 }
    })
    yield* Effect.logInfo(`sandbox Stripe on ${started.baseUrl} (checkout pages at ${started.baseUrl}/c/pay/…)`)
    return Option.some({ sandbox: started, webhookSecret: `whsec_${randomBytes(24).toString("hex")}` })
  }))
  const gateway = Layer.unwrap(Effect.gen(function*() {
    const found = yield* SandboxStripeApp
    const { sandbox: started, webhookSecret } = yield* Effect.fromOption(found).pipe(Effect.orDie)
    return StripePaymentGateway.layer({
      credentials: Effect.succeed(Option.some({
        secretKey: Redacted.make(started.secretKey),
        webhookSecrets: [Redacted.make(webhookSecret)]
      })),
      api: { host: started.host, port: started.port, protocol: "http" },
      timeoutMs: options.timeoutMs,
      maxNetworkRetries: options.maxNetworkRetries
    })
  }))
  return gateway.pipe(Layer.provideMerge(sandbox))
}

/**
 * Once the server listens (its port may be chosen at start): our webhook route becomes the sandbox Stripe's one
 * endpoint, reached on loopback. Nothing outside sandbox mode.
 */
export const SandboxStripeWebhookLive = Layer.effectDiscard(Effect.gen(function*() {
  const found = yield* SandboxStripeApp
  if (Option.isNone(found)) return
  const listening = yield* HttpServer.addressFormattedWith((url) => Effect.succeed(url))
  // Listening on every interface: loopback reaches it.
  const origin = listening.replace(/\/\/(0\.0\.0\.0|\[::\])(?=:)/, "//127.0.0.1")
  yield* found.value.sandbox.control.useWebhook(`${origin}/api/payments/stripe/webhook`, found.value.webhookSecret)
}))
