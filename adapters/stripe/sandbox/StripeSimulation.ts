// The sandbox Stripe without sockets (DESIGN.md §7: the fake is the simulator without sockets): one state, the API, the
// hosted pages, webhook delivery, the expiry sweep and the control surface. `fetch` answers like the loopback server
// (pass it to the SDK with `httpClient: Stripe.createFetchHttpClient(simulation.fetch)`); SandboxStripe serves the
// same routes on a port.
import { Duration, Effect, Layer, Schedule, type Scope } from "effect"
import { HttpRouter } from "effect/http"
import { Faults } from "./Faults.ts"
import { newWebhookSecret, randomId, type StripeEvent } from "./objects.ts"
import { durableStore, type KeepState } from "./durableState.ts"
import { disputeCharge } from "./payments.ts"
import { createEndpoint, getCharge } from "./resources.ts"
import { sandboxRoutes } from "./routes.ts"
import { expireDue } from "./sessions.ts"
import { makeStore } from "./Store.ts"
import { makeStripeApi } from "./StripeApi.ts"
import { type DeliveryAttempt, makeWebhookDelivery, type WebhookOptions } from "./Webhooks.ts"

export interface StripeSimulationOptions {
  /** The key callers must present (`Authorization: Bearer …`). Default: a new `sk_test_…` at every start. */
  readonly secretKey?: string | undefined
  /** An endpoint registered at start (the platform's webhook route), with its secret (default: a new `whsec_…`). */
  readonly webhook?: { readonly url: string; readonly enabledEvents?: ReadonlyArray<string>; readonly secret?: string } | undefined
  readonly webhooks?: WebhookOptions | undefined
  /**
   * Keeps the whole state (objects, events, endpoint secrets, idempotency answers) across restarts: loaded at start,
   * saved after changes and at close (sandbox mode passes its state file, app/sandbox/StateFile.ts). Default: none,
   * everything in memory.
   */
  readonly keepState?: KeepState | undefined
  /** Where the keeper's warnings go (an invalid file set aside, a failed save). Default: the log. */
  readonly onWarning?: ((message: string) => void) | undefined
  /** How often sessions past their `expires_at` are expired. Default 1000 ms. */
  readonly expirySweepMs?: number | undefined
}

export interface SandboxStripeControl {
  /** Moves the sandbox's clock forward (as a Stripe test clock does) and expires the sessions now due. */
  readonly advanceTime: (seconds: number) => Effect.Effect<void>
  /** The next `times` API calls (whose path matches, when given) answer `status` (default 500) as an `api_error`. */
  readonly failNextApiCalls: (options: { readonly times: number; readonly status?: number; readonly path?: RegExp }) => Effect.Effect<void>
  /** The next `times` API calls (whose path matches, when given) are done, then answered `ms` late. */
  readonly slowNextApiCalls: (options: { readonly times: number; readonly ms: number; readonly path?: RegExp }) => Effect.Effect<void>
  /** The next `times` API calls (whose path matches, when given) never answer. */
  readonly hangNextApiCalls: (options: { readonly times: number; readonly path?: RegExp }) => Effect.Effect<void>
  /** The next `events` events some endpoint listens to are each delivered `copies` times (default 2). */
  readonly duplicateNextEvents: (events: number, copies?: number) => Effect.Effect<void>
  /**
   * The next `events` events some endpoint listens to are held until the last of them happens, then delivered newest
   * first, one by one.
   */
  readonly reorderNextEvents: (events: number) => Effect.Effect<void>
  /** The next `events` events some endpoint listens to are delivered `ms` late. */
  readonly delayNextEvents: (events: number, ms: number) => Effect.Effect<void>
  /** Disarms every fault; events a reorder was holding are delivered now. */
  readonly clearFaults: Effect.Effect<void>
  /** Every delivery attempt so far, oldest first. */
  readonly deliveries: Effect.Effect<ReadonlyArray<DeliveryAttempt>>
  /** Waits until every event so far is delivered (2xx) to its endpoints, or held by an armed reorder. */
  readonly awaitDeliveries: Effect.Effect<void>
  /** Every event so far, oldest first. */
  readonly events: Effect.Effect<ReadonlyArray<StripeEvent>>
  /**
   * Gives the endpoint (by id or URL) a new secret, as the Dashboard's "roll secret" does: deliveries carry a `v1`
   * signature for each secret while the previous one stays valid (`previousValidForMs`, default 24 h).
   */
  readonly rollWebhookSecret: (endpoint: string, options?: { readonly previousValidForMs?: number }) => Effect.Effect<string>
  /** The cardholder disputes a paid charge (by its id or its payment intent's): `charge.dispute.created`. */
  readonly disputeCharge: (charge: string, options?: { readonly reason?: string }) => Effect.Effect<string>
  /**
   * Makes `url` the one endpoint, signed with `secret`, listening to every event: an endpoint already at that URL is
   * kept (with the events still owed to it) and given the secret; endpoints at other URLs are deleted. For a platform
   * that runs its own sandbox and learns its address once it listens.
   */
  readonly useWebhook: (url: string, secret: string) => Effect.Effect<void>
  /** Registers an endpoint (as `webhookEndpoints.create` does) and returns its id and secret. */
  readonly registerWebhook: (
    url: string,
    options?: { readonly enabledEvents?: ReadonlyArray<string>; readonly secret?: string }
  ) => Effect.Effect<{ readonly id: string; readonly secret: string }>
}

