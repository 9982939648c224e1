// What the registry adapters share about asking an upstream HTTP API: the client's common shape, bounded attempts
// with Retry-After-aware back-off, the port's error once they are spent, and reading masked values.
import { Clock, Data, Duration, Effect, flow, Option, Schedule, type Schema, type Scope } from "effect"
import {
  Headers,
  HttpClient,
  type HttpClientError,
  HttpClientRequest,
  type HttpClientResponse
} from "effect/http"
import { RegistryUnavailable } from "../../ports/BusinessRegistry.ts"

export interface AttemptPolicy {
  /** Per attempt, headers and body included. */
  readonly timeout: Duration.Input
  /** Extra attempts after the first one, for 429, 5xx, timeouts and transport errors only. */
  readonly retries: number
  readonly retryBaseDelay: Duration.Input
}

/** Longest wait between attempts: a sign-up form must not hang. A longer Retry-After means "give up now". */
export const maxRetryDelay = Duration.seconds(10)

/** Why one attempt produced no answer; only the `reason` survives into the port's error. */
class AttemptFailed extends Data.TaggedError("AttemptFailed")<{
  readonly reason: "DOWN" | "THROTTLED"
  readonly retryable: boolean
  readonly retryAfter: Duration.Duration | undefined
  /** For the operator's log; never carries a secret such as an API key. */
  readonly detail: string
}> {}

/** Registries mask non-public identity fields with placeholders such as "[ND]" or "[NON-DIFFUSIBLE]". */
export const shown = (value: string | null | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" || /^\[.*\]$/.test(trimmed) ? undefined : trimmed
}

/** Every request under `baseUrl`, asking for JSON, with `headers`; each attempt's scope owns its connection. */
export const upstreamClient = (baseUrl: string, headers: Headers.Input) =>
  Effect.map(HttpClient.HttpClient, (client) =>
    client.pipe(
      HttpClient.mapRequest(flow(
        HttpClientRequest.prependUrl(baseUrl.replace(/\/+$/, "")),
        HttpClientRequest.acceptJson,
        HttpClientRequest.setHeaders(headers)
      )),
      // So an unread or abandoned answer is released at once.
      HttpClient.withScope
    ))

/** Retry-After is either delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
const retryAfterOf = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function*() {
    const header = Headers.get(response.headers, "retry-after")
    if (Option.isNone(header)) return undefined
    const value = header.value.trim()
    if (/^\d+$/.test(value)) return Duration.seconds(Number(value))
    const at = Date.parse(value)
    if (Number.isNaN(at)) return undefined
    return Duration.millis(Math.max(0, at - (yield* Clock.currentTimeMillis)))
  })

const retryLater = (reason: "DOWN" | "THROTTLED", response: HttpClientResponse.HttpClientResponse) =>
  Effect.flatMap(retryAfterOf(response), (retryAfter) =>
    Effect.fail(
      new AttemptFailed({
        reason,
        retryable: retryAfter === undefined || Duration.isLessThanOrEqualTo(retryAfter, maxRetryDelay),
        retryAfter,
        detail: `HTTP ${response.status}`
      })
    ))

/** An answer that says "ask again later" inside a 200 (VIES's MS_UNAVAILABLE…): retried like a 503. */
export const answeredBusy = (detail: string) =>
  new AttemptFailed({ reason: "DOWN", retryable: true, retryAfter: undefined, detail })

const giveUp = (detail: string) => new AttemptFailed({ reason: "DOWN", retryable: false, retryAfter: undefined, detail })

/** A status the adapter has no answer for: 429 and 5xx may be asked again; the rest will not get better. */
export const unanswered = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<never, AttemptFailed> => {
  if (response.status === 429) return retryLater("THROTTLED", response)
  if (response.status >= 500) return retryLater("DOWN", response)
  // 400/401/406…: our request or our key is wrong.
  return Effect.fail(giveUp(`HTTP ${response.status}`))
}

/** Exponential back-off, stretched to any Retry-After, never beyond `maxRetryDelay`. */
const backOff = (base: Duration.Input) =>
  Schedule.exponential(base).pipe(
    Schedule.setInputType<AttemptFailed>(),
    Schedule.modifyDelay(({ duration, input }) =>
      Effect.succeed(Duration.min(
        input.retryAfter === undefined ? duration : Duration.max(duration, input.retryAfter),
        maxRetryDelay
      ))
    )
  )

/**
 * Runs `attempt` within the policy's timeout and retries, and turns what is left of a failure into the port's
 * error, logged once as `warning` with its reason and detail.
 */
export const lookUp = <A>(
  attempt: Effect.Effect<A, AttemptFailed | HttpClientError.HttpClientError | Schema.SchemaError, Scope.Scope>,
  policy: AttemptPolicy,
  log: { readonly warning: string; readonly span: string }
): Effect.Effect<A, RegistryUnavailable> =>
  lookUpOr(attempt, policy, log, (reason) => new RegistryUnavailable({ reason }))

/** `lookUp`, failing with the error `unavailable` makes of the reason (each register's port has its own). */
export const lookUpOr = <A, E>(
  attempt: Effect.Effect<A, AttemptFailed | HttpClientError.HttpClientError | Schema.SchemaError, Scope.Scope>,
  policy: AttemptPolicy,
  log: { readonly warning: string; readonly span: string },
  unavailable: (reason: "DOWN" | "THROTTLED") => E
): Effect.Effect<A, E> =>
  attempt.pipe(
    Effect.scoped,
    Effect.timeout(policy.timeout),
    Effect.catchTags({
      HttpClientError: (e) =>
        Effect.fail(
          new AttemptFailed({
            reason: "DOWN",
            retryable: e.reason._tag === "TransportError",
            retryAfter: undefined,
            detail: e.reason._tag
          })
        ),
      TimeoutError: () =>
        Effect.fail(new AttemptFailed({ reason: "DOWN", retryable: true, retryAfter: undefined, detail: "timeout" })),
      SchemaError: () => Effect.fail(giveUp("undecodable answer"))
    }),
    Effect.retry({ schedule: backOff(policy.retryBaseDelay), times: policy.retries, while: (e) => e.retryable }),
    Effect.catchTag("AttemptFailed", (e) =>
      Effect.logWarning(log.warning).pipe(
        Effect.annotateLogs({ reason: e.reason, detail: e.detail }),
        Effect.andThen(Effect.fail(unavailable(e.reason)))
      )),
    Effect.withSpan(log.span)
  )
