// Specification of ordering a game server and its five-step durable provisioning, on in-memory fakes (TestClock
// drives the install): the happy path, options checked before paying, install failure and install timeout leaving
// nothing behind, an operator's broken plan, and concurrent orders for the last allocations.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import * as UnconfiguredPaymentGateway from "../../../adapters/payments/UnconfiguredPaymentGateway.ts"
import type { Order } from "../../../domain/billing/Billing.ts"
import { placeAs, placePaidOrder, succeededPayments } from "../../support/simulatedStripe.ts"
import { GAME_STEPS } from "../../../domain/game/ProvisionGame.ts"
import { hasRoomFor } from "../../../domain/game/room.ts"
import { Catalog } from "../../../ports/Catalog.ts"
import { DatabaseUnavailable } from "../../../ports/DatabaseUnavailable.ts"
import { GameAllocations } from "../../../ports/GameAllocations.ts"
import { GamePanel } from "../../../ports/GamePanel.ts"
import { GameServerRecords } from "../../../ports/GameServerRecords.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { Orders } from "../../../ports/Orders.ts"
import { Subscriptions } from "../../../ports/Subscriptions.ts"
import { eventually } from "../../support/eventually.ts"
import { gameEnv, gamePlan } from "../../support/gameEnv.ts"
import { noticesOf } from "../../support/recordedNotices.ts"
import { advanceWithPanel, clearPanelFaults, panelControl, panelKeepsFailing, panelPaths, panelRequests, panelServers } from "../../support/simulatedPanel.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"

/** Moves the test clock in small steps (installs and status polls sleep on it) until the order settles. */
const settled = (orderId: string, step: "1 second" | "1 minute" = "1 second") =>
  Effect.gen(function*() {
    const orders = yield* Orders
    for (let i = 0; i < 2_000; i++) {
      const order = Option.getOrThrow(yield* orders.get(orderId))
      if (order.status === "completed" || order.status === "failed") return order
      yield* TestClock.adjust(step)
    }
    return yield* Effect.die(new Error(`order ${orderId} did not settle`))
  })

const order = (variables?: Record<string, string>, planId = "mc-2g", user = alice) =>
  placePaidOrder(user, planId, variables === undefined ? {} : { variables })

/** Nothing of a failed order is left on the panel or with us once its undo is done, and the charge is refunded. */
const assertCleanFailure = (failed: Order) =>
  Effect.gen(function*() {
    assert.strictEqual(failed.status, "failed")
    yield* eventually(Effect.flatMap(Orders, (o) => o.pendingCleanups), (all) => !all.some((c) => c.orderId === failed.id), 60)
    assert.include(failed.failureReason ?? "", "refunded")
    assert.isNull(yield* (yield* GamePanel).serverForOrder("sandbox", failed.id))
    assert.isTrue(Option.isNone(yield* (yield* GameAllocations).held(failed.id)))
    const ledger = yield* (yield* Ledger).forOrder(failed.id)
    assert.deepStrictEqual(ledger.map((e) => e.kind).sort(), ["charge", "refund"])
    assert.strictEqual(Option.getOrThrow(yield* (yield* Subscriptions).get(failed.subscriptionId!)).status, "failed")
  })

/** Runs `effect` with Orders refusing to create anything: a test that passes proves no order row was written. */
const withoutCreatingOrders = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Orders, (orders) =>
    Effect.provideService(effect, Orders, { ...orders, create: () => Effect.die(new Error("an order was created")) }))

describe("an order refused before anything of it exists", () => {
  it.effect("without a configured payment gateway: PaymentsNotConfigured, no order, no subscription", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(withoutCreatingOrders(order({ MINECRAFT_VERSION: "1.21.1" })))
      assert.strictEqual(error._tag, "PaymentsNotConfigured")
      // Asked before the plan: even an unknown plan gets the same answer.
      assert.strictEqual((yield* Effect.flip(withoutCreatingOrders(order(undefined, "no-such-plan"))))._tag, "PaymentsNotConfigured")
      assert.deepStrictEqual(yield* (yield* Subscriptions).forUser(alice), [])
    }).pipe(Effect.provide(UnconfiguredPaymentGateway.layer), Effect.provide(gameEnv())))

  it.effect("a game plan whose panel is retired is not for sale: PlanUnavailable, nothing charged", () =>
    Effect.gen(function*() {
      yield* (yield* Catalog).retire("panel", "sandbox")
      const error = yield* Effect.flip(withoutCreatingOrders(order()))
      assert.strictEqual(error._tag, "PlanUnavailable")
      assert.deepStrictEqual(yield* succeededPayments, [])
    }).pipe(Effect.provide(gameEnv())))
})

