// The part of autocannon@9's programmatic API the bench uses (the package ships no types; @types/autocannon
// describes v7). Shapes follow autocannon/lib/run.js and lib/aggregateResult.js.
declare module "autocannon" {
  import type { EventEmitter } from "node:events"

  export interface RequestSpec {
    readonly method?: string
    readonly path?: string
    readonly headers?: Record<string, string>
    readonly body?: string
  }

  export interface Options {
    readonly url: string
    readonly connections?: number
    /** Seconds; ignored when `amount` is set. */
    readonly duration?: number
    readonly amount?: number
    /** Requests per second over all connections; autocannon sends each connection's share in a burst per second. */
    readonly overallRate?: number
    /** Seconds before a request counts as timed out. */
    readonly timeout?: number
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly body?: string
    /** Cycled through by every connection. */
    readonly requests?: ReadonlyArray<RequestSpec>
    readonly title?: string
  }

  /** Milliseconds for latency (whole ms: the histogram's lowest discernible value is 1), counts for requests. */
  export interface Histogram {
    readonly average: number
    readonly mean: number
    readonly stddev: number
    readonly min: number
    readonly max: number
    readonly p50: number
    readonly p90: number
    readonly p99: number
  }

  export interface Result {
    readonly title?: string
    readonly url: string
    readonly connections: number
    /** Seconds, measured. */
    readonly duration: number
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
    readonly "2xx": number
    readonly "4xx": number
    readonly "5xx": number
    readonly statusCodeStats: Record<string, { readonly count: number }>
    readonly latency: Histogram
    readonly requests: Histogram & { readonly total: number; readonly sent: number }
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void
  }

  function autocannon(options: Options): Instance
  export default autocannon
}
