// Specification of the Virtualization domain tests run on (the Proxmox adapter over the PVE simulation, in memory): its
// tasks and config locks follow the TestClock, faults staged by port operation reach the port as it reports them,
// calls are counted from the request log, and VMs made or moved behind our back are found where they are.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import * as MemoryProxmoxVmids from "../../../adapters/fake/MemoryProxmoxVmids.ts"
import { ProxmoxSimulationInstance } from "../../../adapters/proxmox/sandbox/ProxmoxSimulation.ts"
import * as SimulatedVirtualization from "../../../adapters/proxmox/SimulatedVirtualization.ts"
import { ShutdownTimedOut, TaskFailed, Virtualization, VirtualizationUnavailable } from "../../../ports/Virtualization.ts"
import { passing, settle } from "../../support/eventually.ts"
import { labVirtualization, SimulatedCluster } from "../../support/simulatedCluster.ts"
import { cloudInit, GiB, labCluster, labSeed, labStorage, labTemplate } from "../../support/virtualizationMother.ts"

const cloneOf = (order: string) =>
  Effect.flatMap(Virtualization, (v) =>
    v.createMachine(order, { cluster: labCluster, node: labTemplate.node, template: labTemplate, name: order, storage: labStorage }).pipe(
      Effect.flatMap((made) => made._tag === "Created" ? Effect.succeed(made.vm) : Effect.die(new Error("under way")))
    ))

/** The lab cluster whose clones take a minute and whose other tasks take two seconds of the clock. */
const slowTasks = SimulatedVirtualization.layer({
  cluster: labCluster,
  ...labSeed(),
  taskDurations: { qmclone: 60_000, default: 2_000 },
  adapter: { vmidRange: { from: 100_000, to: 100_100 } }
}).pipe(Layer.provide(MemoryProxmoxVmids.layer))

/** The simulation's tasks other than clones, oldest first: type and status. */
const tasks = Effect.map(ProxmoxSimulationInstance, (sim) =>
  sim.control.state().tasks.filter((t) => t.type !== "qmclone").map((t) => [t.type, t.status]))