describe("an order refused before anything is charged when the panel has no room for it", () => {
  /** A plan no node of the simulated panel can hold (its node has 16 GiB). */
  const hugePlan = { ...gamePlan, id: "mc-huge", name: "Minecraft huge", memoryMiB: 1_024 * 1_024 }
  const nodeCalls = panelRequests("GET", /^\/api\/application\/nodes/)

  it.effect("a plan no node has the memory for: SoldOut, no order, nothing charged, the panel asked once", () =>
    Effect.gen(function*() {
      yield* (yield* Catalog).upsertPlan(hugePlan)
      assert.deepInclude(yield* Effect.flip(withoutCreatingOrders(order(undefined, hugePlan.id))), { _tag: "SoldOut", planId: hugePlan.id })
      assert.deepStrictEqual(yield* succeededPayments, [])
      assert.strictEqual(yield* nodeCalls, 1)
      assert.deepStrictEqual(yield* panelServers, [])
    }).pipe(Effect.provide(gameEnv())))

  it.effect("once the node's ten allocations are held, the next order is SoldOut; one given back, it is taken again", () =>
    Effect.gen(function*() {
      const users = Array.from({ length: 10 }, (_, i) => `00000000-0000-4000-8000-0000000001${String(i).padStart(2, "0")}`)
      const placed = yield* Effect.forEach(users, (user) => order(undefined, "mc-2g", user))
      // Claimed at step 3, before any server exists: the claims of orders under way count.
      const allocations = yield* GameAllocations
      yield* eventually(Effect.forEach(placed, (o) => allocations.held(o.id)), (held) => held.every(Option.isSome), 60)
      assert.deepInclude(yield* Effect.flip(withoutCreatingOrders(order())), { _tag: "SoldOut", planId: "mc-2g" })
      const settledAll = yield* Effect.forEach(placed, (o) => settled(o.id))
      assert.deepStrictEqual(settledAll.map((o) => o.status), placed.map(() => "completed"))
      assert.deepInclude(yield* Effect.flip(withoutCreatingOrders(order())), { _tag: "SoldOut", planId: "mc-2g" })
      assert.strictEqual((yield* succeededPayments).length, 10)
      yield* Effect.map(panelControl, (c) => c.addAllocations(1, "192.0.2.50", [25_565]))
      assert.strictEqual((yield* settled((yield* order()).id)).status, "completed")
    }).pipe(Effect.provide(gameEnv())))

  it.effect("a panel that cannot tell does not stop the sale: the order is taken, and provisioned once the panel answers", () =>
    Effect.gen(function*() {
      yield* panelKeepsFailing("GET", /^\/api\/application\/nodes/)
      const placed = yield* order()
      assert.strictEqual((yield* succeededPayments).length, 1)
      yield* clearPanelFaults
      assert.strictEqual((yield* settled(placed.id)).status, "completed")
    }).pipe(Effect.provide(gameEnv())))

  it.effect("a database that does not answer fails the check as DatabaseUnavailable (503 at the edge), not a defect", () =>
    Effect.gen(function*() {
      const allocations = yield* GameAllocations
      const down = { ...allocations, onPanel: () => Effect.fail(new DatabaseUnavailable({})) }
      const error = yield* Effect.flip(hasRoomFor(gamePlan).pipe(Effect.provideService(GameAllocations, down)))
      assert.strictEqual(error._tag, "DatabaseUnavailable")
      assert.isTrue(yield* hasRoomFor(gamePlan))
    }).pipe(Effect.provide(gameEnv())))

  it.effect("a panel slower than the room check's bound does not hold the order up: taken once the bound passes", () =>
    Effect.gen(function*() {
      // The adapter retries a failing panel for a minute of the clock: the check gives up at its own bound first.
      yield* panelKeepsFailing("GET", /^\/api\/application\/nodes/)
      const placing = yield* Effect.forkChild(order())
      yield* advanceWithPanel("1 second", 4)
      assert.isUndefined(placing.pollUnsafe())
      yield* advanceWithPanel("1 second", 2)
      yield* Fiber.join(placing)
      assert.strictEqual((yield* succeededPayments).length, 1)
    }).pipe(Effect.provide(gameEnv({ panel: { retries: 6, retryBaseDelay: "10 seconds" } }))))
})

