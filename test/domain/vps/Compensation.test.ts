// Specification of what a failed VPS provisioning does when its own undo fails (TestClock drives the backoff): the
// customer is refunded and told at once, the undo is retried with growing pauses until it succeeds (a failed destroy
// task included), an alert says so, the order shows as a pending cleanup meanwhile, and a VM at our VMID that is not
// ours is never destroyed.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SimulatedCluster } from "../../support/simulatedCluster.ts"
import { placePaidOrder } from "../../support/simulatedStripe.ts"
import { IpAddresses } from "../../../ports/IpAddresses.ts"
import { Orders } from "../../../ports/Orders.ts"
import { TaskFailed, VirtualizationUnavailable } from "../../../ports/Virtualization.ts"
import { alerts, capturedLogs } from "../../support/capturedLogs.ts"
import { atOnce, eventually, passing } from "../../support/eventually.ts"
import { assertRefunded } from "../../support/refunded.ts"
import { vpsEnv, vpsOptions } from "../../support/vpsEnv.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"

const orderOf = (id: string) => Effect.map(Effect.flatMap(Orders, (o) => o.get(id)), Option.getOrThrow)
const ourVms = Effect.map(SimulatedCluster.vms, (vms) => vms.filter((vm) => !vm.template))
const pendingCleanup = (id: string) =>
  Effect.map(Effect.flatMap(Orders, (o) => o.pendingCleanups), (all) => all.find((c) => c.orderId === id))

const configureFails = SimulatedCluster.failAlways("configure", new TaskFailed({ operation: "configure", exitStatus: "simulated failure", log: [] }))

const env = () => vpsEnv().pipe(Layer.provideMerge(capturedLogs()))

describe("a failed VPS provisioning whose undo fails", () => {
  it.effect("refunds and fails the order at once, then retries a failing destroy with backoff until the VM is gone", () =>
    Effect.gen(function*() {
      const cluster = SimulatedCluster
      yield* configureFails
      for (let i = 0; i < 5; i++) {
        yield* cluster.failNext("destroy", new TaskFailed({ operation: "destroy", exitStatus: "can't lock file - got timeout", log: [] }))
      }
      const placed = yield* placePaidOrder(alice, "vps-s", vpsOptions("undo-1"))
      const failed = yield* atOnce(orderOf(placed.id), (o) => o.status === "failed")
      yield* assertRefunded(failed)
      // The customer knows; the VM, the address and the VMID are still being released.
      const pending = yield* atOnce(pendingCleanup(placed.id), (c) => (c?.lastError ?? null) !== null)
      assert.strictEqual(yield* SimulatedCluster.calls("destroy"), 1)
      assert.strictEqual((yield* ourVms).length, 1)
      assert.isDefined(yield* (yield* IpAddresses).held(placed.id))
      assert.strictEqual(pending?.kind, "vps")
      assert.include(pending?.lastError ?? "", "can't lock file")

      yield* eventually(ourVms, (vms) => vms.length === 0)
      assert.strictEqual(yield* cluster.calls("destroy"), 6)
      assert.isUndefined(yield* (yield* IpAddresses).held(placed.id))
      assert.isUndefined(yield* eventually(pendingCleanup(placed.id), (c) => c === undefined))
      // Logged as an alert: the first failure and again as the outage lasts (attempts 1, 2, 4).
      const raised = (yield* alerts).filter((a) => a.includes(placed.id))
      assert.lengthOf(raised, 3)
      assert.include(raised[0], "cleanup of failed order")
      // Still failed and refunded once: the undo changed nothing the customer sees.
      yield* assertRefunded(yield* orderOf(placed.id))
    }).pipe(Effect.provide(env())))

  it.effect("keeps trying through an outage longer than any fixed budget, with pauses capped at five minutes", () =>
    Effect.gen(function*() {
      const cluster = SimulatedCluster
      yield* configureFails
      const down = new VirtualizationUnavailable({ operation: "ownerOf", detail: "596 Connection timed out" })
      yield* cluster.failAlways("ownerOf", down)
      const placed = yield* placePaidOrder(alice, "vps-s", vpsOptions("undo-2"))
      yield* assertRefunded(yield* atOnce(orderOf(placed.id), (o) => o.status === "failed"))
      // Three hours down: the old undo gave up after 10 attempts; this one is still at it, every five minutes at most.
      yield* passing("3 hours")
      const attempts = yield* cluster.calls("ownerOf")
      assert.isAbove(attempts, 35)
      assert.isBelow(attempts, 50)
      assert.strictEqual((yield* pendingCleanup(placed.id))?.attempts, attempts)
      yield* cluster.clearFaults
      yield* eventually(ourVms, (vms) => vms.length === 0, 400)
      assert.isUndefined(yield* atOnce(Effect.flatMap(IpAddresses, (ips) => ips.held(placed.id)), (held) => held === undefined))
      assert.isUndefined(yield* eventually(pendingCleanup(placed.id), (c) => c === undefined))
    }).pipe(Effect.provide(env())))

  it.effect("never destroys a VM at its VMID that is not ours: alert, VMID set aside, the rest released", () =>
    Effect.gen(function*() {
      const cluster = SimulatedCluster
      yield* configureFails
      // The clone's VM gets someone else's stamp before the undo looks at it (a VMID reused outside our control).
      yield* cluster.failNext("ownerOf", new VirtualizationUnavailable({ operation: "ownerOf", detail: "down" }))
      const placed = yield* placePaidOrder(alice, "vps-s", vpsOptions("undo-3"))
      yield* atOnce(orderOf(placed.id), (o) => o.status === "failed")
      const [vm] = yield* ourVms
      assert.isDefined(vm)
      yield* cluster.restamp(vm!, "someone-else")
      yield* eventually(pendingCleanup(placed.id), (c) => c === undefined)
      assert.deepStrictEqual((yield* ourVms).map((v) => [v.vmid, v.stamp]), [[vm!.vmid, "someone-else"]])
      assert.strictEqual(yield* cluster.calls("destroy"), 0)
      assert.strictEqual(yield* cluster.calls("stop"), 0)
      assert.isUndefined(yield* (yield* IpAddresses).held(placed.id))
      const raised = yield* alerts
      assert.isTrue(raised.some((a) => a.includes(`refused to destroy VM ${vm!.vmid}`) && a.includes(placed.id)), raised.join("\n"))
    }).pipe(Effect.provide(env())))
})
