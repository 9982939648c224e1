// The durable workflow engine (effect/cluster, state in the same Postgres) with our workflows registered, and
// the cluster-wide cron that sweeps subscriptions every minute (one runner fires it).
import { NodeCrypto } from "@effect/platform-node"
import { type Cron, DateTime, Effect, Layer } from "effect"
import { ClusterCron, ClusterWorkflowEngine, SingleRunner } from "effect/cluster"
import { reconcileOrders } from "../domain/billing/Ordering.ts"
import { RestoreGameLive, sweepGameLifecycle, SuspendGameLive, TerminateGameLive } from "../domain/game/GameLifecycle.ts"
import { ProvisionGameLive } from "../domain/game/ProvisionGame.ts"
import { sweepLifecycle, SuspendVpsLive, TerminateVpsLive } from "../domain/vps/Lifecycle.ts"
import { ProvisionVpsLive } from "../domain/vps/ProvisionVps.ts"

/**
 * One runner per process (SingleRunner) with message and runner storage in SQL: a workflow interrupted by a
 * crash is picked up again when the process starts. On embedded PGlite every connection shares one session,
 * so shard locks use table leases instead of session-scoped advisory locks.
 */
export const WorkflowEngineLive = (options: { readonly embedded: boolean }) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(SingleRunner.layer({
      runnerStorage: "sql",
      shardingConfig: { shardLockDisableAdvisory: options.embedded }
    })),
    Layer.provide(NodeCrypto.layerDigest)
  )

export const WorkflowsLive = Layer.mergeAll(
  ProvisionVpsLive,
  SuspendVpsLive,
  TerminateVpsLive,
  ProvisionGameLive,
  SuspendGameLive,
  TerminateGameLive,
  RestoreGameLive
)

/** Orders a dead process left unfinished are resumed (or refunded) once the engine runs. */
export const ReconcileOrdersLive = Layer.effectDiscard(
  reconcileOrders.pipe(Effect.catchCause((cause) => Effect.logError("reconciling unfinished orders failed", cause)))
)

/** The subscription sweep on `schedule` (LIFECYCLE_CRON, every minute by default); each run logs the time it is for. */
export const LifecycleCronLive = (schedule: Cron.Cron) => ClusterCron.make({
  name: "subscription-lifecycle",
  cron: schedule,
  // One kind's trouble (its upstream down) must not hold back the other's sweep.
  execute: Effect.gen(function*() {
    const at = yield* ClusterCron.CurrentScheduledTime
    yield* Effect.logDebug(`lifecycle sweep for ${DateTime.formatIso(at)}`)
    yield* Effect.all([
      sweepLifecycle.pipe(Effect.catchCause((cause) => Effect.logError("VPS lifecycle sweep failed", cause))),
      sweepGameLifecycle.pipe(Effect.catchCause((cause) => Effect.logError("game server lifecycle sweep failed", cause)))
    ], { discard: true })
  }),
  skipIfOlderThan: "10 minutes"
})
