// Specification of what the platform measures, on a registry of the test's own: a step's final outcome counted once
// per step (a polled step's attempts under one name), an upstream call's latency and its error or 429, and a cron's lag.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { TestClock } from "effect/testing"
import { PrometheusMetrics } from "effect/observability"
import { countStep, meterUpstream, recordCronStart } from "../../../domain/ops/metrics.ts"
import { sample } from "../../support/prometheus.ts"

const isolated = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Metric.MetricRegistry, new Map())


describe("metrics", () => {
  it.effect("a workflow step counts its outcome once, attempts of a polled step under one name", () =>
    isolated(Effect.gen(function*() {
      yield* countStep("clone-wait-1", Effect.void)
      yield* countStep("clone-wait-2", Effect.void)
      yield* Effect.flip(countStep("configure", Effect.fail("no")))
      const text = yield* PrometheusMetrics.format()
      assert.strictEqual(sample(text, "workflow_step_outcomes_total", { step: "clone-wait", outcome: "success" }), 2)
      assert.strictEqual(sample(text, "workflow_step_outcomes_total", { step: "configure", outcome: "failure" }), 1)
      assert.isUndefined(sample(text, "workflow_step_outcomes_total", { step: "clone-wait-1" }))
    })))

  it.effect("an upstream call is timed, and its error or 429 counted under its upstream", () =>
    isolated(Effect.gen(function*() {
      const outcomeOf = (e: { readonly status: number }) => (e.status === 429 ? "throttled" as const : "error" as const)
      yield* meterUpstream("pterodactyl", outcomeOf, Effect.void)
      yield* Effect.flip(meterUpstream("pterodactyl", outcomeOf, Effect.fail({ status: 429 })))
      yield* Effect.flip(meterUpstream("pterodactyl", outcomeOf, Effect.fail({ status: 502 })))
      yield* Effect.flip(meterUpstream("proxmox", outcomeOf, Effect.fail({ status: 500 })))
      const text = yield* PrometheusMetrics.format()
      assert.strictEqual(sample(text, "upstream_throttled_total", { upstream: "pterodactyl" }), 1)
      assert.strictEqual(sample(text, "upstream_errors_total", { upstream: "pterodactyl" }), 1)
      assert.strictEqual(sample(text, "upstream_errors_total", { upstream: "proxmox" }), 1)
      assert.strictEqual(sample(text, "upstream_request_duration_seconds_count", { upstream: "pterodactyl", outcome: "ok" }), 1)
      assert.strictEqual(sample(text, "upstream_request_duration_seconds_count", { upstream: "pterodactyl", outcome: "throttled" }), 1)
    })))

  it.effect("a cron's lag is how late it started after its scheduled time", () =>
    isolated(Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_012_500)
      yield* recordCronStart("subscription-lifecycle", 1_700_000_010_000)
      const text = yield* PrometheusMetrics.format()
      assert.strictEqual(sample(text, "cron_lag_seconds", { cron: "subscription-lifecycle" }), 2.5)
      assert.strictEqual(sample(text, "cron_last_run_timestamp_seconds", { cron: "subscription-lifecycle" }), 1700000012)
    })))
})
