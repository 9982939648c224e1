// Sending one call to a panel's Application or Client API: its key as a Bearer token, JSON both ways, the error
// envelope decoded into a CallFailed, bounded retries of transient failures, and the two rate-limit policies
// (reference/pterodactyl.md §1.1, §1.5): Application-API calls wait out a short Retry-After; Client-API calls never
// wait, and a panel-wide 429 blocks every further Client-API call to that panel until it ends.
import { Clock, Duration, Effect, Option, Redacted, Schedule, Schema } from "effect"
import { Headers, type HttpClient, type HttpClientError, HttpClientRequest } from "effect/http"
import type { GamePanels, PanelConnection, PanelUnknown } from "../../ports/GamePanel.ts"
import {
  backOff,
  type CallFailed,
  failure,
  fromErrorAnswer,
  isPanelWideThrottle,
  isThrottled,
  isTransient,
  type RetryPolicy
} from "./failures.ts"
import { meterUpstream } from "../../domain/ops/metrics.ts"

export type Api = "application" | "client"

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE" | "PATCH"

/** One call; `path` is below `/api/<api>` and starts with `/` (query string included). */
export interface CallSpec {
  readonly method: HttpMethod
  readonly path: string
  readonly json?: unknown
  readonly body?: { readonly contentType: string; readonly bytes: Uint8Array }
}

export interface Answer {
  readonly status: number
  readonly contentType: string | null
  readonly body: Uint8Array
}

export interface CallOptions {
  /** Per HTTP attempt, body included. */
  readonly requestTimeout: Duration.Input
  readonly retries: number
  readonly retryBaseDelay: Duration.Input
  /** The longest Retry-After an Application-API call waits for; a longer one fails GamePanelThrottled at once. */
  readonly maxRetryAfter: Duration.Input
}

export interface Calls {
  /** Retries transient failures when `idempotent`, and waits out a 429 whose Retry-After is within the bound. */
  application(
    panel: string,
    operation: string,
    spec: CallSpec,
    options?: { readonly idempotent: boolean }
  ): Effect.Effect<Answer, CallFailed | PanelUnknown>
  /** Never waits on a 429 (§1.5: hammering the shared bucket only extends the ban). */
  client(
    panel: string,
    operation: string,
    spec: CallSpec,
    options?: { readonly idempotent: boolean }
  ): Effect.Effect<Answer, CallFailed | PanelUnknown>
  /** Fails at once while a panel-wide 429 of the Client API is running; call before any other Client-API use. */
  clientAllowed(panel: string, operation: string): Effect.Effect<void, CallFailed>
  /** Records what a Client-API call (or a node call made on its behalf) learnt about the panel's limiter. */
  noteClientFailure(panel: string, f: CallFailed): Effect.Effect<void>
  readonly panels: GamePanels["Service"]
}

const decoder = new TextDecoder()
export const textOf = (bytes: Uint8Array) => decoder.decode(bytes)

/** Never the cause's message: node's carry the address (`connect ECONNREFUSED 10.0.0.5:443`). */
export const transportFailure = (operation: string, error: HttpClientError.HttpClientError) => {
  const cause: unknown = "cause" in error.reason ? error.reason.cause : undefined
  const code = typeof cause === "object" && cause !== null ? Reflect.get(cause, "code") : undefined
  return failure(operation, null, error.reason._tag, typeof code === "string" ? code : "no answer")
}

export const timedOut = (operation: string, timeout: Duration.Input) =>
  failure(operation, null, "Timeout", `no answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}`)

/** The answer's JSON body as `schema`; another shape is a failure of the call (200 "UnexpectedAnswer"). */
export const decodeAs = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, operation: string) =>
(answer: Answer): Effect.Effect<S["Type"], CallFailed> =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(schema))(textOf(answer.body)).pipe(
    Effect.mapError(() => failure(operation, answer.status, "UnexpectedAnswer", "unexpected answer shape"))
  )

export const originOf = (connection: PanelConnection) => connection.url.replace(/\/+$/, "")

export const bearer = (key: Redacted.Redacted<string>) => ({ authorization: `Bearer ${Redacted.value(key)}` })

export const redactedHeaderNames = ["authorization", "cookie", "set-cookie"]

