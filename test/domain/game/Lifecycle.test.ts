// Specification of a game server's life in time (TestClock): lapse → stopped and suspended on the panel, refused
// by our own API; renewal → unsuspended; after the grace window → deleted, allocation freed; and the actions an
// owner (and nobody else) may take meanwhile.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { placePaidOrder } from "../../support/simulatedStripe.ts"
import { renewSubscription } from "../../../domain/billing/Renewal.ts"
import { checkConsoleToken, issueConsoleToken, ownedByIdentifier, powerGameServer } from "../../../domain/game/GameActions.ts"
import { sweepLifecycle } from "../../../domain/billing/sweepLifecycle.ts"
import { SessionId } from "../../../domain/account/SessionRecord.ts"
import { UserId } from "../../../domain/account/User.ts"
import { GameAllocations } from "../../../ports/GameAllocations.ts"
import { SessionRecords } from "../../../ports/SessionRecords.ts"
import { GamePanel } from "../../../ports/GamePanel.ts"
import { GameServerRecords } from "../../../ports/GameServerRecords.ts"
import { Orders } from "../../../ports/Orders.ts"
import { Subscriptions } from "../../../ports/Subscriptions.ts"
import { alerts, capturedLogs } from "../../support/capturedLogs.ts"
import { gameEnv } from "../../support/gameEnv.ts"
import { panelControl, panelServers } from "../../support/simulatedPanel.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"
const mallory = "00000000-0000-4000-8000-0000000000bb"

/** A live session of `userId` (signed in now, for a week): who console tokens are issued to. */
const signedIn = (userId: string, sessionId: string) =>
  Effect.gen(function*() {
    const at = new Date(yield* Clock.currentTimeMillis)
    const id = SessionId.make(sessionId)
    yield* (yield* SessionRecords).create({
      id,
      userId: UserId.make(userId),
      rememberMe: false,
      createdAt: at,
      lastSeenAt: at,
      expiresAt: new Date(at.getTime() + 7 * 24 * 3600_000),
      userAgent: null,
      address: null
    })
    return { userId, sessionId: id }
  })

/** Lets the workflows run, moving the clock a second at a time, until `done` holds. */
const until = <E, R>(done: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 2_000; i++) {
      if (yield* done) return
      yield* Effect.yieldNow
      if (i % 50 === 49) yield* TestClock.adjust("1 second")
    }
    return yield* Effect.die(new Error("condition never held"))
  })

const provisioned = Effect.gen(function*() {
  const order = yield* placePaidOrder(alice, "mc-2g", {})
  const orders = yield* Orders
  for (let i = 0; i < 200; i++) {
    if (Option.getOrThrow(yield* orders.get(order.id)).status === "completed") break
    yield* TestClock.adjust("1 second")
  }
  const done = Option.getOrThrow(yield* orders.get(order.id))
  assert.strictEqual(done.status, "completed")
  const server = Option.getOrThrow(yield* (yield* GameServerRecords).get(done.serviceId!))
  return { order: done, server, subscriptionId: done.subscriptionId! }
})

const recordStatus = (id: string) => Effect.map(Effect.flatMap(GameServerRecords, (r) => r.get(id)), (s) => Option.getOrThrow(s).status)
const subscriptionOf = (id: string) => Effect.map(Effect.flatMap(Subscriptions, (s) => s.get(id)), Option.getOrThrow)
const panelServer = (uuid: string) =>
  Effect.map(panelServers, (all) => all.find((s) => s.uuid === uuid))