describe("the simulated Proxmox cluster", () => {
  it.effect("a clone takes its duration on the TestClock: the machine is made once the clock has moved a minute", () =>
    Effect.gen(function*() {
      const making = yield* Effect.forkChild(cloneOf("order-slow"))
      yield* passing("50 seconds", "1 second")
      assert.isUndefined(making.pollUnsafe())
      const [vm] = (yield* SimulatedCluster.vms).filter((x) => !x.template)
      assert.deepInclude(vm, { vmid: 100_000, lock: "clone" })
      yield* passing("15 seconds", "1 second")
      const made = yield* Fiber.join(making)
      assert.deepStrictEqual(made, { cluster: labCluster, node: "pve1", vmid: 100_000 })
      assert.isNull((yield* SimulatedCluster.vms).find((x) => x.vmid === 100_000)?.lock)
    }).pipe(Effect.provide(slowTasks)))

  it.effect("a second config change waits for the first one's lock on the clock, then runs", () =>
    Effect.gen(function*() {
      const v = yield* Virtualization
      const made = yield* Effect.forkChild(cloneOf("order-lock"))
      yield* passing("65 seconds", "1 second")
      const vm = yield* Fiber.join(made)
      const resizing = yield* Effect.forkChild(v.resizeDisk(vm, 10))
      yield* settle
      const configuring = yield* Effect.forkChild(v.configure(vm, cloudInit("lock")))
      yield* passing("1 second", "1 second")
      assert.deepStrictEqual(yield* tasks, [["resize", "running"], ["qmconfig", "running"]])
      // The resize held the VM's lock for its 2 s; the config change then takes its own 2 s.
      yield* passing("2 seconds", "1 second")
      assert.deepStrictEqual(yield* tasks, [["resize", "stopped"], ["qmconfig", "running"]])
      yield* passing("10 seconds", "1 second")
      yield* Fiber.join(resizing)
      yield* Fiber.join(configuring)
      assert.deepInclude((yield* SimulatedCluster.vms).find((x) => x.vmid === vm.vmid), { diskBytes: 10 * GiB, name: "lock" })
    }).pipe(Effect.provide(slowTasks)))

  it.effect("a fault staged by operation reaches the port as it reports it, once, and every call is counted", () =>
    Effect.gen(function*() {
      const v = yield* Virtualization
      const vm = yield* cloneOf("order-faults")
      yield* v.configure(vm, cloudInit("faults"))
      yield* SimulatedCluster.failNext("start", new VirtualizationUnavailable({ operation: "start", detail: "proxy down" }))
      const down = yield* Effect.flip(v.start(vm))
      assert.strictEqual(down._tag, "VirtualizationUnavailable")
      assert.include(down._tag === "VirtualizationUnavailable" ? down.detail : "", "proxy down")
      yield* v.start(vm)
      assert.strictEqual(yield* SimulatedCluster.calls("start"), 2)
      yield* SimulatedCluster.failNext("shutdown", new ShutdownTimedOut({ timeoutSeconds: 30 }))
      assert.deepInclude(yield* Effect.flip(v.shutdown(vm, 30)), { _tag: "ShutdownTimedOut", timeoutSeconds: 30 })
      assert.strictEqual((yield* v.status(vm)).status, "running")
      yield* SimulatedCluster.failAlways("stop", new TaskFailed({ operation: "stop", exitStatus: "simulated failure", log: [] }))
      for (let i = 0; i < 2; i++) assert.deepInclude(yield* Effect.flip(v.stop(vm)), { _tag: "TaskFailed", exitStatus: "simulated failure" })
      yield* SimulatedCluster.clearFaults
      yield* v.stop(vm)
      assert.strictEqual(yield* SimulatedCluster.calls("stop"), 3)
    }).pipe(Effect.provide(labVirtualization())))

  it.effect("an owner read fails only for a VM that exists: the check that a VMID is free before a clone goes through", () =>
    Effect.gen(function*() {
      const v = yield* Virtualization
      yield* SimulatedCluster.failAlways("ownerOf", new VirtualizationUnavailable({ operation: "ownerOf", detail: "down" }))
      const vm = yield* cloneOf("order-owner")
      assert.strictEqual((yield* Effect.flip(v.ownerOf(vm)))._tag, "VirtualizationUnavailable")
      assert.strictEqual(yield* SimulatedCluster.calls("ownerOf"), 1)
    }).pipe(Effect.provide(labVirtualization())))

  it.effect("a VM placed by someone else and a VM migrated are found as the cluster holds them", () =>
    Effect.gen(function*() {
      const v = yield* Virtualization
      yield* SimulatedCluster.place(
        { cluster: labCluster, node: "pve2", vmid: 100_050, name: "by-hand", status: "running", cpus: 2, memoryBytes: 2 * GiB, diskBytes: 5 * GiB },
        "someone"
      )
      assert.deepInclude((yield* v.listVms(labCluster)).find((x) => x.vmid === 100_050), {
        node: "pve2", name: "by-hand", status: "running", cpus: 2, memoryBytes: 2 * GiB, diskBytes: 5 * GiB, createdFor: null
      })
      assert.deepStrictEqual(yield* v.ownerOf({ cluster: labCluster, node: "pve2", vmid: 100_050 }), { stamp: "someone", busy: false })
      yield* SimulatedCluster.migrate({ cluster: labCluster, node: "pve2", vmid: 100_050 }, "pve1")
      assert.strictEqual((yield* Effect.flip(v.ownerOf({ cluster: labCluster, node: "pve2", vmid: 100_050 })))._tag, "VmNotFound")
      assert.strictEqual((yield* v.status({ cluster: labCluster, node: "pve1", vmid: 100_050 })).status, "running")
    }).pipe(Effect.provide(labVirtualization())))
})
