// Specification of the reconciler on in-memory fakes with planted trouble: VMs in our VMID range and panel servers
// with our external ids that no live service uses, live services whose upstream resource is gone or not ours, pending
// cleanups, an upstream that cannot be read; and that it reports all that while changing nothing.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SimulatedCluster } from "../../support/simulatedCluster.ts"
import { GameServer, GameServerId } from "../../../domain/game/GameServer.ts"
import { findingsOf, formatReport, reconcile } from "../../../domain/reconcile/Reconciler.ts"
import { Vps, VpsId } from "../../../domain/vps/Vps.ts"
import { GamePanel } from "../../../ports/GamePanel.ts"
import { GameServerRecords } from "../../../ports/GameServerRecords.ts"
import { Orders } from "../../../ports/Orders.ts"
import { Virtualization, VirtualizationUnavailable } from "../../../ports/Virtualization.ts"
import { VpsRecords } from "../../../ports/VpsRecords.ts"
import { reconcileEnv } from "../../support/reconcileEnv.ts"
import { GiB, labCluster, labTemplate } from "../../support/virtualizationMother.ts"
import { OrderId, SubscriptionId } from "../../../domain/billing/Billing.ts"
import { moveOrder } from "../../../domain/billing/orderMoves.ts"
import { panelPaths, panelRequests, panelServers } from "../../support/simulatedPanel.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"
const at = new Date("2026-03-01T10:00:00.000Z")

let serial = 0
const nextId = (prefix: string) => `${prefix}-${String(++serial).padStart(4, "0")}`

/** An order in the given state (the reconciler reads only its status). */
const order = (status: "pending" | "completed" | "failed", kind: "vps" | "game" = "vps") =>
  Effect.gen(function*() {
    const orders = yield* Orders
    const created = yield* orders.create({ id: OrderId.make(nextId("order")), userId: alice, planId: "p", kind, options: {}, totalSteps: 6, expiresAt: new Date(at.getTime() + 3_600_000), now: at })
    if (status === "completed") {
      yield* moveOrder(created.id, { event: "paid" }, at)
      yield* moveOrder(created.id, { event: "provisioned", serviceId: nextId("service"), oneTimeSecret: null }, at)
    }
    if (status === "failed") yield* moveOrder(created.id, { event: "failed", reason: "failed" }, at)
    return created.id
  })

const vm = (vmid: number) => ({ cluster: labCluster, node: labTemplate.node, vmid })

/** A VM at `vmid` whose own record carries `stamp`, as our provisioning (or someone imitating it) would leave it. */
const clone = (vmid: number, stamp: string) =>
  SimulatedCluster.place({ ...vm(vmid), name: `vps-${vmid}`, status: "stopped", cpus: 1, memoryBytes: GiB, diskBytes: 3 * GiB }, stamp)

/** A live VPS record for a completed order at `vmid`. */
const liveVps = (vmid: number, orderId: string) =>
  Effect.flatMap(VpsRecords, (records) =>
    records.create(new Vps({
      id: VpsId.make(nextId("vps")), userId: alice, subscriptionId: SubscriptionId.make(nextId("sub")), orderId: OrderId.make(orderId),
      planId: "vps-s", cluster: labCluster,
      node: labTemplate.node, vmid, hostname: `web-${vmid}`, templateId: "debian-12", address: "203.0.113.9",
      status: "running", graceUntil: null, createdAt: at, destroyedAt: null
    }), "v1:sealed"))

/** A server on the sandbox panel made for `orderId`. */
const panelServer = (orderId: string) =>
  Effect.gen(function*() {
    const panel = yield* GamePanel
    const user = (yield* panel.userFor("sandbox", "owner")) ?? (yield* panel.createUser("sandbox", {
      userId: "owner", email: "owner@users.zh.invalid", username: "zh_owner", firstName: "ZH", lastName: "Customer"
    }))
    const [node] = yield* panel.nodes("sandbox")
    const [allocation] = yield* panel.freeAllocations("sandbox", node!.id)
    const egg = yield* panel.egg("sandbox", 5)
    return yield* panel.createServer("sandbox", {
      name: orderId, orderId, user: user.id, egg: egg.id, dockerImage: Object.values(egg.dockerImages)[0]!,
      startup: egg.startup, environment: Object.fromEntries(egg.variables.map((v) => [v.envVariable, v.defaultValue])),
      limits: { memoryMiB: 1024, swapMiB: 0, diskMiB: 2048, io: 500, cpuPercent: 100 }, oomDisabled: true,
      featureLimits: { databases: 0, backups: 1, allocations: 1 }, allocation: allocation!.id, startOnCompletion: false
    })
  })

const liveGame = (panelServerId: number, orderId: string) =>
  Effect.flatMap(GameServerRecords, (records) =>
    records.create(new GameServer({
      id: GameServerId.make(nextId("game")), userId: alice, subscriptionId: SubscriptionId.make(nextId("sub")), orderId: OrderId.make(orderId),
      planId: "mc-2g", panel: "sandbox",
      panelServerId, uuid: nextId("uuid"), identifier: nextId("id").slice(-8), name: "Minecraft", node: 1,
      allocationId: 1, address: "127.0.0.1:25565", status: "active", graceUntil: null, createdAt: at, deletedAt: null
    })))