describe("the game server lifecycle", () => {
  it.effect("an owner powers it and gets a console token bound to them, their session and the server; others get nothing", () =>
    Effect.gen(function*() {
      const { server } = yield* provisioned
      const laptop = yield* signedIn(alice, "00000000-0000-4000-8000-00000000a001")
      const phone = yield* signedIn(alice, "00000000-0000-4000-8000-00000000a002")
      const intruder = yield* signedIn(mallory, "00000000-0000-4000-8000-00000000b001")
      yield* powerGameServer(alice, server.id, "start")
      const { token } = yield* issueConsoleToken(laptop, server.identifier)
      yield* checkConsoleToken(laptop, server.identifier, token)
      const refused = (holder: typeof laptop, identifier: string, presented: string) =>
        Effect.map(Effect.flip(checkConsoleToken(holder, identifier, presented)), (e) => e._tag)
      assert.strictEqual(yield* refused(intruder, server.identifier, token), "ConsoleTokenInvalid")
      assert.strictEqual(yield* refused({ ...intruder, userId: alice }, server.identifier, token), "ConsoleTokenInvalid")
      assert.strictEqual(yield* refused(phone, server.identifier, token), "ConsoleTokenInvalid")
      assert.strictEqual(yield* refused(laptop, "ffffffff", token), "ConsoleTokenInvalid")
      assert.strictEqual(yield* refused(laptop, server.identifier, `${token}x`), "ConsoleTokenInvalid")
      assert.strictEqual((yield* Effect.flip(powerGameServer(mallory, server.id, "stop")))._tag, "GameServerNotFound")
      assert.strictEqual((yield* Effect.flip(issueConsoleToken(intruder, server.identifier)))._tag, "GameServerNotFound")
      assert.strictEqual((yield* Effect.flip(ownedByIdentifier(mallory, server.identifier)))._tag, "GameServerNotFound")
      // A token outlives nothing: after its lifetime it is refused.
      yield* TestClock.adjust("11 minutes")
      assert.strictEqual(yield* refused(laptop, server.identifier, token), "ConsoleTokenInvalid")
    }).pipe(Effect.provide(gameEnv())))

  it.effect("a console token stops working when the session it was issued to ends", () =>
    Effect.gen(function*() {
      const { server } = yield* provisioned
      const laptop = yield* signedIn(alice, "00000000-0000-4000-8000-00000000a003")
      const { token } = yield* issueConsoleToken(laptop, server.identifier)
      yield* checkConsoleToken(laptop, server.identifier, token)
      yield* (yield* SessionRecords).end(laptop.sessionId)
      assert.strictEqual((yield* Effect.flip(checkConsoleToken(laptop, server.identifier, token)))._tag, "ConsoleTokenInvalid")
    }).pipe(Effect.provide(gameEnv())))

  it.effect("expiry suspends it (stopped, suspended on the panel, refused by us); renewal brings it back", () =>
    Effect.gen(function*() {
      const { server, subscriptionId } = yield* provisioned
      yield* powerGameServer(alice, server.id, "start")
      yield* TestClock.adjust("29 days")
      yield* sweepLifecycle
      assert.strictEqual(yield* recordStatus(server.id), "active")

      yield* TestClock.adjust("3 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "suspended"))
      assert.strictEqual(yield* recordStatus(server.id), "suspended")
      const suspended = yield* panelServer(server.uuid)
      assert.isTrue(suspended?.suspended)
      assert.strictEqual(suspended?.power, "offline")
      assert.strictEqual((yield* Effect.flip(powerGameServer(alice, server.id, "start")))._tag, "GameServerUnavailable")
      const holder = { userId: alice, sessionId: SessionId.make("00000000-0000-4000-8000-00000000a004") }
      assert.strictEqual((yield* Effect.flip(issueConsoleToken(holder, server.identifier)))._tag, "GameServerUnavailable")
      // Sweeping again changes nothing.
      yield* sweepLifecycle
      assert.strictEqual(yield* recordStatus(server.id), "suspended")

      yield* renewSubscription(alice, subscriptionId)
      yield* until(Effect.map(recordStatus(server.id), (s) => s === "active"))
      assert.isFalse((yield* panelServer(server.uuid))?.suspended)
      assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "active")
      yield* powerGameServer(alice, server.id, "start")
    }).pipe(Effect.provide(gameEnv())))

  it.effect("a renewal racing the lapse, at any point of it, never leaves a paid server suspended", () =>
    Effect.gen(function*() {
      for (const delay of [0, 2, 5, 10, 20, 40, 80, 160, 320, 640]) {
        const { server, subscriptionId } = yield* provisioned
        const periodEnd = (yield* subscriptionOf(subscriptionId)).currentPeriodEnd
        yield* TestClock.setTime(periodEnd.getTime() + 1_000)
        const sweep = yield* Effect.forkChild(sweepLifecycle)
        for (let i = 0; i < delay; i++) yield* Effect.yieldNow
        yield* renewSubscription(alice, subscriptionId)
        yield* Fiber.join(sweep)
        yield* until(Effect.map(recordStatus(server.id), (s) => s === "active"))
        // Let every workflow of this round finish, then look again: nothing suspends it afterwards.
        for (let i = 0; i < 500; i++) yield* Effect.yieldNow
        assert.strictEqual(yield* recordStatus(server.id), "active", `renewed after ${delay} yields`)
        assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "active")
        assert.isFalse((yield* panelServer(server.uuid))?.suspended, `renewed after ${delay} yields`)
      }
    }).pipe(Effect.provide(gameEnv())))

  it.effect("a renewal brings back a server a racing lapse already suspended, though its subscription still read active", () =>
    Effect.gen(function*() {
      const { server, subscriptionId } = yield* provisioned
      yield* TestClock.adjust("31 days")
      // Where a lapse in progress stands after its first steps: record and panel suspended, subscription not yet.
      yield* (yield* GameServerRecords).setStatus(server.id, "suspended", { graceUntil: new Date(Date.now()) })
      yield* (yield* GamePanel).suspend("sandbox", server.panelServerId)
      assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "active")
      yield* renewSubscription(alice, subscriptionId)
      yield* until(Effect.map(recordStatus(server.id), (s) => s === "active"))
      assert.isFalse((yield* panelServer(server.uuid))?.suspended)
    }).pipe(Effect.provide(gameEnv())))

  it.effect("after the grace window the server is deleted from the panel and its allocation freed", () =>
    Effect.gen(function*() {
      const { order, server, subscriptionId } = yield* provisioned
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "suspended"))
      yield* TestClock.adjust("13 days")
      yield* sweepLifecycle
      assert.strictEqual(yield* recordStatus(server.id), "suspended")
      yield* TestClock.adjust("2 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "terminated"))
      assert.strictEqual(yield* recordStatus(server.id), "deleted")
      assert.isUndefined(yield* panelServer(server.uuid))
      assert.isTrue(Option.isNone(yield* (yield* GameAllocations).held(order.id)))
      assert.strictEqual((yield* Effect.flip(renewSubscription(alice, subscriptionId)))._tag, "SubscriptionEnded")
    }).pipe(Effect.provide(gameEnv())))

  it.effect("after the grace window a server whose external id was changed on the panel is not deleted: alert, left as it is", () =>
    Effect.gen(function*() {
      const { order, server, subscriptionId } = yield* provisioned
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "suspended"))
      yield* Effect.map(panelControl, (c) => c.setExternalId(server.panelServerId, "whmcs-service-17"))
      yield* TestClock.adjust("15 days")
      yield* sweepLifecycle
      yield* until(Effect.map(alerts, (a) => a.length > 0))
      assert.include((yield* alerts)[0], `refused to delete server ${server.panelServerId}`)
      for (let i = 0; i < 200; i++) yield* Effect.yieldNow
      assert.isDefined(yield* panelServer(server.uuid))
      assert.strictEqual(yield* recordStatus(server.id), "suspended")
      assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "suspended")
      assert.isTrue(Option.isSome(yield* (yield* GameAllocations).held(order.id)))
    }).pipe(Effect.provide(gameEnv().pipe(Layer.provideMerge(capturedLogs())))))
})
