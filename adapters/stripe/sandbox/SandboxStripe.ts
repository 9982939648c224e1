// The sandbox Stripe on loopback (issue 12 §3, reference/stripe.md § Offline test double): the REST subset under /v1
// for the official SDK (`new Stripe(secretKey, { host, port, protocol: "http" })`), the hosted checkout and
// authentication pages, webhook delivery to the registered endpoints, and a control surface for tests (time, faults,
// delivery log). Started as a scoped resource or a Layer; stopped with its scope.
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Duration, Effect, Layer, Schedule, type Scope } from "effect"
import { HttpRouter, HttpServer, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import { checkoutForm, challengePage, closedPage, messagePage } from "./checkoutPage.ts"
import { Faults } from "./Faults.ts"
import { answerAuthentication } from "./intents.ts"
import { randomId, type StripeEvent } from "./objects.ts"
import { createEndpoint } from "./resources.ts"
import { answerChallenge, expireDue, type PageResult, submitCard } from "./sessions.ts"
import { makeStore, type Store } from "./Store.ts"
import { makeStripeApi } from "./StripeApi.ts"
import { type DeliveryAttempt, makeWebhookDelivery, type WebhookOptions } from "./Webhooks.ts"

export type { DeliveryAttempt, WebhookOptions } from "./Webhooks.ts"

export interface SandboxStripeOptions {
  /** Default 127.0.0.1. */
  readonly host?: string | undefined
  /** Default 0: an ephemeral port. */
  readonly port?: number | undefined
  /** The key callers must present (`Authorization: Bearer …`). Default: a new `sk_test_…` at every start. */
  readonly secretKey?: string | undefined
  /** An endpoint registered at start (the platform's webhook route), with its secret (default: a new `whsec_…`). */
  readonly webhook?: { readonly url: string; readonly enabledEvents?: ReadonlyArray<string>; readonly secret?: string } | undefined
  readonly webhooks?: WebhookOptions | undefined
  /** How often sessions past their `expires_at` are expired. Default 1000 ms. */
  readonly expirySweepMs?: number | undefined
}

export interface SandboxStripeControl {
  /** Moves the sandbox's clock forward (as a Stripe test clock does) and expires the sessions now due. */
  readonly advanceTime: (seconds: number) => Effect.Effect<void>
  /** The next `times` API calls (whose path matches, when given) answer `status` (default 500) as an `api_error`. */
  readonly failNextApiCalls: (options: { readonly times: number; readonly status?: number; readonly path?: RegExp }) => Effect.Effect<void>
  /** The next `times` API calls (whose path matches, when given) never answer. */
  readonly hangNextApiCalls: (options: { readonly times: number; readonly path?: RegExp }) => Effect.Effect<void>
  /** The next `events` events are each delivered twice. */
  readonly duplicateNextEvents: (events: number) => Effect.Effect<void>
  /** The next `events` events are held until the last of them happens, then delivered newest first, one by one. */
  readonly reorderNextEvents: (events: number) => Effect.Effect<void>
  /** The next `events` events are delivered `ms` late. */
  readonly delayNextEvents: (events: number, ms: number) => Effect.Effect<void>
  /** Disarms every fault; events a reorder was holding are delivered now. */
  readonly clearFaults: Effect.Effect<void>
  /** Every delivery attempt so far, oldest first. */
  readonly deliveries: Effect.Effect<ReadonlyArray<DeliveryAttempt>>
  /** Waits until every event so far is delivered (2xx) to its endpoints, or held by an armed reorder. */
  readonly awaitDeliveries: Effect.Effect<void>
  /** Every event so far, oldest first. */
  readonly events: Effect.Effect<ReadonlyArray<StripeEvent>>
  /** Registers an endpoint (as `webhookEndpoints.create` does) and returns its id and secret. */
  readonly registerWebhook: (
    url: string,
    options?: { readonly enabledEvents?: ReadonlyArray<string>; readonly secret?: string }
  ) => Effect.Effect<{ readonly id: string; readonly secret: string }>
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

const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(Effect.orElseSucceed(request.text, () => ""), (text) => new URLSearchParams(text))

const html = (body: string, status = 200) => HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8" })

const pageAnswer = (store: Store, action: string, result: PageResult) => {
  switch (result.kind) {
    case "redirect":
      return HttpServerResponse.redirect(result.location, { status: 303 })
    case "challenge":
      return html(challengePage(action, "payment"))
    case "closed":
      return html(closedPage(result.session), result.session.status === "expired" ? 410 : 200)
    case "form": {
      const session = store.sessions.get(action.slice(action.lastIndexOf("/") + 1))
      return session === undefined ? html(messagePage("Checkout", "Unknown session."), 404) : html(checkoutForm(session, action, result.message), result.status)
    }
  }
}

const pageRoutes = (store: Store) => {
  const notFound = html(messagePage("Not found", "This page does not exist."), 404)
  const checkoutGet = HttpRouter.add("GET", "/c/pay/:id", () =>
    Effect.gen(function*() {
      const id = (yield* HttpRouter.params)["id"] ?? ""
      return yield* store.serial(Effect.gen(function*() {
      yield* expireDue(store)
      const session = store.sessions.get(id)
      const action = `/c/pay/${id}`
      if (session === undefined) return notFound
      if (session.status !== "open") return html(closedPage(session), session.status === "expired" ? 410 : 200)
      if (store.sessionExtras.get(id)?.challenge !== undefined) return html(challengePage(action, "payment"))
      return html(checkoutForm(session, action, undefined))
      }))
    }))
  const checkoutPost = HttpRouter.add("POST", "/c/pay/:id", (request) =>
    Effect.gen(function*() {
      const id = (yield* HttpRouter.params)["id"] ?? ""
      const form = yield* formOf(request)
      const outcome = form.get("outcome")
      return yield* store.serial(Effect.gen(function*() {
        yield* expireDue(store)
        if (!store.sessions.has(id)) return notFound
        const result = outcome === null
          ? yield* submitCard(store, id, { card: form.get("card") ?? "", exp: form.get("exp") ?? "", cvc: form.get("cvc") ?? "" })
          : yield* answerChallenge(store, id, outcome === "approve")
        return pageAnswer(store, `/c/pay/${id}`, result)
      }))
    }).pipe(Effect.catch(() => Effect.succeed(notFound))))
  const authenticateGet = HttpRouter.add("GET", "/authenticate/:id", () =>
    Effect.gen(function*() {
      const id = (yield* HttpRouter.params)["id"] ?? ""
      const pi = store.paymentIntents.get(id)
      if (pi === undefined) return notFound
      return pi.status === "requires_action"
        ? html(challengePage(`/authenticate/${id}`, "payment"))
        : html(messagePage("Authentication", "Nothing to authenticate."))
    }))
  const authenticatePost = HttpRouter.add("POST", "/authenticate/:id", (request) =>
    Effect.gen(function*() {
      const id = (yield* HttpRouter.params)["id"] ?? ""
      const form = yield* formOf(request)
      const answer = yield* store.serial(answerAuthentication(store, id, form.get("outcome") === "approve"))
      if (answer.returnUrl !== null && answer.answered) return HttpServerResponse.redirect(answer.returnUrl, { status: 303 })
      return html(messagePage("Authentication", answer.pi.status === "succeeded" ? "Payment authenticated." : "Authentication failed."))
    }).pipe(Effect.catch(() => Effect.succeed(notFound))))
  return Layer.mergeAll(checkoutGet, checkoutPost, authenticateGet, authenticatePost)
}

/** The sandbox, started on acquire and stopped when the scope closes. */
export const sandboxStripe = (options: SandboxStripeOptions = {}): Effect.Effect<SandboxStripe, never, Scope.Scope> =>
  Effect.gen(function*() {
    const store = yield* makeStore
    const faults = new Faults()
    const secretKey = options.secretKey ?? `sk_test_${randomId("x", 40).slice(2)}`
    const api = makeStripeApi(store, secretKey)
    const delivery = yield* makeWebhookDelivery(store, faults, options.webhooks)

    const apiRoute = HttpRouter.add("*", "/v1/*", (request) =>
      Effect.gen(function*() {
        const url = new URL(request.url, "http://sandbox")
        const fault = faults.takeApi(url.pathname)
        if (fault?.kind === "hang") return yield* Effect.never
        if (fault?.kind === "fail") {
          const body = { error: { type: "api_error", message: "An unknown error occurred, please try again (sandbox fault)." } }
          return HttpServerResponse.text(JSON.stringify(body), { status: fault.status, contentType: "application/json" })
        }
        const body = request.method === "POST" ? yield* formOf(request) : new URLSearchParams()
        const answer = yield* api.handle({
          method: request.method,
          path: url.pathname,
          query: url.searchParams,
          body,
          authorization: request.headers["authorization"],
          idempotencyKey: request.headers["idempotency-key"]
        })
        return HttpServerResponse.text(JSON.stringify(answer.body, null, 2), {
          status: answer.status,
          headers: answer.headers,
          contentType: "application/json"
        })
      }))

    const host = options.host ?? "127.0.0.1"
    const context = yield* Layer.build(
      HttpRouter.serve(Layer.mergeAll(apiRoute, pageRoutes(store)), { disableLogger: true, disableListenLog: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port ?? 0, host, gracefulShutdownTimeout: "100 millis" }))
      )
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    const port = address._tag === "UnixPathAddress" ? 0 : address.port
    store.baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}`

    yield* Effect.forkScoped(
      store.serial(expireDue(store)).pipe(Effect.orDie, Effect.repeat(Schedule.spaced(Duration.millis(options.expirySweepMs ?? 1000))))
    )

    const register: SandboxStripeControl["registerWebhook"] = (url, o = {}) =>
      store.serial(createEndpoint(store, { url, enabled_events: o.enabledEvents ?? ["*"] }, o.secret)).pipe(
        Effect.map((e) => ({ id: e.id, secret: e.secret })),
        Effect.orDie
      )
    const webhookSecret = options.webhook === undefined
      ? undefined
      : (yield* register(options.webhook.url, {
        ...(options.webhook.enabledEvents === undefined ? {} : { enabledEvents: options.webhook.enabledEvents }),
        ...(options.webhook.secret === undefined ? {} : { secret: options.webhook.secret })
      })).secret


    const control: SandboxStripeControl = {
      advanceTime: (seconds) =>
        store.serial(Effect.andThen(Effect.sync(() => {
          store.offsetSeconds += seconds
        }), expireDue(store))).pipe(Effect.asVoid, Effect.orDie),
      failNextApiCalls: (o) => Effect.sync(() => faults.armApi({ kind: "fail", status: o.status ?? 500 }, o.times, o.path)),
      hangNextApiCalls: (o) => Effect.sync(() => faults.armApi({ kind: "hang" }, o.times, o.path)),
      duplicateNextEvents: (n) => Effect.sync(() => faults.duplicateNext(n)),
      reorderNextEvents: (n) => Effect.sync(() => faults.reorderNext(n)),
      delayNextEvents: (n, ms) => Effect.sync(() => faults.delayNext(n, ms)),
      clearFaults: Effect.suspend(() => delivery.release(faults.clear())),
      deliveries: Effect.sync(() => delivery.attempts()),
      awaitDeliveries: delivery.idle,
      events: Effect.sync(() => [...store.events]),
      registerWebhook: register
    }
    return { baseUrl: store.baseUrl, host, port, secretKey, webhookSecret, control }
  }).pipe(Effect.orDie)

export class SandboxStripeInstance extends Context.Service<SandboxStripeInstance, SandboxStripe>()("adapters/stripe/SandboxStripe") {}

/** A layer holding one running sandbox Stripe for the lifetime of the layer. */
export const layerSandboxStripe = (options: SandboxStripeOptions = {}): Layer.Layer<SandboxStripeInstance> =>
  Layer.effect(SandboxStripeInstance, sandboxStripe(options))