describe("the reconciler", () => {
  it.effect("finds orphans, broken services and pending cleanups, leaves what is healthy or in progress, changes nothing", () =>
    Effect.gen(function*() {
      const cluster = SimulatedCluster
      // Healthy: a VPS and its VM; a game server and its panel server.
      const healthy = yield* order("completed")
      yield* clone(100_001, healthy)
      yield* liveVps(100_001, healthy)
      const healthyGame = yield* order("completed", "game")
      yield* liveGame((yield* panelServer(healthyGame)).id, healthyGame)
      // In progress: a VM of a pending order; outside our range: an operator's VM.
      yield* clone(100_002, yield* order("pending"))
      yield* clone(500, "not-an-order-of-ours")
      // Orphans: a VM of a failed order, a VM in our range with no stamp, a panel server of a failed order.
      const failed = yield* order("failed")
      yield* clone(100_003, failed)
      yield* clone(100_004, "x")
      yield* cluster.restamp(vm(100_004), null)
      const failedGame = yield* order("failed", "game")
      const orphanServer = yield* panelServer(failedGame)
      // Not ours to report: a panel server with an external id that names none of our orders.
      yield* panelServer("whmcs-service-17")
      // Broken: a live VPS whose VM is gone, one whose VMID now holds someone else's VM, a game server whose panel
      // server is gone.
      const gone = yield* order("completed")
      yield* liveVps(100_005, gone)
      const reused = yield* order("completed")
      yield* clone(100_006, "someone-else")
      yield* liveVps(100_006, reused)
      const goneGame = yield* order("completed", "game")
      yield* liveGame(424_242, goneGame)
      // A failed order whose undo is still being retried.
      yield* (yield* Orders).cleanupPending(failed, at)
      yield* (yield* Orders).cleanupFailed(failed, "VirtualizationUnavailable: 596")

      const vmsBefore = yield* cluster.vms
      const serversBefore = yield* panelServers
      const report = yield* reconcile

      assert.deepStrictEqual(report.orphanVms.map((o) => [o.vmid, o.stamp]), [[100_003, failed], [100_004, null]])
      assert.deepStrictEqual(report.orphanServers.map((s) => [s.id, s.orderId]), [[orphanServer.id, failedGame]])
      assert.deepStrictEqual(report.brokenServices.map((b) => [b.kind, b.orderId, b.problem, b.resource]), [
        ["vps", reused, "not ours", `${labCluster}/100006`],
        ["vps", gone, "missing", `${labCluster}/100005`],
        ["game", goneGame, "missing", "sandbox/424242"]
      ])
      assert.deepStrictEqual(report.pendingCleanups.map((c) => [c.orderId, c.attempts]), [[failed, 1]])
      assert.deepStrictEqual(report.unreachable, [])
      assert.strictEqual(findingsOf(report), 7)

      // A report, nothing more: every VM and panel server is still there.
      assert.deepStrictEqual(yield* cluster.vms, vmsBefore)
      assert.deepStrictEqual(yield* panelServers, serversBefore)
      assert.strictEqual(yield* cluster.calls("destroy"), 0)
      assert.strictEqual(yield* panelRequests("DELETE", panelPaths.server), 0)

      const text = formatReport(report)
      assert.match(text[0] ?? "", /^Reconciled at 2026-|: 7 finding\(s\)\.$/)
      assert.isTrue(text.some((l) => l.includes("vmid 100003") && l.includes(`stamp: order ${failed}`)))
      assert.isTrue(text.some((l) => l.includes("vmid 100004") && l.includes("no stamp")))
      assert.isTrue(text.some((l) => l.includes(`vps `) && l.includes("missing (no VM 100005")))
      assert.isTrue(text.some((l) => l.includes(`order ${failed}`) && l.includes("1 failed attempt(s), last: VirtualizationUnavailable: 596")))
    }).pipe(Effect.provide(reconcileEnv())))

  it.effect("a clone not configured yet is recognised by the stamp on the VM itself, not taken for an orphan", () =>
    Effect.gen(function*() {
      const pending = yield* order("pending")
      yield* clone(100_010, pending)
      // The listing lags: it shows no stamp yet, as PVE's does before the tags are written.
      const listing = yield* (yield* Virtualization).listVms(labCluster)
      assert.isNull(listing.find((v) => v.vmid === 100_010)?.stamp)
      const report = yield* reconcile
      assert.deepStrictEqual(report.orphanVms, [])
      yield* moveOrder(pending, { event: "failed", reason: "failed" }, at)
      assert.deepStrictEqual((yield* reconcile).orphanVms.map((o) => [o.vmid, o.stamp]), [[100_010, pending]])
    }).pipe(Effect.provide(reconcileEnv())))

  it.effect("an upstream that cannot be read is reported, and the others are still reconciled", () =>
    Effect.gen(function*() {
      // The cluster answers 503 (its detail as the Proxmox adapter reports it: the status, then PVE's message).
      yield* SimulatedCluster.failAlways("listVms", new VirtualizationUnavailable({ operation: "listVms", detail: "596 timeout" }))
      const failedGame = yield* order("failed", "game")
      yield* panelServer(failedGame)
      const report = yield* reconcile
      assert.deepStrictEqual(report.unreachable, [{ upstream: `cluster ${labCluster}`, detail: "listVms: HTTP 503: 596 timeout" }])
      assert.lengthOf(report.orphanServers, 1)
      assert.isTrue(formatReport(report).some((l) => l.includes(`cluster ${labCluster}: listVms: HTTP 503: 596 timeout`)))
    }).pipe(Effect.provide(reconcileEnv())))

  it.effect("nothing to report on a clean installation", () =>
    Effect.gen(function*() {
      const report = yield* reconcile
      assert.strictEqual(findingsOf(report), 0)
      assert.match(formatReport(report).join("\n"), /^Reconciled at .*: nothing to report\.$/)
      assert.isTrue(Option.isNone(yield* (yield* Orders).get("none")))
    }).pipe(Effect.provide(reconcileEnv())))
})
