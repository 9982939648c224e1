// The sandbox Stripe's one state: every object it holds, its clock (the real one plus what the control advanced, as
// Stripe's test clocks do) and its event log. Operations on it run one at a time (`serial`), so the API, the checkout
// page and the control never see half an operation; new events are published to whoever delivers webhooks.
import { Clock, Effect, PubSub, Semaphore } from "effect"
import type {
  Charge,
  CheckoutSession,
  Customer,
  Dispute,
  LineItem,
  PaymentIntent,
  PaymentMethod,
  Refund,
  SetupIntent,
  StripeEvent,
  WebhookEndpoint
} from "./objects.ts"
import { randomId } from "./objects.ts"

/** The API version the sandbox speaks: the one the installed SDK pins. */
export const API_VERSION = "2026-10-28.endive"

export interface SessionExtras {
  readonly lineItems: ReadonlyArray<LineItem>
  readonly setupFutureUsage: "off_session" | "on_session" | null
  readonly paymentIntentDescription: string | null
  readonly paymentIntentMetadata: Record<string, string>
  readonly setupIntentMetadata: Record<string, string>
  /** An attempt waiting for the cardholder's answer on the challenge page. */
  awaitingAuthentication: boolean
}

export interface SavedCard {
  readonly number: string
  /** Set up for off-session use: saved with `setup_future_usage: off_session` or in a setup-mode session. */
  setUpForOffSession: boolean
}

/** The first answer given under an Idempotency-Key, and the parameters it was given for. */
export interface IdempotentAnswer {
  /** When it was first answered (the sandbox's clock, unix seconds): Stripe forgets a key after 24 hours. */
  readonly at: number
  readonly fingerprint: string
  readonly status: number
  readonly body: unknown
}

export interface Store {
  readonly customers: Map<string, Customer>
  readonly sessions: Map<string, CheckoutSession>
  readonly sessionExtras: Map<string, SessionExtras>
  readonly paymentIntents: Map<string, PaymentIntent>
  readonly paymentMethods: Map<string, PaymentMethod>
  readonly cards: Map<string, SavedCard>
  readonly setupIntents: Map<string, SetupIntent>
  readonly charges: Map<string, Charge>
  readonly refunds: Map<string, Refund>
  readonly disputes: Map<string, Dispute>
  /** Oldest first. */
  readonly events: Array<StripeEvent>
  readonly eventsById: Map<string, StripeEvent>
  readonly endpoints: Map<string, WebhookEndpoint>
  readonly endpointSecrets: Map<string, string>
  /** Secrets replaced by a roll, still signing until `until` (epoch ms). */
  readonly previousSecrets: Map<string, ReadonlyArray<{ readonly secret: string; readonly until: number }>>
  /** The endpoints listening to each event's type when it happened. */
  readonly eventTargets: Map<string, ReadonlyArray<string>>
  readonly idempotent: Map<string, IdempotentAnswer>
  /** Seconds added to the real clock by `advanceTime`. */
  offsetSeconds: number
  /** Where the checkout and authentication pages are served (set once the listener is bound). */
  baseUrl: string
  readonly published: PubSub.PubSub<StripeEvent>
  /** Something durable may have changed (the state file, when kept, saves soon); every `serial` operation says so. */
  changed: () => void
  /** Runs an operation alone: no other API call, page submission or control call interleaves with it. */
  readonly serial: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** As `serial`, for a read: says nothing changed. */
  readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const makeStore = Effect.gen(function*() {
  const lock = yield* Semaphore.make(1)
  const published = yield* PubSub.unbounded<StripeEvent>()
  const store: Store = {
    customers: new Map(),
    sessions: new Map(),
    sessionExtras: new Map(),
    paymentIntents: new Map(),
    paymentMethods: new Map(),
    cards: new Map(),
    setupIntents: new Map(),
    charges: new Map(),
    refunds: new Map(),
    disputes: new Map(),
    events: [],
    eventsById: new Map(),
    endpoints: new Map(),
    endpointSecrets: new Map(),
    previousSecrets: new Map(),
    eventTargets: new Map(),
    idempotent: new Map(),
    offsetSeconds: 0,
    baseUrl: "http://127.0.0.1",
    published,
    changed: () => undefined,
    serial: (effect) => lock.withPermits(1)(effect).pipe(Effect.ensuring(Effect.sync(() => store.changed()))),
    exclusive: (effect) => lock.withPermits(1)(effect)
  }
  return store
})

/** The sandbox's time in unix seconds. */
export const nowSeconds = (store: Store) =>
  Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000) + store.offsetSeconds)