describe("ordering a game server", () => {
  it.effect("tells the customer the game server is ready at its host:port, never the panel's address", () =>
    Effect.gen(function*() {
      const done = yield* settled((yield* order()).id)
      const record = Option.getOrThrow(yield* (yield* GameServerRecords).get(done.serviceId!))
      const ready = yield* eventually(noticesOf("ServiceReady"), (all) => all.length > 0)
      assert.deepStrictEqual(ready, [{
        _tag: "ServiceReady",
        userId: alice,
        service: { subscriptionId: done.subscriptionId!, kind: "game", planName: "Minecraft 2 GB" },
        address: record.address
      }])
      assert.notInclude(JSON.stringify(ready), "panel.lab")
    }).pipe(Effect.provide(gameEnv())))

  it.effect("provisions it in five steps: panel user, node, allocation, server, installed → record and completed order", () =>
    Effect.gen(function*() {
      const placed = yield* order({ MINECRAFT_VERSION: "1.21.1" })
      assert.strictEqual(placed.totalSteps, GAME_STEPS.length)
      const done = yield* settled(placed.id)
      assert.strictEqual(done.status, "completed")
      assert.deepStrictEqual([done.step, done.totalSteps, done.stepName], [5, 5, "Installing the game"])
      const record = Option.getOrThrow(yield* (yield* GameServerRecords).get(done.serviceId!))
      assert.strictEqual(record.status, "active")
      assert.strictEqual(record.userId, alice)
      assert.match(record.address, /^127\.0\.0\.1:255\d\d$/)
      const server = (yield* panelServers).find((s) => s.uuid === record.uuid)!
      assert.strictEqual(server.external_id, placed.id)
      assert.strictEqual(server.identifier, record.identifier)
      assert.strictEqual(server.id, record.panelServerId)
      // Egg defaults, the plan's environment, and the customer's choice.
      assert.deepInclude(server.environment, { SERVER_JARFILE: "server.jar", MINECRAFT_VERSION: "1.21.1", BUILD_NUMBER: "latest" })
      // The panel user is ours: a synthetic address, found by our user id.
      const user = yield* (yield* GamePanel).userFor("sandbox", alice)
      assert.strictEqual(user?.email, `${alice}@users.zh.invalid`)
      const subscription = Option.getOrThrow(yield* (yield* Subscriptions).get(done.subscriptionId!))
      assert.strictEqual(subscription.serviceId, record.id)
      assert.strictEqual(subscription.kind, "game")
    }).pipe(Effect.provide(gameEnv())))

  it.effect("a second order of the same customer reuses the panel user", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* settled((yield* order()).id)).status, "completed")
      assert.strictEqual((yield* settled((yield* order()).id)).status, "completed")
      assert.strictEqual(yield* panelRequests("POST", panelPaths.users), 1)
    }).pipe(Effect.provide(gameEnv())))

  it.effect("refuses settings the plan does not offer or the egg's rules refuse, before charging anything", () =>
    Effect.gen(function*() {
      for (const [variables, field] of [
        [{ SERVER_JARFILE: "evil.jar" }, "options.variables.SERVER_JARFILE"],
        [{ MINECRAFT_VERSION: "x".repeat(21) }, "options.variables.MINECRAFT_VERSION"],
        [{ MINECRAFT_VERSION: "" }, "options.variables.MINECRAFT_VERSION"]
      ] as const) {
        const error = yield* Effect.flip(order(variables))
        assert.strictEqual(error._tag, "InvalidOrderOption")
        if (error._tag === "InvalidOrderOption") assert.strictEqual(error.field, field)
      }
      const bad = yield* Effect.flip(placeAs(alice, "mc-2g", { variables: "MINECRAFT_VERSION=1" }))
      assert.strictEqual(bad._tag, "InvalidOrderOption")
      // Nothing was ordered, so nothing was charged.
      assert.deepStrictEqual(yield* (yield* Orders).unfinished, [])
      assert.deepStrictEqual(yield* succeededPayments, [])
    }).pipe(Effect.provide(gameEnv())))

  it.effect("a failed install fails the order, deletes the panel server, frees the allocation, refunds", () =>
    Effect.gen(function*() {
      const placed = yield* order()
      yield* Effect.map(panelControl, (c) => c.setInstallOutcome({ externalId: placed.id }, "fail"))
      const failed = yield* settled(placed.id)
      assert.strictEqual(failed.failureReason?.startsWith("The game could not be installed."), true)
      yield* assertCleanFailure(failed)
    }).pipe(Effect.provide(gameEnv())))

  it.effect("an install that never finishes times out, and the half-built server is deleted", () =>
    Effect.gen(function*() {
      const placed = yield* order()
      yield* Effect.map(panelControl, (c) => c.setInstallOutcome({ externalId: placed.id }, "hang"))
      const failed = yield* settled(placed.id, "1 minute")
      assert.include(failed.failureReason ?? "", "took too long")
      yield* assertCleanFailure(failed)
    }).pipe(Effect.provide(gameEnv())))

  it.effect("a plan whose image the egg does not offer fails cleanly with a reason that blames us, not the customer", () =>
    Effect.gen(function*() {
      const failed = yield* settled((yield* order(undefined, "mc-broken")).id)
      assert.include(failed.failureReason ?? "", "misconfigured")
      yield* assertCleanFailure(failed)
    }).pipe(Effect.provide(gameEnv())))

  it.effect("20 concurrent orders for 10 allocations: 10 servers, 10 clean failures, no allocation twice", () =>
    Effect.gen(function*() {
      const users = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-0000000000${String(i).padStart(2, "0")}`)
      const placed = yield* Effect.forEach(users, (user) => order(undefined, "mc-2g", user), { concurrency: "unbounded" })
      const settledAll = yield* Effect.forEach(placed, (o) => settled(o.id))
      const completed = settledAll.filter((o) => o.status === "completed")
      const failed = settledAll.filter((o) => o.status === "failed")
      assert.strictEqual(completed.length, 10)
      assert.strictEqual(failed.length, 10)
      for (const f of failed) {
        assert.include(f.failureReason ?? "", "No game server address is free")
        yield* assertCleanFailure(f)
      }
      const servers = yield* panelServers
      assert.strictEqual(servers.length, 10)
      assert.strictEqual(new Set(servers.map((s) => s.allocation)).size, 10)
    }).pipe(Effect.provide(gameEnv())))
})
