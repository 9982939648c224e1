// Specification of an operator's suspension of a service (issue 14 §2): recorded and audited, done upstream through
// the product, told to the customer as a statement of reasons; no renewal, paid or not, and no lifecycle pass brings
// the service back while the hold is in force; lifting it brings back a paid service only.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as MemoryAuditLog from "../../../adapters/fake/MemoryAuditLog.ts"
import { UserId } from "../../../domain/account/User.ts"
import { suspendService, terminateService, unsuspendService } from "../../../domain/backoffice/serviceHolds.ts"
import type { Operator } from "../../../domain/backoffice/customers.ts"
import { renewSubscription } from "../../../domain/billing/Renewal.ts"
import { sweepLifecycle } from "../../../domain/billing/sweepLifecycle.ts"
import { AuditLog } from "../../../ports/AuditLog.ts"
import { ServiceHolds } from "../../../ports/ServiceHolds.ts"
import { alice, dnsEnv, ordered, recordStatus, subscriptionOf, until, zone } from "../../support/dnsEnv.ts"
import { dnsPlan } from "../../support/dnsZoneProduct.ts"
import { noticesOf } from "../../support/recordedNotices.ts"

const env = Layer.merge(dnsEnv, MemoryAuditLog.layer)
const support: Operator = { id: UserId.make("00000000-0000-4000-8000-00000000500f"), role: "support", address: "192.0.2.7" }
const statement = { facts: "Phishing pages for a bank reported on 1 March.", ground: "illegal_content" } as const

const heldZone = (name: string) =>
  Effect.gen(function*() {
    const order = yield* ordered(name)
    const subscriptionId = order.subscriptionId ?? ""
    const hold = yield* suspendService(support, subscriptionId, statement)
    return { subscriptionId, hold }
  })

const serving = (name: string) => Effect.map(zone(name), (z) => z?.serving)