/** What every object starts with: its id, its kind, when it was made (the sandbox's clock), test mode. */
export const stamp = <O extends string>(store: Store, id: string, object: O) =>
  Effect.map(nowSeconds(store), (created) => ({ id, object, created, livemode: false as const }))

/** A `client_secret` of an intent: its id, `_secret_`, random characters. */
export const clientSecret = (id: string) => `${id}_secret_${randomId("s", 24).slice(2)}`

const copy = <A>(a: A): A => structuredClone(a)

const listens = (endpoint: WebhookEndpoint, type: string) =>
  endpoint.enabled_events.includes("*") || endpoint.enabled_events.includes(type)

/** Records an event with a snapshot of the object as it is now, and hands it to the webhook delivery. */
export const emit = (store: Store, type: string, object: object, previous?: Record<string, unknown>) =>
  Effect.gen(function*() {
    const targets = [...store.endpoints.values()].filter((e) => listens(e, type)).map((e) => e.id)
    const event: StripeEvent = {
      id: randomId("evt"),
      object: "event",
      api_version: API_VERSION,
      created: yield* nowSeconds(store),
      livemode: false,
      type,
      data: previous === undefined ? { object: copy(object) } : { object: copy(object), previous_attributes: previous },
      pending_webhooks: targets.length,
      request: { id: null, idempotency_key: null }
    }
    store.events.push(event)
    store.eventsById.set(event.id, event)
    store.eventTargets.set(event.id, targets)
    yield* PubSub.publish(store.published, event)
    return event
  })

const IDEMPOTENCY_SECONDS = 24 * 3600
const EVENT_SECONDS = 30 * 24 * 3600

/** Forgets what Stripe forgets: idempotency keys after 24 hours, events after 30 days (they stop being listed). */
export const forgetOld = (store: Store) =>
  Effect.map(nowSeconds(store), (now) => {
    for (const [key, answer] of store.idempotent) if (answer.at <= now - IDEMPOTENCY_SECONDS) store.idempotent.delete(key)
    while (store.events[0] !== undefined && store.events[0].created <= now - EVENT_SECONDS) {
      const old = store.events.shift()!
      store.eventsById.delete(old.id)
      store.eventTargets.delete(old.id)
    }
  })

/** The endpoints an event goes to: those registered when it happened and listening to its type (and still there). */
export const endpointsFor = (store: Store, event: StripeEvent): ReadonlyArray<WebhookEndpoint> =>
  (store.eventTargets.get(event.id) ?? []).flatMap((id) => store.endpoints.get(id) ?? [])

/** Any object by id, for `expand[]`. */
export const lookup = (store: Store, id: string): object | undefined => {
  const prefix = id.slice(0, id.indexOf("_"))
  const maps: Record<string, Map<string, object>> = {
    cus: store.customers,
    cs: store.sessions,
    pi: store.paymentIntents,
    pm: store.paymentMethods,
    seti: store.setupIntents,
    ch: store.charges,
    re: store.refunds,
    dp: store.disputes
  }
  return maps[prefix]?.get(id)
}

/**
 * A copy of `object` for the wire with each `expand` path (`payment_intent`, `payment_intent.payment_method`)
 * replaced by the object it names, as Stripe expands ids.
 */
export const expand = (store: Store, object: object, paths: ReadonlyArray<string> = []): object => {
  const out = copy(object) as Record<string, unknown>
  for (const path of paths) {
    const [head, ...rest] = path.split(".")
    if (head === undefined) continue
    const value = out[head]
    // A session's line items are no field of it but expandable all the same (Stripe's `includable` property).
    const items = head === "line_items" && out["object"] === "checkout.session" ? store.sessionExtras.get(String(out["id"]))?.lineItems : undefined
    if (items !== undefined) {
      out[head] = { object: "list", data: copy(items), has_more: false, url: `/v1/checkout/sessions/${String(out["id"])}/line_items` }
    } else if (Array.isArray(value) && rest.length > 0) {
      out[head] = value.map((item: unknown) => (typeof item === "object" && item !== null ? expand(store, item, [rest.join(".")]) : item))
    } else if (typeof value === "string") {
      const found = lookup(store, value)
      if (found !== undefined) out[head] = rest.length === 0 ? copy(found) : expand(store, found, [rest.join(".")])
    } else if (typeof value === "object" && value !== null && rest.length > 0) {
      out[head] = expand(store, value, [rest.join(".")])
    }
  }
  return out
}
