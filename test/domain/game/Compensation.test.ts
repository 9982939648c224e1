// Specification of what a failed game-server provisioning does when its own undo fails (TestClock drives the
// backoff): the customer is refunded and told at once, the panel server's deletion is retried with growing pauses
// until it succeeds, however long the panel stays down, with an alert; the order shows as a pending cleanup meanwhile.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { placePaidOrder } from "../../support/simulatedStripe.ts"
import { GameAllocations } from "../../../ports/GameAllocations.ts"
import { Orders } from "../../../ports/Orders.ts"
import { alerts, capturedLogs } from "../../support/capturedLogs.ts"
import { atOnce, eventually } from "../../support/eventually.ts"
import { assertRefunded } from "../../support/refunded.ts"
import { gameEnv } from "../../support/gameEnv.ts"
import { advanceWithPanel, clearPanelFaults, panelControl, panelKeepsFailing, panelPaths, panelRequests, panelServers } from "../../support/simulatedPanel.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"

const orderOf = (id: string) => Effect.map(Effect.flatMap(Orders, (o) => o.get(id)), Option.getOrThrow)
const serversOnPanel = panelServers
const deletions = panelRequests("DELETE", panelPaths.server)
const pendingCleanup = (id: string) =>
  Effect.map(Effect.flatMap(Orders, (o) => o.pendingCleanups), (all) => all.find((c) => c.orderId === id))
const held = (id: string) => Effect.map(Effect.flatMap(GameAllocations, (a) => a.held(id)), Option.isSome)

/** An order whose install fails once the server exists on the panel, so the undo has a server to delete. */
const failedInstall = Effect.gen(function*() {
  const placed = yield* placePaidOrder(alice, "mc-2g", {})
  yield* Effect.map(panelControl, (c) => c.setInstallOutcome({ externalId: placed.id }, "fail"))
  return placed
})

const env = () => gameEnv({ installDuration: "1 second" }).pipe(Layer.provideMerge(capturedLogs()))

describe("a failed game-server provisioning whose undo fails", () => {
  it.effect("refunds and fails the order first, then deletes the server once the panel answers again", () =>
    Effect.gen(function*() {
      yield* panelKeepsFailing("DELETE", panelPaths.server, 502)
      const placed = yield* failedInstall
      const failed = yield* eventually(orderOf(placed.id), (o) => o.status === "failed", 120)
      yield* assertRefunded(failed)
      yield* atOnce(deletions, (n) => n >= 1)
      assert.lengthOf(yield* serversOnPanel, 1)
      assert.isTrue(yield* held(placed.id))
      assert.include((yield* pendingCleanup(placed.id))?.lastError ?? "", "HTTP 502")

      // Two hours down: the old undo's budget (10 attempts, about 17 minutes) would have given up long before.
      yield* advanceWithPanel("1 minute", 120)
      assert.isAbove(yield* deletions, 25)
      assert.lengthOf(yield* serversOnPanel, 1)
      yield* clearPanelFaults
      yield* eventually(serversOnPanel, (servers) => servers.length === 0, 400)
      assert.isFalse(yield* eventually(held(placed.id), (h) => !h))
      assert.isUndefined(yield* eventually(pendingCleanup(placed.id), (c) => c === undefined))
      const raised = (yield* alerts).filter((a) => a.includes(placed.id))
      assert.isAtLeast(raised.length, 5)
      assert.include(raised[0], "cleanup of failed order")
      yield* assertRefunded(yield* orderOf(placed.id))
    }).pipe(Effect.provide(env())))

  it.effect("an undo that succeeds at once leaves no pending cleanup and raises no alert", () =>
    Effect.gen(function*() {
      const placed = yield* failedInstall
      yield* assertRefunded(yield* eventually(orderOf(placed.id), (o) => o.status === "failed", 120))
      yield* eventually(serversOnPanel, (servers) => servers.length === 0, 10)
      assert.isUndefined(yield* eventually(pendingCleanup(placed.id), (c) => c === undefined, 10))
      assert.deepStrictEqual(yield* alerts, [])
    }).pipe(Effect.provide(env())))
})
