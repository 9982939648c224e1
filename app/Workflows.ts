// Our workflows, registered with the durable workflow engine (app/Engine.ts), and the cluster-wide crons (one runner
// fires each): the subscription sweep every minute, the recovery of interrupted orders every ORDER_RECOVERY_SECONDS,
// the customer e-mails to send again every NOTICE_RETRY_SECONDS, and the hourly reconciliation of our records with the upstreams.
import { Cron, DateTime, Duration, Effect, Layer } from "effect"
import { ClusterCron } from "effect/cluster"
import { HostedServices } from "../domain/billing/HostedService.ts"
import { recoverOrders } from "../domain/billing/Ordering.ts"
import { sweepRenewals } from "../domain/billing/autoRenewal.ts"
import { sweepLifecycle } from "../domain/billing/sweepLifecycle.ts"
import { finishWithdrawals } from "../domain/billing/withdrawal.ts"
import { GameHosting } from "../domain/game/GameHosting.ts"
import { VpsHosting } from "../domain/vps/VpsHosting.ts"
import { reconcileAndLog } from "../domain/reconcile/Reconciler.ts"
import { retryDueNotices } from "../domain/notices/deliverNotices.ts"
import { recordCronStart } from "../domain/ops/metrics.ts"

/** A cron's run, its lag behind its scheduled time measured first (cron_lag_seconds, README "Metrics"). */
const measured = <E, R>(name: string, execute: Effect.Effect<void, E, R>) =>
  Effect.andThen(
    Effect.flatMap(ClusterCron.CurrentScheduledTime, (at) => recordCronStart(name, DateTime.toEpochMillis(at))),
    execute
  )

/** What we sell, one line per product: each registers its workflows and itself, by kind, for billing. */
export const ProductsLive = Layer.mergeAll(
  VpsHosting,
  GameHosting
).pipe(Layer.provideMerge(HostedServices.layer))

/**
 * Orders an interrupted process left behind are carried on by whichever instance runs the cron: an order untouched for
 * `everySeconds` is settled at the next run (so within about twice that).
 */
export const OrderRecoveryCronLive = (everySeconds: number) =>
  ClusterCron.make({
    name: "order-recovery",
    cron: Cron.parseUnsafe(everySeconds >= 60 ? "0 * * * * *" : `*/${everySeconds} * * * * *`),
    execute: measured("order-recovery", recoverOrders(Duration.seconds(everySeconds)).pipe(
      Effect.catchCause((cause) => Effect.logError("recovering interrupted orders failed", cause))
    )),
    skipIfOlderThan: "10 minutes"
  })

/** The customer e-mails a mail server failed to take, tried again every `everySeconds` (each on its own backoff). */
export const NoticeRetryCronLive = (everySeconds: number) =>
  ClusterCron.make({
    name: "customer-notices",
    cron: Cron.parseUnsafe(everySeconds >= 60 ? `0 */${Math.floor(everySeconds / 60)} * * * *` : `*/${everySeconds} * * * * *`),
    execute: measured(
      "customer-notices",
      retryDueNotices.pipe(Effect.catchCause((cause) => Effect.logError("retrying customer notices failed", cause)))
    ),
    skipIfOlderThan: "10 minutes"
  })

/** Every hour, our records against the clusters and panels: a report in the log; nothing is changed. */
export const ReconcileCronLive = ClusterCron.make({
  name: "reconcile",
  cron: Cron.parseUnsafe("17 * * * *"),
  execute: measured(
    "reconcile",
    reconcileAndLog.pipe(Effect.catchCause((cause) => Effect.logError("reconciling with the upstreams failed", cause)))
  ),
  skipIfOlderThan: "30 minutes"
})

/**
 * The subscription sweep on `schedule` (LIFECYCLE_CRON, every minute by default); each run logs the time it is for.
 * Renewals first: a period its card pays at its end never lapses. Last, the withdrawals a stopped process left
 * unrefunded are finished.
 */
export const LifecycleCronLive = (schedule: Cron.Cron) => ClusterCron.make({
  name: "subscription-lifecycle",
  cron: schedule,
  execute: Effect.gen(function*() {
    const at = yield* ClusterCron.CurrentScheduledTime
    yield* recordCronStart("subscription-lifecycle", DateTime.toEpochMillis(at))
    yield* Effect.logDebug(`lifecycle sweep for ${DateTime.formatIso(at)}`)
    yield* sweepRenewals.pipe(Effect.catchCause((cause) => Effect.logError("the renewal sweep failed", cause)))
    yield* sweepLifecycle.pipe(Effect.catchCause((cause) => Effect.logError("the lifecycle sweep failed", cause)))
    yield* finishWithdrawals.pipe(Effect.catchCause((cause) => Effect.logError("finishing withdrawals failed", cause)))
  }),
  skipIfOlderThan: "10 minutes"
})