export const makeCalls = (http: HttpClient.HttpClient, panels: GamePanels["Service"], options: CallOptions): Calls => {
  const retry: RetryPolicy = { retries: options.retries, baseDelay: options.retryBaseDelay }
  const maxRetryAfterMs = Duration.toMillis(Duration.fromInputUnsafe(options.maxRetryAfter))
  /** Per panel: when its Client-API bucket opens again (epoch ms). */
  const blockedUntil = new Map<string, number>()

  const once = (connection: PanelConnection, api: Api, operation: string, spec: CallSpec) => {
    const key = api === "application" ? connection.applicationKey : connection.clientKey
    const base = HttpClientRequest.make(spec.method)(`${originOf(connection)}/api/${api}${spec.path}`).pipe(
      // Without Accept: JSON the panel answers errors with redirects and HTML (§1.1).
      HttpClientRequest.setHeaders({ accept: "application/json", ...bearer(key) })
    )
    const request = spec.json !== undefined
      ? HttpClientRequest.bodyText(base, JSON.stringify(spec.json), "application/json")
      : spec.body !== undefined
      ? HttpClientRequest.bodyUint8Array(base, spec.body.bytes, spec.body.contentType)
      : base
    return meterUpstream("pterodactyl", (f: CallFailed) => (isThrottled(f) ? "throttled" : "error"), Effect.gen(function*() {
      const response = yield* http.execute(request)
      const body = new Uint8Array(yield* response.arrayBuffer)
      if (response.status >= 200 && response.status < 300) {
        const contentType = Headers.get(response.headers, "content-type")
        return { status: response.status, contentType: Option.getOrNull(contentType), body } satisfies Answer
      }
      const retryAfter = Option.getOrUndefined(Headers.get(response.headers, "retry-after"))
      return yield* fromErrorAnswer(operation, response.status, textOf(body), retryAfter, yield* Clock.currentTimeMillis)
    }).pipe(
      Effect.scoped,
      Effect.catchTag("HttpClientError", (e) => Effect.fail(transportFailure(operation, e))),
      Effect.timeoutOrElse({
        duration: options.requestTimeout,
        orElse: () => Effect.fail(timedOut(operation, options.requestTimeout))
      }),
      Effect.provideService(Headers.CurrentRedactedNames, redactedHeaderNames)
    ))
  }

  /** Back-off between attempts, stretched to a 429's Retry-After. */
  const schedule = backOff(retry).pipe(
    Schedule.setInputType<CallFailed>(),
    Schedule.modifyDelay(({ duration, input }) =>
      Effect.succeed(
        isThrottled(input) && input.retryAfterSeconds !== null
          ? Duration.max(duration, Duration.seconds(input.retryAfterSeconds))
          : duration
      )
    )
  )

  const application: Calls["application"] = (panel, operation, spec, { idempotent } = { idempotent: true }) =>
    Effect.flatMap(panels.get(panel), (connection) =>
      once(connection, "application", operation, spec).pipe(
        Effect.retry({
          schedule,
          times: options.retries,
          while: (f) =>
            (isTransient(f) && idempotent) ||
            (isThrottled(f) && (f.retryAfterSeconds ?? Infinity) * 1000 <= maxRetryAfterMs)
        })
      ))

  const clientAllowed: Calls["clientAllowed"] = (panel, operation) =>
    Effect.gen(function*() {
      const until = blockedUntil.get(panel)
      if (until === undefined) return
      const now = yield* Clock.currentTimeMillis
      if (until <= now) {
        blockedUntil.delete(panel)
        return
      }
      return yield* failure(operation, 429, "ThrottleRequestsException", "the panel's Client-API limit is exhausted", {
        retryAfterSeconds: Math.ceil((until - now) / 1000)
      })
    })

  const noteClientFailure: Calls["noteClientFailure"] = (panel, f) =>
    isPanelWideThrottle(f)
      ? Effect.map(Clock.currentTimeMillis, (now) => {
        const until = now + (f.retryAfterSeconds ?? 0) * 1000
        blockedUntil.set(panel, Math.max(until, blockedUntil.get(panel) ?? 0))
      })
      : Effect.void

  const client: Calls["client"] = (panel, operation, spec, { idempotent } = { idempotent: true }) =>
    Effect.gen(function*() {
      yield* clientAllowed(panel, operation)
      const connection = yield* panels.get(panel)
      return yield* once(connection, "client", operation, spec).pipe(
        Effect.retry({ schedule, times: options.retries, while: (f) => isTransient(f) && idempotent }),
        Effect.tapError((f) => noteClientFailure(panel, f))
      )
    })

  return { application, client, clientAllowed, noteClientFailure, panels }
}
