// Webhook delivery (reference/stripe.md § Webhooks): every event goes to each endpoint that listened to its type when it
// happened, as its JSON body signed with the endpoint's secret by the SDK's own `generateTestHeaderString` (so the
// real `constructEvent` verifies it), at least once: retried with exponential backoff until the endpoint answers 2xx.
// The faults armed in `Faults` send some twice, late, or held back and in reverse order.
import { Clock, Duration, Effect, FiberSet, PubSub, Schedule } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import Stripe from "stripe"
import type { Faults } from "./Faults.ts"
import type { StripeEvent, WebhookEndpoint } from "./objects.ts"
import { endpointsFor, type Store } from "./Store.ts"

export interface WebhookOptions {
  /** The first retry's delay; each next one doubles, up to `maxRetryDelayMs`. Default 1000. */
  readonly initialRetryDelayMs?: number | undefined
  /** Default 3_600_000 (Stripe retries for days; the sandbox for as long as it runs). */
  readonly maxRetryDelayMs?: number | undefined
  /** An endpoint that has not answered by then counts as failed. Default 10_000 (Stripe waits a few seconds more). */
  readonly attemptTimeoutMs?: number | undefined
}

export interface DeliveryAttempt {
  readonly eventId: string
  readonly type: string
  readonly endpointId: string
  /** 1 for the first try of a copy; a duplicated event's second copy counts again from 1. */
  readonly attempt: number
  /** The endpoint's HTTP status, or `"timeout"` / `"unreachable"`. */
  readonly outcome: number | "timeout" | "unreachable"
  readonly at: number
}

const MAX_ATTEMPTS_KEPT = 10_000

/**
 * `t=<time>,v1=<sig>[,v1=<sig>…]`: one `v1` per secret, as Stripe signs while a rolled secret's predecessor is still
 * valid (reference/stripe.md § Webhooks: any `v1` may match). Each signature is the SDK's own.
 */
const signatureHeader = (payload: string, timestamp: number, secrets: ReadonlyArray<string>): string =>
  [
    `t=${timestamp}`,
    ...secrets.map((secret) =>
      Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }).split(",").find((part) => part.startsWith("v1=")) ?? ""
    )
  ].join(",")

export const makeWebhookDelivery = (store: Store, faults: Faults, options: WebhookOptions = {}) =>
  Effect.gen(function*() {
    const attempts: Array<DeliveryAttempt> = []
    const running = yield* FiberSet.make()
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
    const initial = options.initialRetryDelayMs ?? 1000
    const retry = Schedule.min([
      Schedule.exponential(Duration.millis(initial)),
      Schedule.spaced(Duration.millis(options.maxRetryDelayMs ?? 3_600_000))
    ])

    const once = (event: StripeEvent, endpoint: WebhookEndpoint, attempt: { n: number }) =>
      Effect.gen(function*() {
        const secret = store.endpointSecrets.get(endpoint.id)
        // An endpoint deleted since: nothing more to deliver to it.
        if (secret === undefined) return
        const payload = JSON.stringify(event, null, 2)
        // The signature's time is the wall clock's: the receiver checks it against its own (constructEvent's 300 s).
        const now = Date.now()
        const timestamp = Math.floor(now / 1000)
        const stillValid = (store.previousSecrets.get(endpoint.id) ?? []).filter((p) => p.until > now).map((p) => p.secret)
        const signature = signatureHeader(payload, timestamp, [secret, ...stillValid])
        const request = HttpClientRequest.post(endpoint.url).pipe(
          HttpClientRequest.setHeaders({ "Stripe-Signature": signature, "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)" }),
          HttpClientRequest.bodyText(payload, "application/json; charset=utf-8")
        )
        attempt.n += 1
        const record = (outcome: DeliveryAttempt["outcome"]) =>
          Effect.flatMap(Clock.currentTimeMillis, (at) =>
            Effect.sync(() => {
              attempts.push({ eventId: event.id, type: event.type, endpointId: endpoint.id, attempt: attempt.n, outcome, at })
              // The log is for tests; a long-running sandbox keeps the latest attempts only.
              if (attempts.length > MAX_ATTEMPTS_KEPT) attempts.splice(0, attempts.length - MAX_ATTEMPTS_KEPT)
            }))
        yield* client.execute(request).pipe(
          Effect.flatMap((response) => Effect.andThen(response.text, record(response.status))),
          Effect.timeout(Duration.millis(options.attemptTimeoutMs ?? 10_000)),
          Effect.scoped,
          Effect.tapError((e) =>
            record(
              e._tag === "TimeoutError"
                ? "timeout"
                : e.reason._tag === "StatusCodeError"
                ? e.reason.response.status
                : "unreachable"
            )
          )
        )
      })

    const toEndpoint = (event: StripeEvent, endpoint: WebhookEndpoint, copies: number) =>
      Effect.gen(function*() {
        for (let copy = 0; copy < copies; copy++) {
          // Until a 2xx: the retries stop only with the sandbox (or when the endpoint is deleted).
          yield* once(event, endpoint, { n: 0 }).pipe(Effect.retry(retry), Effect.ignore)
          if (copy === 0) {
            event.pending_webhooks = Math.max(0, event.pending_webhooks - 1)
            store.changed()
          }
        }
      })

    const deliver = (event: StripeEvent) =>
      Effect.gen(function*() {
        const targets = endpointsFor(store, event)
        // Faults count deliveries: an event no endpoint listens to uses none of them.
        if (targets.length === 0) return
        const plan = faults.planNext()
        const delivery = Effect.andThen(
          plan.delayMs > 0 ? Effect.sleep(Duration.millis(plan.delayMs)) : Effect.void,
          Effect.forEach(targets, (endpoint) => toEndpoint(event, endpoint, plan.copies), { concurrency: "unbounded", discard: true })
        )
        const now = faults.hold(delivery)
        if (now.length > 0) yield* FiberSet.run(running, Effect.forEach(now, (d) => d, { discard: true }))
      })

    const subscription = yield* PubSub.subscribe(store.published)
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(PubSub.take(subscription), deliver)))

    return {
      attempts: (): ReadonlyArray<DeliveryAttempt> => [...attempts],
      /** Sends now whatever a reorder was holding. */
      release: (held: ReadonlyArray<Effect.Effect<void>>) =>
        held.length === 0 ? Effect.void : Effect.asVoid(FiberSet.run(running, Effect.forEach(held, (d) => d, { discard: true }))),
      /** Waits until every event published so far is delivered (or held by an armed reorder). */
      idle: Effect.gen(function*() {
        while (true) {
          yield* FiberSet.awaitEmpty(running)
          yield* Effect.yieldNow
          if (PubSub.sizeUnsafe(store.published) === 0 && (yield* FiberSet.size(running)) === 0) return
          yield* Effect.sleep("5 millis")
        }
      })
    }
  }).pipe(Effect.provide(FetchHttpClient.layer))

export type WebhookDelivery = Effect.Success<ReturnType<typeof makeWebhookDelivery>>
