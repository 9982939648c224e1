// Load generators: autocannon for saturation throughput, a paced open-loop sampler for latency, and closed
// loops of sign-ins that keep a fixed number of logins in flight.
import autocannon, { type Options } from "autocannon"
import { Agent, request } from "node:http"
import { monitorEventLoopDelay, performance } from "node:perf_hooks"

export interface Throughput {
  /** Successful (2xx) responses per second over the measured duration. */
  readonly rps: number
  readonly ok: number
  /** Non-2xx answers, connection errors and timeouts. */
  readonly failed: number
  readonly seconds: number
  /** autocannon's whole-millisecond percentiles. */
  readonly p50Ms: number
  readonly p99Ms: number
  readonly statusCodes: Record<string, number>
}

export const blast = async (options: Options): Promise<Throughput> => {
  const r = await autocannon(options)
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count]))
  return {
    rps: r["2xx"] / r.duration,
    ok: r["2xx"],
    failed: r.non2xx + r.errors,
    seconds: r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    statusCodes
  }
}

export interface HttpCall {
  readonly method: "GET" | "POST"
  readonly url: URL
  readonly headers: Record<string, string>
  readonly body?: string
}

/** One request on `agent`; resolves with the status, or 0 on a connection error or after `timeoutMs`. */
export const send = (agent: Agent, call: HttpCall, timeoutMs = 10_000): Promise<number> =>
  new Promise((resolve) => {
    const req = request(call.url, { agent, method: call.method, headers: call.headers, timeout: timeoutMs }, (res) => {
      res.once("end", () => resolve(res.statusCode ?? 0))
      res.once("error", () => resolve(0))
      res.resume()
    })
    req.once("timeout", () => req.destroy(new Error("timeout")))
    req.once("error", () => resolve(0))
    req.end(call.body)
  })

/** Nearest-rank percentile of sorted values. */
const percentile = (sorted: ReadonlyArray<number>, q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN

export interface Latencies {
  /** Requests the schedule called for. */
  readonly scheduled: number
  /** Scheduled requests not sent because every connection was still waiting for an answer. */
  readonly skipped: number
  readonly ok: number
  readonly failed: number
  readonly achievedRps: number
  readonly p50Ms: number
  readonly p90Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** p99 of the bench process's own event-loop lag: how much of the figure the client itself may add. */
  readonly clientLoopDelayP99Ms: number
}

const LOOP_RESOLUTION_MS = 5

/**
 * Paced: request i is due at `i / rate` seconds whatever happened to the previous ones, and is sent at once on
 * one of `connections` keep-alive connections; its latency, timed at sub-millisecond resolution, runs from
 * sending to the end of the answer. When all connections are still waiting, the due request is skipped
 * (counted) rather than queued in the client, so an overloaded server shows as skips and as its own slow
 * answers, not as an ever-growing client queue. Unlike autocannon's `overallRate`, which fires each
 * connection's share in a burst at the top of every second (and pads its histogram in whole 1 ms steps), this
 * spreads requests evenly, so at a modest rate the figure is the server's answer time, not self-made queueing.
 */
export const paced = async (
  call: HttpCall,
  options: { readonly rate: number; readonly seconds: number; readonly connections: number }
): Promise<Latencies> => {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
  const samples: Array<number> = []
  const pending = new Set<Promise<void>>()
  let scheduled = 0
  let skipped = 0
  let failed = 0
  const fire = () => {
    scheduled++
    if (pending.size >= options.connections) {
      skipped++
      return
    }
    const started = performance.now()
    const done: Promise<void> = send(agent, call).then((status) => {
      if (status >= 200 && status < 300) samples.push(performance.now() - started)
      else failed++
      pending.delete(done)
    })
    pending.add(done)
  }
  const interval = 1000 / options.rate
  const durationMs = options.seconds * 1000
  const last = Math.ceil(durationMs / interval)
  loopDelay.enable()
  const start = performance.now()
  await new Promise<void>((finish) => {
    const tick = () => {
      const elapsed = performance.now() - start
      if (scheduled >= last || elapsed >= durationMs) return finish()
      const due = Math.min(Math.floor(elapsed / interval) + 1, last)
      while (scheduled < due) fire()
      setTimeout(tick, Math.max(0, scheduled * interval - elapsed))
    }
    tick()
  })
  await Promise.all(pending)
  const elapsedS = (performance.now() - start) / 1000
  loopDelay.disable()
  agent.destroy()
  const sorted = samples.sort((a, b) => a - b)
  return {
    scheduled,
    skipped,
    ok: sorted.length,
    failed,
    achievedRps: sorted.length / elapsedS,
    p50Ms: percentile(sorted, 0.5),
    p90Ms: percentile(sorted, 0.9),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    // The histogram counts the timer's own interval in every sample.
    clientLoopDelayP99Ms: Math.max(0, loopDelay.percentile(99) / 1e6 - LOOP_RESOLUTION_MS)
  }
}

export interface Loops {
  /** Successful calls so far. */
  readonly ok: () => number
  /** Stops starting new calls, waits for those in flight, returns the status counts. */
  readonly stop: () => Promise<Record<string, number>>
}

/** `concurrency` loops, each sending `call` again as soon as its previous answer arrived. */
export const closedLoops = (call: HttpCall, concurrency: number): Loops => {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const statuses = new Map<number, number>()
  let running = true
  let ok = 0
  const loop = async () => {
    while (running) {
      const status = await send(agent, call)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      if (status >= 200 && status < 300) ok++
      else if (status === 0) await new Promise((r) => setTimeout(r, 50)) // no busy loop on a dead server
    }
  }
  const loops = Array.from({ length: concurrency }, loop)
  return {
    ok: () => ok,
    stop: async () => {
      running = false
      await Promise.all(loops)
      agent.destroy()
      return Object.fromEntries([...statuses].map(([status, count]) => [String(status), count]))
    }
  }
}
