// What time does to a game server: at the period end without renewal it is stopped and suspended on the panel;
// a renewal unsuspends it; after the grace window it is deleted and its allocation goes back. Our record holds
// the state (the panel forgets a suspension on reinstall or unsuspend, reference §2.6). Billing runs each transition as
// a durable workflow with an idempotency key (registerProduct.ts), so sweeping twice or resuming after a crash is
// harmless.
import { Clock, Duration, Effect, Option } from "effect"
import { GameAllocations } from "../../ports/GameAllocations.ts"
import { GamePanel } from "../../ports/GamePanel.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { periodWorkflow, terminationWorkflow } from "../billing/lapse.ts"
import { alert } from "../ops/alert.ts"
import { GameSettings } from "./GameSettings.ts"

export const SuspendGame = periodWorkflow("SuspendGame")

export const TerminateGame = terminationWorkflow("TerminateGame")

const serverOf = (subscriptionId: string) =>
  Effect.flatMap(GameServerRecords, (records) => records.bySubscription(subscriptionId))

/**
 * The lapse: our record first (from there our API refuses console, power and files, and open relays close), then the
 * server killed and suspended on the panel.
 */
export const suspendGame = (subscriptionId: string, periodEnd: Date) =>
  Effect.gen(function*() {
    const server = yield* serverOf(subscriptionId)
    if (Option.isNone(server) || server.value.status === "deleted") return
    // Also when it is suspended already (an operator's hold): the grace window is always this period's.
    const grace = Duration.toMillis((yield* GameSettings).gracePeriod)
    yield* (yield* GameServerRecords).setStatus(server.value.id, "suspended", {
      graceUntil: new Date(periodEnd.getTime() + grace)
    })
    const panel = yield* GamePanel
    // Kill first: once suspended the Client API answers 409, and Wings' own stop on sync is graceful (a minute).
    yield* panel.power(server.value.panel, server.value.uuid, "kill").pipe(
      Effect.catchTag(["ServerStateConflict", "PanelRefused", "PanelValidationFailed", "PanelResourceNotFound"], () => Effect.void)
    )
    yield* panel.suspend(server.value.panel, server.value.panelServerId).pipe(
      Effect.catchTag("PanelResourceNotFound", () => Effect.void)
    )
  })

/**
 * After the grace window: the panel server deleted, only while it is still the one made for our order; refused (false)
 * otherwise, with an alert: the server then stays, for an operator.
 */
export const removeGame = (subscriptionId: string) =>
  Effect.gen(function*() {
    const server = yield* serverOf(subscriptionId)
    if (Option.isNone(server) || server.value.status === "deleted") return true
    return yield* (yield* GamePanel).deleteOurServer(server.value.panel, server.value.panelServerId, server.value.orderId).pipe(
      Effect.as(true),
      Effect.catchTag("PanelServerNotOurs", (e) =>
        Effect.as(
          alert(`refused to delete server ${e.id} on panel ${e.panel}: ${e.message}; left untouched for an operator`, {
            subscriptionId
          }),
          false
        ))
    )
  })

/** The deleted server's allocation goes back, and its record says deleted. */
export const releaseGame = (subscriptionId: string) =>
  Effect.gen(function*() {
    const server = yield* serverOf(subscriptionId)
    if (Option.isNone(server)) return
    yield* (yield* GameAllocations).release(server.value.orderId)
    yield* (yield* GameServerRecords).setStatus(server.value.id, "deleted", {
      graceUntil: null,
      deletedAt: new Date(yield* Clock.currentTimeMillis)
    })
  })

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
