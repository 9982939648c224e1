// What time does to a game server: at the period end without renewal it is stopped and suspended on the panel;
// a renewal unsuspends it; after the grace window it is deleted and its allocation goes back. Our record holds
// the state (the panel forgets a suspension on reinstall or unsuspend, reference §2.6), every transition is a
// durable workflow with an idempotency key, so sweeping twice or resuming after a crash is harmless.
import { Clock, Duration, Effect, Option, Schedule, Schema } from "effect"
import { Activity } from "effect/workflow"
import { GameAllocations } from "../../ports/GameAllocations.ts"
import { GamePanel } from "../../ports/GamePanel.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { lapsedFor, periodWorkflow, stillDue, terminationWorkflow } from "../billing/lapse.ts"
import { alert } from "../ops/alert.ts"
import { GameSettings } from "./GameSettings.ts"
import { dieOnDatabaseOutage } from "../ops/dieOnDatabaseOutage.ts"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const transient = {
  times: 5,
  schedule: Schedule.exponential("1 second"),
  while: (e: { readonly _tag: string }) => e._tag === "GamePanelUnavailable" || e._tag === "GamePanelThrottled"
}

export const SuspendGame = periodWorkflow("SuspendGame")

export const TerminateGame = terminationWorkflow("TerminateGame")

const serverOf = (subscriptionId: string) =>
  Effect.flatMap(GameServerRecords, (records) => records.bySubscription(subscriptionId))

export const SuspendGameLive = SuspendGame.toLayer(Effect.fn(function*({ periodEnd, subscriptionId }) {
  const due = yield* Activity.make({ name: "check", success: Schema.Boolean, execute: dieOnDatabaseOutage(stillDue(subscriptionId, periodEnd)) })
  if (!due) return
  // Our record first: from here our API refuses console, power and files, and open relays close.
  yield* Activity.make({
    name: "record",
    execute: dieOnDatabaseOutage(Effect.gen(function*() {
      const server = yield* serverOf(subscriptionId)
      if (Option.isNone(server) || server.value.status !== "active") return
      const grace = Duration.toMillis((yield* GameSettings).gracePeriod)
      yield* (yield* GameServerRecords).setStatus(server.value.id, "suspended", {
        graceUntil: new Date(new Date(periodEnd).getTime() + grace)
      })
    }))
  })
  yield* Activity.make({
    name: "stop-and-suspend",
    execute: Effect.gen(function*() {
      const server = yield* serverOf(subscriptionId)
      if (Option.isNone(server) || server.value.status === "deleted") return
      const panel = yield* GamePanel
      // Kill first: once suspended the Client API answers 409, and Wings' own stop on sync is graceful (a minute).
      yield* panel.power(server.value.panel, server.value.uuid, "kill").pipe(
        Effect.catchTag(["ServerStateConflict", "PanelRejected", "PanelValidationFailed", "PanelResourceNotFound"], () => Effect.void)
      )
      yield* panel.suspend(server.value.panel, server.value.panelServerId).pipe(
        Effect.catchTag("PanelResourceNotFound", () => Effect.void)
      )
    }).pipe(Effect.retry(transient), Effect.orDie)
  })
  yield* Activity.make({
    name: "settle",
    execute: Effect.gen(function*() {
      if (yield* lapsedFor(subscriptionId, periodEnd)) return
      // Renewed while we suspended it: bring it back.
      yield* restoreGame(subscriptionId).pipe(Effect.retry(transient))
    }).pipe(Effect.orDie)
  })
}))

export const TerminateGameLive = TerminateGame.toLayer(Effect.fn(function*({ subscriptionId }) {
  const proceed = yield* Activity.make({
    name: "check",
    success: Schema.Boolean,
    execute: dieOnDatabaseOutage(Effect.gen(function*() {
      const subscription = yield* (yield* Subscriptions).get(subscriptionId)
      const server = yield* serverOf(subscriptionId)
      const at = yield* now
      return Option.isSome(subscription) && subscription.value.status === "suspended" &&
        Option.isSome(server) && server.value.graceUntil !== null && server.value.graceUntil.getTime() <= at.getTime()
    }))
  })
  if (!proceed) return
  // Refused when the panel server's external id is no longer our order's: the server then stays, for an operator.
  const deleted = yield* Activity.make({
    name: "delete",
    success: Schema.Boolean,
    execute: Effect.gen(function*() {
      const server = yield* serverOf(subscriptionId)
      if (Option.isNone(server) || server.value.status === "deleted") return true
      return yield* (yield* GamePanel).deleteServer(server.value.panel, server.value.panelServerId, server.value.orderId).pipe(
        Effect.as(true),
        Effect.catchTag("PanelServerNotOurs", (e) =>
          Effect.as(
            alert(`refused to delete server ${e.id} on panel ${e.panel}: ${e.message}; left untouched for an operator`, {
              subscriptionId
            }),
            false
          ))
      )
    }).pipe(Effect.retry(transient), Effect.orDie)
  })
  if (!deleted) return
  yield* Activity.make({
    name: "release",
    execute: dieOnDatabaseOutage(Effect.gen(function*() {
      const server = yield* serverOf(subscriptionId)
      if (Option.isNone(server)) return
      yield* (yield* GameAllocations).release(server.value.orderId)
      // The subscription ends first: whoever sees the server deleted sees its subscription terminated.
      yield* (yield* Subscriptions).setStatus(subscriptionId, "terminated", ["suspended"])
      yield* (yield* GameServerRecords).setStatus(server.value.id, "deleted", { graceUntil: null, deletedAt: yield* now })
    }))
  })
}))

/** A renewal inside the grace window: the same server comes back (unsuspended on the panel, then in our record). */
export const restoreGame = Effect.fn("restoreGame")(function*(subscriptionId: string) {
  const records = yield* GameServerRecords
  const server = yield* records.bySubscription(subscriptionId)
  if (Option.isNone(server) || server.value.status === "deleted") return
  yield* (yield* GamePanel).unsuspend(server.value.panel, server.value.panelServerId).pipe(
    Effect.catchTag("PanelResourceNotFound", () => Effect.void)
  )
  yield* records.setStatus(server.value.id, "active", { graceUntil: null })
})

/**
 * The renewal is paid: the unsuspension must happen even if the panel is down right now, so it runs as a durable
 * workflow that keeps trying (keyed by the renewed period, so a double renewal unsuspends once).
 */
export const RestoreGame = periodWorkflow("RestoreGame")
