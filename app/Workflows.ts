// The durable workflow engine (effect/cluster, state in the same Postgres) with our workflows registered, and the
// cluster-wide crons (one runner fires each): the subscription sweep every minute, the recovery of interrupted
// orders every ORDER_RECOVERY_SECONDS, and the hourly reconciliation of our records with the upstreams.
import { NodeCrypto } from "@effect/platform-node"
import { Cron, DateTime, Duration, Effect, Layer } from "effect"
import {
  ClusterCron,
  ClusterWorkflowEngine,
  RunnerHealth,
  Runners,
  Sharding,
  ShardingConfig,
  SqlMessageStorage
} from "effect/cluster"
import { GuardedSqlRunnerStorage } from "./EngineLocks.ts"
import { recoverOrders } from "../domain/billing/Ordering.ts"
import { RestoreGameLive, sweepGameLifecycle, SuspendGameLive, TerminateGameLive } from "../domain/game/GameLifecycle.ts"
import { ProvisionGameLive } from "../domain/game/ProvisionGame.ts"
import { sweepLifecycle, SuspendVpsLive, TerminateVpsLive } from "../domain/vps/Lifecycle.ts"
import { ProvisionVpsLive } from "../domain/vps/ProvisionVps.ts"
import { reconcileAndLog } from "../domain/ops/Reconciler.ts"

/**
 * One runner per process (SingleRunner's wiring: no runner-to-runner transport, message and runner storage in SQL): a
 * workflow interrupted by a crash is picked up again when the process starts. On embedded PGlite every connection
 * shares one session, so shard locks use table leases instead of session-scoped advisory locks.
 *
 * After a database outage the engine interrupts its workflows, takes its shards again and replays each workflow
 * from storage; the lock storage is guarded so that this always happens (EngineLocks.ts). `lockRefresh`
 * (WORKFLOW_LOCK_REFRESH_SECONDS; effect/cluster's default is 10 s) paces it: the locks are confirmed that often,
 * which is how an outage is noticed (at the latest one interval after the database is back), the unhealthy lock
 * storage is probed that often, and one lock operation may take that long (the first one after an outage runs into
 * that deadline on the connection the outage broke). So every workflow is under way again within about three
 * intervals of the restore. Lock leases still expire after effect/cluster's 35 s.
 *
 * `poll` (WORKFLOW_POLL_MS; effect/cluster's default is 10 s) is how often the engine reads its database for messages
 * no call in this process announced: a cron run or a durable timer coming due, work sent by another instance to a
 * shard this one holds. It also paces the engine's attempts to take shards it does not hold yet.
 */
export const WorkflowEngineLive = (options: {
  readonly embedded: boolean
  readonly lockRefresh: Duration.Duration
  readonly poll: Duration.Duration
}) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(Sharding.layer.pipe(
      Layer.provideMerge(Runners.layerNoop),
      Layer.provideMerge(SqlMessageStorage.layer),
      Layer.provide([GuardedSqlRunnerStorage, RunnerHealth.layerNoop]),
      Layer.provide(ShardingConfig.layerFromEnv({
        shardLockDisableAdvisory: options.embedded,
        shardLockRefreshInterval: options.lockRefresh,
        entityMessagePollInterval: options.poll
      }))
    )),
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

/**
 * Orders an interrupted process left behind are carried on by whichever instance runs the cron: an order untouched for
 * `everySeconds` is settled at the next run (so within about twice that).
 */
export const OrderRecoveryCronLive = (everySeconds: number) =>
  ClusterCron.make({
    name: "order-recovery",
    cron: Cron.parseUnsafe(everySeconds >= 60 ? "0 * * * * *" : `*/${everySeconds} * * * * *`),
    execute: recoverOrders(Duration.seconds(everySeconds)).pipe(
      Effect.catchCause((cause) => Effect.logError("recovering interrupted orders failed", cause))
    ),
    skipIfOlderThan: "10 minutes"
  })

/** Every hour, our records against the clusters and panels: a report in the log; nothing is changed. */
export const ReconcileCronLive = ClusterCron.make({
  name: "reconcile",
  cron: Cron.parseUnsafe("17 * * * *"),
  execute: reconcileAndLog.pipe(Effect.catchCause((cause) => Effect.logError("reconciling with the upstreams failed", cause))),
  skipIfOlderThan: "30 minutes"
})

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