describe("an operator's suspension of a service", () => {
  it.effect("stops it, tells the customer the decision, facts and ground, and is audited with before and after", () =>
    Effect.gen(function*() {
      const { hold, subscriptionId } = yield* heldZone("held.fr")
      assert.isFalse(yield* serving("held.fr"))
      assert.strictEqual(yield* recordStatus(subscriptionId), "suspended")
      // The subscription itself goes on: it is the service that is held, not the contract.
      assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "active")
      assert.deepStrictEqual(yield* noticesOf("ServiceHeld"), [{
        _tag: "ServiceHeld",
        userId: alice,
        service: { subscriptionId, kind: "dns-zone", planName: dnsPlan.name },
        holdId: hold.id,
        placedAt: hold.placedAt,
        facts: statement.facts,
        ground: statement.ground
      }])
      const [event, ...others] = yield* (yield* AuditLog).list({ actions: ["staff.service_suspended"], limit: 10 })
      assert.deepStrictEqual(others, [])
      assert.deepInclude(event, {
        actorId: support.id,
        actorRole: "support",
        subjectUserId: UserId.make(alice),
        target: { type: "subscription", id: subscriptionId },
        address: "192.0.2.7",
        before: { held: false, status: "active" }
      })
    }).pipe(Effect.provide(env)))

  it.effect("asked twice, or by two operators at once, is one hold, audited once, told for that hold", () =>
    Effect.gen(function*() {
      const order = yield* ordered("twice.fr")
      const subscriptionId = order.subscriptionId ?? ""
      const holds = yield* Effect.all([
        suspendService(support, subscriptionId, statement),
        suspendService({ ...support, id: UserId.make("00000000-0000-4000-8000-0000000a0d11") }, subscriptionId, statement)
      ], { concurrency: "unbounded" })
      assert.strictEqual(holds[0].id, holds[1].id)
      yield* suspendService(support, subscriptionId, statement)
      assert.lengthOf(yield* (yield* ServiceHolds).history(subscriptionId), 1)
      // Told for one hold, whoever asked (the real Notices sends one e-mail per hold: its key names the hold).
      assert.deepStrictEqual([...new Set((yield* noticesOf("ServiceHeld")).map((n) => n.holdId))], [holds[0].id])
      assert.lengthOf(yield* (yield* AuditLog).list({ actions: ["staff.service_suspended"], limit: 10 }), 1)
    }).pipe(Effect.provide(env)))

  it.effect("is not undone by the lifecycle cron, nor by a renewal paid after the period lapsed", () =>
    Effect.gen(function*() {
      const { subscriptionId } = yield* heldZone("lapsed.fr")
      // The cron runs all month long: the service stays held.
      for (let day = 0; day < 3; day++) {
        yield* TestClock.adjust("1 day")
        yield* sweepLifecycle
      }
      assert.isFalse(yield* serving("lapsed.fr"))
      // The period lapses unpaid; then the customer pays the renewal.
      yield* TestClock.adjust("30 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "suspended"))
      const renewed = yield* renewSubscription(alice, subscriptionId)
      assert.strictEqual(renewed.status, "active")
      // Whatever the renewal's return would do has had its chance: the service is still stopped.
      yield* sweepLifecycle
      yield* TestClock.adjust("1 minute")
      yield* sweepLifecycle
      assert.strictEqual(yield* recordStatus(subscriptionId), "suspended")
      assert.isFalse(yield* serving("lapsed.fr"))
      // Lifting the hold brings the paid service back.
      yield* unsuspendService(support, subscriptionId, "The pages were removed.")
      assert.strictEqual(yield* recordStatus(subscriptionId), "active")
      assert.isTrue(yield* serving("lapsed.fr"))
      assert.lengthOf(yield* noticesOf("HoldLifted"), 1)
    }).pipe(Effect.provide(env)))

  it.effect("is not undone by a renewal paid while the subscription is still active", () =>
    Effect.gen(function*() {
      const { subscriptionId } = yield* heldZone("early.fr")
      const before = (yield* subscriptionOf(subscriptionId)).currentPeriodEnd
      const renewed = yield* renewSubscription(alice, subscriptionId)
      assert.isAbove(renewed.currentPeriodEnd.getTime(), before.getTime())
      yield* sweepLifecycle
      assert.strictEqual(yield* recordStatus(subscriptionId), "suspended")
      assert.isFalse(yield* serving("early.fr"))
    }).pipe(Effect.provide(env)))

  it.effect("lifted after the period lapsed unpaid, leaves the service suspended until it is paid", () =>
    Effect.gen(function*() {
      const { subscriptionId } = yield* heldZone("unpaid.fr")
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "suspended"))
      const lifted = yield* unsuspendService(support, subscriptionId, "Resolved.")
      assert.strictEqual(lifted.liftReason, "Resolved.")
      assert.strictEqual(yield* recordStatus(subscriptionId), "suspended")
      assert.isTrue(Option.isNone(yield* (yield* ServiceHolds).inForce(subscriptionId)))
      // Now a renewal brings it back, as for any lapsed service.
      yield* renewSubscription(alice, subscriptionId)
      yield* until(Effect.map(recordStatus(subscriptionId), (s) => s === "active"))
      assert.isTrue(yield* serving("unpaid.fr"))
    }).pipe(Effect.provide(env)))

  it.effect("ended by an admin once held: gone upstream, the subscription terminated, the customer told, never renewed", () =>
    Effect.gen(function*() {
      const order = yield* ordered("ended.fr")
      const subscriptionId = order.subscriptionId ?? ""
      const admin: Operator = { ...support, role: "admin" }
      assert.strictEqual((yield* Effect.flip(terminateService(admin, subscriptionId, "Repeated abuse.")))._tag, "ServiceNotHeld")
      assert.isTrue(yield* serving("ended.fr"))
      yield* suspendService(support, subscriptionId, statement)
      yield* terminateService(admin, subscriptionId, "Repeated abuse.")
      assert.isUndefined(yield* zone("ended.fr"))
      assert.strictEqual(yield* recordStatus(subscriptionId), "deleted")
      assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "terminated")
      assert.deepStrictEqual((yield* noticesOf("ServiceEnded")).map((n) => n.service.subscriptionId), [subscriptionId])
      const [event] = yield* (yield* AuditLog).list({ actions: ["staff.service_terminated"], limit: 10 })
      assert.deepInclude(event, { actorRole: "admin", after: { status: "terminated", reason: "Repeated abuse." } })
      assert.strictEqual((yield* Effect.flip(renewSubscription(alice, subscriptionId)))._tag, "SubscriptionEnded")
      assert.strictEqual((yield* Effect.flip(terminateService(admin, subscriptionId, "Again.")))._tag, "ServiceGone")
    }).pipe(Effect.provide(env)))

  it.effect("refuses to lift what is not held, and to hold what does not exist", () =>
    Effect.gen(function*() {
      const order = yield* ordered("free.fr")
      const notHeld = yield* Effect.flip(unsuspendService(support, order.subscriptionId ?? "", "No reason."))
      assert.strictEqual(notHeld._tag, "ServiceNotHeld")
      const missing = yield* Effect.flip(suspendService(support, "00000000-0000-4000-8000-000000000000", statement))
      assert.strictEqual(missing._tag, "ServiceNotFound")
      assert.isTrue(yield* serving("free.fr"))
    }).pipe(Effect.provide(env)))
})
