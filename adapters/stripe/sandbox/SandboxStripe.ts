// The sandbox Stripe on loopback (issue 12 §3, reference/stripe.md § Offline test double): the simulation's routes on
// a port, for the official SDK (`new Stripe(secretKey, { host, port, protocol: "http" })`) and for browsers and scripts
// on the hosted pages. Started as a scoped resource or a Layer; stopped with its scope.
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, type Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import { type SandboxStripeControl, stripeSimulation, type StripeSimulationOptions } from "./StripeSimulation.ts"

export type { SandboxStripeControl, StripeSimulation, StripeSimulationOptions } from "./StripeSimulation.ts"
export { stripeSimulation } from "./StripeSimulation.ts"
export type { DeliveryAttempt, WebhookOptions } from "./Webhooks.ts"

export interface SandboxStripeOptions extends StripeSimulationOptions {
  /** Default 127.0.0.1. */
  readonly host?: string | undefined
  /** Default 0: an ephemeral port. */
  readonly port?: number | undefined
}

export interface SandboxStripe {
  /** `http://127.0.0.1:<port>`: the API under /v1, the checkout pages under /c/pay. */
  readonly baseUrl: string
  readonly host: string
  readonly port: number
  readonly secretKey: string
  /** The secret of the endpoint registered with `options.webhook`, if any. */
  readonly webhookSecret: string | undefined
  readonly control: SandboxStripeControl
}

/** The sandbox, listening on acquire and stopped when the scope closes. */
export const sandboxStripe = (options: SandboxStripeOptions = {}): Effect.Effect<SandboxStripe, never, Scope.Scope> =>
  Effect.gen(function*() {
    const simulation = yield* stripeSimulation(options)
    const host = options.host ?? "127.0.0.1"
    const context = yield* Layer.build(
      HttpRouter.serve(simulation.routes, { disableLogger: true, disableListenLog: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port ?? 0, host, gracefulShutdownTimeout: "100 millis" }))
      )
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    const port = address._tag === "UnixPathAddress" ? 0 : address.port
    const baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}`
    simulation.useBaseUrl(baseUrl)
    return { baseUrl, host, port, secretKey: simulation.secretKey, webhookSecret: simulation.webhookSecret, control: simulation.control }
  }).pipe(Effect.orDie)

export class SandboxStripeInstance extends Context.Service<SandboxStripeInstance, SandboxStripe>()("adapters/stripe/SandboxStripe") {}

/** A layer holding one running sandbox Stripe for the lifetime of the layer. */
export const layerSandboxStripe = (options: SandboxStripeOptions = {}): Layer.Layer<SandboxStripeInstance> =>
  Layer.effect(SandboxStripeInstance, sandboxStripe(options))
