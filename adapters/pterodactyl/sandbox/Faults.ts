// Injected failures (PterodactylControl.failNext / throttleNext / cutDownloadsAfter): the next matching requests, panel
// or Wings, answer with the given status instead of being served; throttles answer 429 + Retry-After as the panel's
// limiter does; a cut download drops its connection part-way through the body.
export interface FailSpec {
  readonly method?: string
  /** A RegExp tested against the path (no query), or a path prefix. Panel and Wings paths alike. */
  readonly path?: RegExp | string
  readonly times: number
  readonly status: number
  readonly code?: string
  readonly detail?: string
}

export interface ThrottleSpec {
  readonly times: number
  readonly retryAfterSeconds: number
}

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

  /** The failure this request gets, consumed. */
  take(method: string, path: string): FailSpec | undefined {
    const armed = this.armed.find((a) => matches(a.spec, method, path))
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
