// Specification of a VPS's life in time (TestClock): lapse → stopped with a final snapshot (suspended);
// renewal inside the grace window brings it back; after the grace window it is destroyed and its address freed.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { SimulatedCluster } from "../../support/simulatedCluster.ts"
import { addMonth } from "../../../domain/billing/Billing.ts"
import { placePaidOrder } from "../../support/simulatedStripe.ts"
import { cancelSubscription, renewSubscription } from "../../../domain/billing/Renewal.ts"
import { HostedServices } from "../../../domain/billing/HostedService.ts"
import { sweepLifecycle } from "../../../domain/billing/sweepLifecycle.ts"
import { powerVps } from "../../../domain/vps/VpsActions.ts"
import { IpAddresses } from "../../../ports/IpAddresses.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { Orders } from "../../../ports/Orders.ts"
import { Subscriptions } from "../../../ports/Subscriptions.ts"
import { Virtualization, VirtualizationUnavailable } from "../../../ports/Virtualization.ts"
import { VpsRecords } from "../../../ports/VpsRecords.ts"
import { alerts, capturedLogs } from "../../support/capturedLogs.ts"
import { eventually } from "../../support/eventually.ts"
import { vpsEnv, vpsOptions } from "../../support/vpsEnv.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"

/** Lets the in-memory workflows run (they never sleep) until `done` holds. */
const until = <E, R>(done: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 20_000; i++) {
      if (yield* done) return
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error("condition never held"))
  })

const provisioned = Effect.gen(function*() {
  const order = yield* placePaidOrder(alice, "vps-s", vpsOptions("life-1"))
  const orders = yield* Orders
  yield* until(Effect.map(orders.get(order.id), (o) => Option.getOrThrow(o).status === "completed"))
  const done = Option.getOrThrow(yield* orders.get(order.id))
  const vps = Option.getOrThrow(yield* (yield* VpsRecords).get(done.serviceId!))
  return { order: done, vps, subscriptionId: done.subscriptionId! }
})

const vpsStatus = (id: string) => Effect.map(Effect.flatMap(VpsRecords, (r) => r.get(id)), (v) => Option.getOrThrow(v).status)
const subscriptionOf = (id: string) => Effect.map(Effect.flatMap(Subscriptions, (s) => s.get(id)), Option.getOrThrow)
const vmOf = (vmid: number) => Effect.map(SimulatedCluster.vms, (vms) => vms.find((v) => v.vmid === vmid))

