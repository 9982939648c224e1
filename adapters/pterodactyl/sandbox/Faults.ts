// Injected failures (PterodactylControl.failNext / throttleNext / cutDownloadsAfter): the next matching requests, panel
// or Wings, answer with the given status instead of being served, are served and lose their answer, never get one, or
// lose their connection; throttles answer 429 + Retry-After as the panel's limiter does; a cut download drops its
// connection part-way through the body.
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"

/**
 * What a matching request meets. `status` (the default): the error answers instead of the route. `answerLost`: the
 * route runs (its work is done) and the error answers in its place, as a proxy's 504 after a slow panel (§1.4).
 * `hang`: no answer ever (a panel stuck on a dead database). `drop`: the connection closes without an answer.
 */
export type FaultKind = "status" | "answerLost" | "hang" | "drop"

export interface FailSpec {
  readonly kind?: FaultKind
  readonly method?: string
  /** A RegExp tested against the path (no query), or a path prefix. Panel and Wings paths alike. */
  readonly path?: RegExp | string
  readonly times: number
  readonly status: number
  readonly code?: string
  readonly detail?: string
  /** Headers of the error answer (a proxy's `Retry-After` as an HTTP date on a 429, say). */
  readonly headers?: Readonly<Record<string, string>>
}

export interface ThrottleSpec {
  readonly times: number
  readonly retryAfterSeconds: number
}

/**
 * A `hang` or `drop` fault's non-answer: a hang lasts until the client or the
 * front gives up (interruptible, as effect/http runs a request uninterruptibly); a drop destroys the connection.
 */
const transportFault = (
  fault: FailSpec,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  fault.kind === "hang"
    ? Effect.interruptible(Effect.never)
    : Effect.andThen(Effect.sync(() => NodeHttpServerRequest.toIncomingMessage(request).socket.destroy()), Effect.interruptible(Effect.never))

interface Armed {
  readonly spec: FailSpec
  remaining: number
}

const matches = (spec: FailSpec, method: string, path: string): boolean => {
  if (spec.method !== undefined && spec.method.toUpperCase() !== method) return false
  if (spec.path === undefined) return true
  if (typeof spec.path === "string") return path.startsWith(spec.path)
  spec.path.lastIndex = 0
  return spec.path.test(path)
}

export class Faults {
  private armed: Array<Armed> = []
  private throttle: { remaining: number; readonly retryAfterSeconds: number } | undefined
  private cutAfter: number | undefined

  failNext(spec: FailSpec): void {
    if (!Number.isInteger(spec.times) || spec.times < 1) throw new RangeError("failNext: times must be a positive integer")
    this.armed.push({ spec, remaining: spec.times })
  }

  throttleNext(spec: ThrottleSpec): void {
    this.throttle = { remaining: spec.times, retryAfterSeconds: spec.retryAfterSeconds }
  }

  /** Until cleared, every node download drops its connection after `bytes` of its body (a node dying mid-transfer). */
  cutDownloadsAfter(bytes: number | undefined): void {
    if (bytes !== undefined && (!Number.isInteger(bytes) || bytes < 0)) throw new RangeError("cutDownloadsAfter: bytes must be a non-negative integer")
    this.cutAfter = bytes
  }

  /** Where the next download is cut, if it is. */
  downloadCut(): number | undefined {
    return this.cutAfter
  }

  clear(): void {
    this.armed = []
    this.throttle = undefined
    this.cutAfter = undefined
  }

  /** The `status` failure this request gets instead of being served, consumed. */
  take(method: string, path: string): FailSpec | undefined {
    return this.consume(method, path, "status")
  }

  /** The `answerLost` failure that takes the answer of this request, served already, consumed. */
  takeLost(method: string, path: string): FailSpec | undefined {
    return this.consume(method, path, "answerLost")
  }

  /** A `hang` or `drop` failure's non-answer for this request, consumed; undefined when it meets neither. */
  takeTransport(method: string, path: string, request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined {
    const spec = this.consume(method, path, "hang") ?? this.consume(method, path, "drop")
    return spec === undefined ? undefined : transportFault(spec, request)
  }

  private consume(method: string, path: string, kind: FaultKind): FailSpec | undefined {
    const armed = this.armed.find((a) => matches(a.spec, method, path) && (a.spec.kind ?? "status") === kind)
    if (armed === undefined) return undefined
    armed.remaining -= 1
    if (armed.remaining <= 0) this.armed = this.armed.filter((a) => a !== armed)
    return armed.spec
  }

  /** Seconds to announce in Retry-After when an injected throttle applies to this panel API request, consumed. */
  takeThrottle(): number | undefined {
    if (this.throttle === undefined || this.throttle.remaining <= 0) return undefined
    this.throttle.remaining -= 1
    return this.throttle.retryAfterSeconds
  }
}

/** The panel's per-minute API limiter (§1.5): one fixed 60 s window per user and API, shared by all their keys. */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>()

  /** Counts a hit; the headers to send, and the seconds to wait when over the limit. */
  hit(key: string, limit: number, now: number): { readonly remaining: number; readonly retryAfter?: number } {
    let w = this.windows.get(key)
    if (w === undefined || now - w.start >= 60_000) {
      w = { start: now, count: 0 }
      this.windows.set(key, w)
    }
    if (w.count >= limit) return { remaining: 0, retryAfter: Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000)) }
    w.count += 1
    return { remaining: limit - w.count }
  }
}
