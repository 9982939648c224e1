// What the platform measures, in one place (Effect's Metric; GET /metrics renders the registry in Prometheus text,
// README "Metrics" lists every name). Series are keyed by a few bounded labels only: a route pattern, never a path;
// an upstream's kind, never a host.
import { Clock, Effect, Exit, Metric } from "effect"
import { Catalog } from "../../ports/Catalog.ts"

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** One metric per distinct label set, made once: the hot path only looks it up. */
const memo = <M>(make: (labels: Readonly<Record<string, string>>) => M) => {
  const made = new Map<string, M>()
  return (labels: Readonly<Record<string, string>>): M => {
    const key = Object.values(labels).join("\u0000")
    let metric = made.get(key)
    if (metric === undefined) {
      metric = make(labels)
      made.set(key, metric)
    }
    return metric
  }
}

export const httpRequestDuration = memo((attributes) =>
  Metric.histogram("http_request_duration_seconds", {
    description: "HTTP requests by method, route pattern and status: time to the response's head",
    boundaries: SECONDS,
    attributes
  }))

const workflowSteps = memo((attributes) =>
  Metric.counter("workflow_step_outcomes_total", {
    description: "Durable workflow steps run, by step and outcome (success, failure)",
    incremental: true,
    attributes
  }))

const upstreamDuration = memo((attributes) =>
  Metric.histogram("upstream_request_duration_seconds", {
    description: "Calls to an upstream (proxmox, pterodactyl), by upstream and outcome (ok, error, throttled)",
    boundaries: SECONDS,
    attributes
  }))

const upstreamErrors = memo((attributes) =>
  Metric.counter("upstream_errors_total", {
    description: "Upstream calls that failed (no answer, or an error status), by upstream",
    incremental: true,
    attributes
  }))

const upstreamThrottled = memo((attributes) =>
  Metric.counter("upstream_throttled_total", {
    description: "Upstream calls answered 429 (rate-limited), by upstream",
    incremental: true,
    attributes
  }))

export const consolesOpen = memo((attributes) =>
  Metric.gauge("consoles_open", { description: "Console WebSockets open on this instance, by kind (vps, game)", attributes }))

const consoleBytes = memo((attributes) =>
  Metric.counter("console_relayed_bytes_total", {
    description: "Bytes relayed by the consoles, by kind (vps, game) and direction (to_browser, to_upstream)",
    incremental: true,
    attributes
  }))

export const cronLag = memo((attributes) =>
  Metric.gauge("cron_lag_seconds", { description: "How late a cron run started after its scheduled time, by cron", attributes }))

export const cronLastRun = memo((attributes) =>
  Metric.gauge("cron_last_run_timestamp_seconds", { description: "When a cron last started (Unix seconds), by cron", attributes }))

export const ipPoolFree = memo((attributes) =>
  Metric.gauge("ip_pool_free_addresses", { description: "Free addresses of each IP pool (read at scrape time)", attributes }))

export const panelAllocationsFree = memo((attributes) =>
  Metric.gauge("panel_allocations_free", {
    description: "Free allocations on each panel's public nodes (read by the alert pass, on the instance that ran it)",
    attributes
  }))

const paymentOutcomes = memo((attributes) =>
  Metric.counter("payment_outcomes_total", {
    description: "Payments by kind (order, renewal, refund) and outcome (succeeded, declined, auth_required, refunded)",
    incremental: true,
    attributes
  }))

export type PaymentKind = "order" | "renewal" | "refund"
export type PaymentOutcome = "succeeded" | "declined" | "auth_required" | "refunded"

/** Counts one payment's outcome. */
export const countPayment = (kind: PaymentKind, outcome: PaymentOutcome) => Metric.update(paymentOutcomes({ kind, outcome }), 1)

/** Counts a durable step's outcome (a retried step counts once, with its final outcome). */
export const countStep = <A, E, R>(name: string, step: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.onExit(step, (exit) =>
    // `check-3`, `clone-wait-12`: the attempt number of a polled step is not a step of its own.
    Metric.update(workflowSteps({ step: name.replace(/-\d+$/, ""), outcome: Exit.isSuccess(exit) ? "success" : "failure" }), 1))

/** How an upstream answered: `ok`, `throttled` (429) or `error` (no answer, or any other failure). */
export type UpstreamOutcome = "ok" | "throttled" | "error"

/** Times one call to `upstream` and counts its errors and throttling; `outcomeOf` reads a failure. */
export const meterUpstream = <A, E, R>(
  upstream: string,
  outcomeOf: (error: E) => UpstreamOutcome,
  call: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.flatMap(Clock.clockWith((clock) => Effect.succeed(clock.currentTimeMillisUnsafe())), (start) =>
    Effect.onExit(call, (exit) =>
      Effect.flatMap(Clock.currentTimeMillis, (end) => {
        const outcome = Exit.isSuccess(exit)
          ? "ok"
          : exit.cause.reasons.some((r) => r._tag === "Fail" && outcomeOf(r.error) === "throttled")
          ? "throttled"
          : "error"
        return Effect.all([
          Metric.update(upstreamDuration({ upstream, outcome }), (end - start) / 1000),
          outcome === "error" ? Metric.update(upstreamErrors({ upstream }), 1) : Effect.void,
          outcome === "throttled" ? Metric.update(upstreamThrottled({ upstream }), 1) : Effect.void
        ], { discard: true })
      })))

/** Counts bytes a console relayed. */
export const countConsoleBytes = (kind: "vps" | "game", direction: "to_browser" | "to_upstream", bytes: number) =>
  Metric.update(consoleBytes({ kind, direction }), bytes)

/** Counts one more open console of `kind` for the current scope (one fewer when it closes). */
export const countOpenConsole = (kind: "vps" | "game") =>
  Effect.acquireRelease(Metric.modify(consolesOpen({ kind }), 1), () => Metric.modify(consolesOpen({ kind }), -1))

/** Sets the capacity gauges from what the catalog says now (at each scrape: never stale, nothing polls meanwhile). */
export const refreshCapacityGauges = Effect.gen(function*() {
  const pools = yield* (yield* Catalog).ipPools
  for (const pool of pools) {
    if (!pool.retired) yield* Metric.update(ipPoolFree({ pool: pool.id }), pool.free)
  }
})

/** A cron run starts: how late it is against the time it was scheduled for (epoch ms), and when it ran. */
export const recordCronStart = (cron: string, scheduledAt: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.andThen(
      Metric.update(cronLag({ cron }), Math.max(0, now - scheduledAt) / 1000),
      Metric.update(cronLastRun({ cron }), Math.floor(now / 1000))
    ))