describe("the VPS lifecycle", () => {
  it.effect("nothing happens before the period ends", () =>
    Effect.gen(function*() {
      const { vps } = yield* provisioned
      yield* TestClock.adjust("29 days")
      yield* sweepLifecycle
      yield* Effect.yieldNow
      assert.strictEqual(yield* vpsStatus(vps.id), "running")
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("at the period end it is stopped, snapshotted and suspended, and refuses actions", () =>
    Effect.gen(function*() {
      const { subscriptionId, vps } = yield* provisioned
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(vpsStatus(vps.id), (s) => s === "suspended"))
      assert.strictEqual((yield* vmOf(vps.vmid))?.status, "stopped")
      const snapshots = yield* (yield* Virtualization).listSnapshots({ cluster: vps.cluster, node: vps.node, vmid: vps.vmid })
      assert.isTrue(snapshots.some((s) => s.name.startsWith("final-")))
      assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "suspended")
      const refused = yield* Effect.flip(powerVps(alice, vps.id, "start"))
      assert.strictEqual(refused._tag, "VpsUnavailable")
      // Sweeping again changes nothing.
      yield* sweepLifecycle
      yield* Effect.yieldNow
      assert.strictEqual(yield* vpsStatus(vps.id), "suspended")
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("an operator's hold stops and suspends it without a final snapshot; the lapse that follows takes one", () =>
    Effect.gen(function*() {
      const { subscriptionId, vps } = yield* provisioned
      const ref = { cluster: vps.cluster, node: vps.node, vmid: vps.vmid }
      yield* (yield* HostedServices).of("vps").pipe(Effect.flatMap((product) => product.hold(subscriptionId)))
      assert.strictEqual(yield* vpsStatus(vps.id), "suspended")
      assert.strictEqual((yield* vmOf(vps.vmid))?.status, "stopped")
      assert.deepStrictEqual((yield* (yield* Virtualization).listSnapshots(ref)).map((s) => s.name), [])
      // The period then lapses unpaid: its lapse keeps the data before the grace window runs.
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "suspended"))
      yield* until(Effect.map((yield* Virtualization).listSnapshots(ref), (snapshots) => snapshots.some((s) => s.name.startsWith("final-"))))
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a renewal inside the grace window brings the same VM back, running, for a new month", () =>
    Effect.gen(function*() {
      const { subscriptionId, vps } = yield* provisioned
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(vpsStatus(vps.id), (s) => s === "suspended"))
      yield* TestClock.adjust("3 days")
      const renewed = yield* renewSubscription(alice, subscriptionId)
      assert.strictEqual(renewed.status, "active")
      assert.strictEqual(yield* vpsStatus(vps.id), "running")
      assert.strictEqual((yield* vmOf(vps.vmid))?.status, "running")
      assert.isTrue(renewed.currentPeriodEnd.getTime() > Date.UTC(1970, 2, 1))
      // Past the old grace window nothing is destroyed: it is active again.
      yield* TestClock.adjust("10 days")
      yield* sweepLifecycle
      yield* Effect.yieldNow
      assert.strictEqual(yield* vpsStatus(vps.id), "running")
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a lapsed VPS does not start with its node; a renewal makes it start with its node again", () =>
    Effect.gen(function*() {
      const { subscriptionId, vps } = yield* provisioned
      assert.isTrue((yield* vmOf(vps.vmid))?.onBoot)
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(vpsStatus(vps.id), (s) => s === "suspended"))
      assert.isFalse((yield* vmOf(vps.vmid))?.onBoot)
      yield* renewSubscription(alice, subscriptionId)
      assert.deepInclude(yield* vmOf(vps.vmid), { status: "running", onBoot: true })
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a renewal while the cluster cannot be reached still brings the VPS back, once the cluster answers", () =>
    Effect.gen(function*() {
      const { subscriptionId, vps } = yield* provisioned
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(vpsStatus(vps.id), (s) => s === "suspended"))
      const cluster = SimulatedCluster
      const down = new VirtualizationUnavailable({ operation: "start", detail: "596 Connection timed out" })
      for (let i = 0; i < 3; i++) yield* cluster.failNext("start", down)
      const renewed = yield* renewSubscription(alice, subscriptionId)
      assert.strictEqual(renewed.status, "active")
      assert.strictEqual(yield* vpsStatus(vps.id), "suspended")
      yield* eventually(vpsStatus(vps.id), (s) => s === "running")
      assert.deepInclude(yield* vmOf(vps.vmid), { status: "running", onBoot: true })
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a VM migrated to another node is found there: stopped at the lapse, destroyed after the grace window", () =>
    Effect.gen(function*() {
      const { order, vps } = yield* provisioned
      const cluster = SimulatedCluster
      yield* cluster.migrate({ cluster: vps.cluster, node: vps.node, vmid: vps.vmid }, "pve2")
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(vpsStatus(vps.id), (s) => s === "suspended"))
      assert.deepInclude(yield* vmOf(vps.vmid), { node: "pve2", status: "stopped", onBoot: false })
      yield* TestClock.adjust("8 days")
      yield* sweepLifecycle
      yield* until(Effect.map(vpsStatus(vps.id), (s) => s === "destroyed"))
      assert.isUndefined(yield* vmOf(vps.vmid))
      assert.isUndefined(yield* (yield* IpAddresses).held(order.id))
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a lapse never stops a VM that is no longer ours: alert, and the VPS is suspended in our records only", () =>
    Effect.gen(function*() {
      const { subscriptionId, vps } = yield* provisioned
      const cluster = SimulatedCluster
      // The VMID now holds a VM someone else made (ours vanished outside our control).
      yield* cluster.restamp({ cluster: vps.cluster, node: vps.node, vmid: vps.vmid }, null)
      const stops = yield* cluster.calls("stop")
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "suspended"))
      assert.strictEqual(yield* cluster.calls("stop"), stops)
      assert.deepInclude(yield* vmOf(vps.vmid), { status: "running", onBoot: true })
      assert.strictEqual(yield* vpsStatus(vps.id), "suspended")
      const raised = yield* alerts
      assert.lengthOf(raised, 1)
      assert.include(raised[0], `refused to stop VM ${vps.vmid}`)

      // Past the grace window it is not destroyed either: the VPS is left for an operator.
      yield* TestClock.adjust("8 days")
      yield* sweepLifecycle
      yield* until(Effect.map(alerts, (a) => a.length === 2))
      assert.include((yield* alerts)[1], `refused to destroy VM ${vps.vmid}`)
      for (let i = 0; i < 500; i++) yield* Effect.yieldNow
      assert.strictEqual(yield* cluster.calls("destroy"), 0)
      assert.isDefined(yield* vmOf(vps.vmid))
      assert.strictEqual(yield* vpsStatus(vps.id), "suspended")
      assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "suspended")
    }).pipe(Effect.provide(vpsEnv().pipe(Layer.provideMerge(capturedLogs())))))

  it.effect("a renewal brings back a VPS a racing lapse already suspended, though its subscription still read active", () =>
    Effect.gen(function*() {
      const { subscriptionId, vps } = yield* provisioned
      yield* TestClock.adjust("32 days")
      // Where a lapse in progress stands after stopping it and marking the record: the subscription not yet.
      yield* (yield* Virtualization).stop({ cluster: vps.cluster, node: vps.node, vmid: vps.vmid })
      yield* (yield* VpsRecords).setStatus(vps.id, "suspended", { graceUntil: new Date(Date.now()) })
      assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "active")
      yield* renewSubscription(alice, subscriptionId)
      assert.strictEqual(yield* vpsStatus(vps.id), "running")
      assert.strictEqual((yield* vmOf(vps.vmid))?.status, "running")
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("after the grace window it is destroyed with its disks, and its address returns to the pool", () =>
    Effect.gen(function*() {
      const { order, subscriptionId, vps } = yield* provisioned
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(vpsStatus(vps.id), (s) => s === "suspended"))
      yield* TestClock.adjust("8 days")
      yield* sweepLifecycle
      yield* until(Effect.map(vpsStatus(vps.id), (s) => s === "destroyed"))
      assert.isUndefined(yield* vmOf(vps.vmid))
      assert.isUndefined(yield* (yield* IpAddresses).held(order.id))
      assert.strictEqual((yield* subscriptionOf(subscriptionId)).status, "terminated")
      const late = yield* Effect.flip(renewSubscription(alice, subscriptionId))
      assert.strictEqual(late._tag, "SubscriptionEnded")
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("renewals racing each other never charge for a month they do not add", () =>
    Effect.gen(function*() {
      const { subscriptionId } = yield* provisioned
      const before = (yield* subscriptionOf(subscriptionId)).currentPeriodEnd
      yield* Effect.all(Array.from({ length: 5 }, () => renewSubscription(alice, subscriptionId)), { concurrency: "unbounded" })
      const after = (yield* subscriptionOf(subscriptionId)).currentPeriodEnd
      const charges = (yield* (yield* Ledger).forSubscription(subscriptionId)).filter((e) => e.kind === "charge")
      // The first month was charged with the order; each renewal charge adds exactly one month.
      let expected = before
      for (let i = 1; i < charges.length; i++) expected = addMonth(expected)
      assert.strictEqual(after.toISOString(), expected.toISOString())
      assert.isTrue(charges.length >= 2)
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a renewal right after a renewal charges nothing: one period ahead is the most that can be paid", () =>
    Effect.gen(function*() {
      const { subscriptionId } = yield* provisioned
      const before = (yield* subscriptionOf(subscriptionId)).currentPeriodEnd
      yield* renewSubscription(alice, subscriptionId)
      const again = yield* renewSubscription(alice, subscriptionId)
      assert.strictEqual(again.currentPeriodEnd.toISOString(), addMonth(before).toISOString())
      const charges = (yield* (yield* Ledger).forSubscription(subscriptionId)).filter((e) => e.kind === "charge")
      assert.strictEqual(charges.length, 2)
      // A month later the next period is due for renewal again.
      yield* TestClock.adjust("32 days")
      const later = yield* renewSubscription(alice, subscriptionId)
      assert.strictEqual(later.currentPeriodEnd.toISOString(), addMonth(addMonth(before)).toISOString())
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a cancelled subscription ends at its period end; another user cannot cancel it", () =>
    Effect.gen(function*() {
      const { subscriptionId, vps } = yield* provisioned
      const stranger = yield* Effect.flip(cancelSubscription("00000000-0000-4000-8000-0000000000bb", subscriptionId))
      assert.strictEqual(stranger._tag, "SubscriptionNotFound")
      const cancelled = yield* cancelSubscription(alice, subscriptionId)
      assert.isTrue(cancelled.cancelAtPeriodEnd)
      assert.strictEqual(yield* vpsStatus(vps.id), "running")
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(vpsStatus(vps.id), (s) => s === "suspended"))
    }).pipe(Effect.provide(vpsEnv())))
})