export interface StripeSimulation {
  readonly secretKey: string
  /** The secret of the endpoint registered with `options.webhook`, if any. */
  readonly webhookSecret: string | undefined
  readonly control: SandboxStripeControl
  /** The API and pages as a `fetch` (any host: only the path counts). */
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
  /** Every route, for a server to serve. */
  readonly routes: Layer.Layer<never, never, HttpRouter.HttpRouter>
  /** Where the pages' URLs (`session.url`, `next_action`) point from now on. */
  readonly useBaseUrl: (url: string) => void
}

/** The answer, or the request's abort (a caller's timeout ends its wait even on a hanging fault), as fetch does. */
const answerOrAbort = (handler: (request: Request) => Promise<Response>, request: Request): Promise<Response> => {
  // Listening first: the handler, interrupted by the same abort, would otherwise answer an empty response.
  const aborted = new Promise<never>((_, reject) => {
    if (request.signal.aborted) reject(request.signal.reason)
    request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true })
  })
  return Promise.race([aborted, handler(request)])
}

/** The simulation, alive until the scope closes (webhook deliveries and the expiry sweep stop with it). */
export const stripeSimulation = (options: StripeSimulationOptions = {}): Effect.Effect<StripeSimulation, never, Scope.Scope> =>
  Effect.gen(function*() {
    const store = yield* makeStore
    if (options.keepState !== undefined) {
      const context = yield* Effect.context<never>()
      const warn = options.onWarning ?? ((message: string) => void Effect.runForkWith(context)(Effect.logWarning(message)))
      const keeper = yield* options.keepState(durableStore(store), warn)
      store.changed = () => keeper.changed()
    }
    const faults = new Faults()
    const secretKey = options.secretKey ?? `sk_test_${randomId("x", 40).slice(2)}`
    const api = makeStripeApi(store, secretKey)
    const delivery = yield* makeWebhookDelivery(store, faults, options.webhooks)
    const routes = sandboxRoutes(store, api, faults)
    const web = HttpRouter.toWebHandler(routes, { disableLogger: true })
    yield* Effect.addFinalizer(() => Effect.promise(() => web.dispose()))

    yield* Effect.forkScoped(
      store.serial(expireDue(store)).pipe(Effect.orDie, Effect.repeat(Schedule.spaced(Duration.millis(options.expirySweepMs ?? 1000))))
    )
    const register: SandboxStripeControl["registerWebhook"] = (url, o = {}) =>
      store.serial(createEndpoint(store, { url, enabled_events: o.enabledEvents ?? ["*"] }, o.secret)).pipe(
        Effect.map((e) => ({ id: e.id, secret: e.secret })),
        Effect.orDie
      )
    // The start's endpoint is registered once: a state file that kept it keeps its secret (or takes the one given).
    const kept = [...store.endpoints.values()].find((e) => e.url === options.webhook?.url)
    if (kept !== undefined && options.webhook?.secret !== undefined) {
      store.endpointSecrets.set(kept.id, options.webhook.secret)
      store.changed()
    }
    const webhookSecret = options.webhook === undefined
      ? undefined
      : kept !== undefined
      ? store.endpointSecrets.get(kept.id)
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
      slowNextApiCalls: (o) => Effect.sync(() => faults.armApi({ kind: "slow", ms: o.ms }, o.times, o.path)),
      duplicateNextEvents: (n, copies) => Effect.sync(() => faults.duplicateNext(n, copies)),
      reorderNextEvents: (n) => Effect.sync(() => faults.reorderNext(n)),
      delayNextEvents: (n, ms) => Effect.sync(() => faults.delayNext(n, ms)),
      clearFaults: Effect.suspend(() => delivery.release(faults.clear())),
      deliveries: Effect.sync(() => delivery.attempts()),
      awaitDeliveries: delivery.idle,
      events: Effect.sync(() => [...store.events]),
      registerWebhook: register,
      useWebhook: (url, secret) =>
        store.serial(Effect.gen(function*() {
          for (const endpoint of [...store.endpoints.values()]) {
            if (endpoint.url !== url) {
              store.endpoints.delete(endpoint.id)
              store.endpointSecrets.delete(endpoint.id)
            }
          }
          const kept = [...store.endpoints.values()].find((e) => e.url === url)
          if (kept !== undefined) store.endpointSecrets.set(kept.id, secret)
          else yield* createEndpoint(store, { url, enabled_events: ["*"] }, secret)
        })).pipe(Effect.orDie),
      disputeCharge: (which, o = {}) =>
        store.serial(Effect.gen(function*() {
          const pi = store.paymentIntents.get(which)
          const charge = yield* getCharge(store, pi?.latest_charge ?? which)
          return (yield* disputeCharge(store, charge, o.reason ?? "fraudulent")).id
        })).pipe(Effect.orDie),
      rollWebhookSecret: (which, o = {}) =>
        store.serial(Effect.sync(() => {
          const endpoint = store.endpoints.get(which) ?? [...store.endpoints.values()].find((e) => e.url === which)
          const current = endpoint === undefined ? undefined : store.endpointSecrets.get(endpoint.id)
          if (endpoint === undefined || current === undefined) throw new Error(`sandbox Stripe: no webhook endpoint ${which}`)
          const until = Date.now() + (o.previousValidForMs ?? 24 * 3600_000)
          store.previousSecrets.set(endpoint.id, [...(store.previousSecrets.get(endpoint.id) ?? []), { secret: current, until }])
          const next = newWebhookSecret()
          store.endpointSecrets.set(endpoint.id, next)
          return next
        }))
    }
    return {
      secretKey,
      webhookSecret,
      control,
      fetch: (input, init) => answerOrAbort(web.handler, new Request(input, init)),
      routes,
      useBaseUrl: (url) => {
        store.baseUrl = url
      }
    } satisfies StripeSimulation
  })
