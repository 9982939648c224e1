// Our workflows, registered with the durable workflow engine (app/Engine.ts), and the cluster-wide crons (one runner
// fires each): the subscription sweep every minute, the recovery of interrupted orders every ORDER_RECOVERY_SECONDS,
// the customer e-mails to send again every NOTICE_RETRY_SECONDS, the hourly reconciliation of our records with the upstreams,
// and the operators' alert checks every ALERT_CHECK_SECONDS.
import { Clock, Cron, DateTime, Duration, Effect, Layer } from "effect"
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
import { checkAlerts } from "../domain/ops/alerting.ts"
import { recordCronStart } from "../domain/ops/metrics.ts"
import { OpsRecords } from "../ports/OpsRecords.ts"

/**
 * A cron's run starts: its lag behind its scheduled time measured (cron_lag_seconds, README "Metrics") and its start
 * recorded for every instance's alert pass to see (a database that does not answer does not hold the run back).
 */
const started = (name: string) =>
  Effect.gen(function*() {
    const at = yield* ClusterCron.CurrentScheduledTime
    yield* recordCronStart(name, DateTime.toEpochMillis(at))
    const now = yield* Clock.currentTimeMillis
    yield* (yield* OpsRecords).cronStarted(name, new Date(now)).pipe(
      Effect.catchCause((cause) => Effect.logWarning(`the start of cron ${name} was not recorded`, cause))
    )
  })

const measured = <E, R>(name: string, execute: Effect.Effect<void, E, R>) => Effect.andThen(started(name), execute)

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
export const NoticeRetryCronLive = (seconds: number) =>
  ClusterCron.make({
    name: "customer-notices",
    cron: everySeconds(seconds),
    execute: measured(
      "customer-notices",
      retryDueNotices.pipe(Effect.catchCause((cause) => Effect.logError("retrying customer notices failed", cause)))
    ),
    skipIfOlderThan: "10 minutes"
  })

/** When the reconciliation runs (every hour). */
export const RECONCILE_CRON = Cron.parseUnsafe("17 * * * *")

/** Every hour, our records against the clusters and panels: a report in the log and an incident; nothing is changed. */
export const ReconcileCronLive = ClusterCron.make({
  name: "reconcile",
  cron: RECONCILE_CRON,
  execute: measured(
    "reconcile",
    reconcileAndLog.pipe(Effect.catchCause((cause) => Effect.logError("reconciling with the upstreams failed", cause)))
  ),
  skipIfOlderThan: "30 minutes"
})

/** A cron expression running every `everySeconds` (whole minutes from 60 up). */
export const everySeconds = (seconds: number) =>
  Cron.parseUnsafe(seconds >= 60 ? `0 */${Math.floor(seconds / 60)} * * * *` : `*/${seconds} * * * * *`)

/** The operators' alert checks (domain/ops/alerting.ts), on one runner of the cluster every `seconds`. */
export const AlertCronLive = (seconds: number) =>
  ClusterCron.make({
    name: "alerts",
    cron: everySeconds(seconds),
    execute: measured("alerts", checkAlerts.pipe(Effect.catchCause((cause) => Effect.logError("the alert checks failed", cause)))),
    skipIfOlderThan: "10 minutes"
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
    yield* started("subscription-lifecycle")
    yield* Effect.logDebug(`lifecycle sweep for ${DateTime.formatIso(at)}`)
    yield* sweepRenewals.pipe(Effect.catchCause((cause) => Effect.logError("the renewal sweep failed", cause)))
    yield* sweepLifecycle.pipe(Effect.catchCause((cause) => Effect.logError("the lifecycle sweep failed", cause)))
    yield* finishWithdrawals.pipe(Effect.catchCause((cause) => Effect.logError("finishing withdrawals failed", cause)))
  }),
  skipIfOlderThan: "10 minutes"
})
