// One Virtualization contract, run against the Proxmox wrapper over the PVE simulation, reached in memory and over
// loopback sockets: each joins the list below with only a layer, a cluster, a template, a storage and a way to make a
// guest agent answer.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, Redacted, Result, Stream } from "effect"
import * as MemoryProxmoxVmids from "../../adapters/fake/MemoryProxmoxVmids.ts"
import * as ProxmoxVirtualization from "../../adapters/proxmox/ProxmoxVirtualization.ts"
import { ProxmoxSimulationInstance } from "../../adapters/proxmox/sandbox/ProxmoxSimulation.ts"
import { layerSandboxProxmox, type SandboxControl, SandboxProxmoxInstance } from "../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import * as SimulatedVirtualization from "../../adapters/proxmox/SimulatedVirtualization.ts"
import { ProxmoxClusters } from "../../ports/ProxmoxClusters.ts"
import {
  ClusterUnknown, type MachineCreation, TaskFailed, Virtualization, VirtualizationUnavailable, VmNotFound, VmNotOurs,
  type VmRef
} from "../../ports/Virtualization.ts"
import {
  cloudInit, GiB, labCluster, labSeed, labStorage, labTemplate, logIn, stampFor, terminal
} from "../support/virtualizationMother.ts"
import { labVirtualization, SimulatedCluster } from "../support/simulatedCluster.ts"

interface ContractSetup<R> {
  readonly layer: Layer.Layer<Virtualization | R, unknown>
  readonly cluster: string
  /** A template on one node of `cluster`; every clone of the suite lands on that node, on `storage`. */
  readonly template: VmRef
  readonly storage: string
  /** Makes the guest agent of a running VM answer (true) or fall silent (false). */
  readonly setAgentRunning: (vm: VmRef, running: boolean) => Effect.Effect<void, unknown, R>
  /** Someone outside our control re-marks the VM: our stamp replaced by `stamp`, or wiped (null). */
  readonly restamp: (vm: VmRef, stamp: string | null) => Effect.Effect<void, unknown, R>
  /** Whether the node would start the VM when it boots (the config's `onboot`). */
  readonly startsOnBoot: (vm: VmRef) => Effect.Effect<boolean, unknown, R>
  /** The ids the adapter gives new machines: the suite's own. */
  readonly machineIds: { readonly from: number; readonly to: number }
}

/** The contract's machine ids; the suite destroys whatever it made there. */
const suiteIds = { from: 8100, to: 8130 }

const encoder = new TextEncoder()

const contract = <R>(name: string, setup: ContractSetup<R>) => {
  const { cluster, storage, template } = setup
  /** A handle where no machine is (past the suite's ids, which the adapter never gives). */
  const nowhere = (n: number): VmRef => ({ cluster, node: template.node, vmid: setup.machineIds.to + n })
  const hostname = (vm: VmRef) => `vps-${vm.vmid}`
  /** The order each machine of the suite was made for, by id (the tests run one after the other). */
  const orders = new Map<number, string>()
  /** The stamp the suite's VM in `vm` carries: the order it was made for (an order id in production). */
  const stamp = (vm: VmRef) => orders.get(vm.vmid) ?? stampFor(hostname(vm))
  /** Cloud-init for the suite's VM in `vm`, which writes its stamp again. */
  const init = (vm: VmRef, overrides: Parameters<typeof cloudInit>[1] = {}) =>
    cloudInit(hostname(vm), { stamp: stamp(vm), ...overrides })
  const spec = (name: string) => ({ cluster, node: template.node, template, name, storage })
  /**
   * Stops and destroys the suite's VM in `vm`, whatever fails (stamped as ours first, when a test took the stamp away),
   * and frees its id.
   */
  const clear = (vm: VmRef) =>
    Effect.gen(function*() {
      const v = yield* Virtualization
      yield* v.stop(vm).pipe(Effect.ignore)
      yield* setup.restamp(vm, stamp(vm)).pipe(Effect.ignore)
      yield* v.destroy(vm, stamp(vm))
      yield* v.releaseMachine(stamp(vm))
    }).pipe(Effect.ignore)
  /** The machine of order `order`, made now; the test fails if it is not. */
  const made = (creation: MachineCreation) =>
    creation._tag === "Created" ? Effect.succeed(creation.vm) : Effect.die(new Error("the creation is still under way"))
  /** A stopped clone of the template for the suite's `n`th order, destroyed when the test ends. */
  const clone = (n: number) =>
    Effect.gen(function*() {
      const v = yield* Virtualization
      const order = stampFor(`vps-n${n}`)
      const vm = yield* Effect.flatMap(v.createMachine(order, spec(`vps-n${n}`)), made)
      orders.set(vm.vmid, order)
      yield* Effect.addFinalizer(() => clear(vm))
      return vm
    })
  /** A clone configured with `cloudInit(hostname)` and started. */
  const running = (n: number) =>
    Effect.gen(function*() {
      const v = yield* Virtualization
      const vm = yield* clone(n)
      yield* v.configure(vm, init(vm))
      yield* v.start(vm)
      return vm
    })
  const summaryOf = (vm: VmRef) =>
    Effect.map(Effect.flatMap(Virtualization, (v) => v.listVms(cluster)), (all) => all.find((s) => s.vmid === vm.vmid))
  const templateNode = Effect.flatMap(Virtualization, (v) => v.nodeCapacity(cluster, storage)).pipe(
    Effect.map((nodes) => nodes.find((n) => n.node === template.node)),
    Effect.flatMap(Effect.fromNullishOr)
  )

  layer(setup.layer, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("lists the cluster's VMs with the template marked as a template", () =>
      Effect.gen(function*() {
        const found = yield* summaryOf(template)
        assert.deepInclude(found, { cluster, node: template.node, vmid: template.vmid, template: true })
      }))

    it.effect("a clone claims the template's CPUs and memory on its node and takes space on the storage", () =>
      Effect.gen(function*() {
        const source = yield* Effect.flatMap(summaryOf(template), Effect.fromNullishOr)
        const before = yield* templateNode
        yield* clone(1)
        const after = yield* templateNode
        assert.strictEqual(after.committedCpus - before.committedCpus, source.cpus)
        assert.strictEqual(after.committedMemoryBytes - before.committedMemoryBytes, source.memoryBytes)
        assert.isNotNull(before.storage)
        assert.isBelow(after.storage?.availableBytes ?? Infinity, before.storage?.availableBytes ?? 0)
        assert.strictEqual(after.storage?.totalBytes, before.storage?.totalBytes)
      }))

    it.effect("a storage the nodes do not have is reported as null", () =>
      Effect.gen(function*() {
        const nodes = yield* Effect.flatMap(Virtualization, (v) => v.nodeCapacity(cluster, "no-such-storage"))
        assert.isNotEmpty(nodes)
        for (const node of nodes) assert.isNull(node.storage)
      }))

    it.effect("an order's machine is made once: asked again, the same machine, on the chosen node, listed as made for it", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(2)
        assert.deepStrictEqual(yield* v.createMachine(stamp(vm), spec("vps-n2")), { _tag: "Created", vm })
        assert.strictEqual(vm.node, template.node)
        assert.isAtLeast(vm.vmid, setup.machineIds.from)
        assert.isBelow(vm.vmid, setup.machineIds.to)
        assert.deepInclude(yield* summaryOf(vm), { createdFor: stamp(vm), managed: true, template: false })
        assert.strictEqual((yield* Effect.flatMap(v.listVms(cluster), (all) => Effect.succeed(all.filter((x) => x.createdFor === stamp(vm))))).length, 1)
        assert.deepInclude(yield* summaryOf(template), { createdFor: null, managed: false })
      }))

    it.effect("each order gets a machine of its own; an id released goes to the next order", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const first = yield* clone(25)
        const second = yield* clone(26)
        assert.notStrictEqual(first.vmid, second.vmid)
        yield* v.destroy(second, stamp(second))
        yield* v.releaseMachine(stamp(second))
        const third = yield* clone(27)
        assert.strictEqual(third.vmid, second.vmid)
        assert.deepInclude(yield* summaryOf(third), { createdFor: stamp(third) })
      }))

    it.effect("a VPS goes from clone to destroyed: configure, resize, start, snapshot, stop, destroy", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(3)
        yield* v.configure(vm, init(vm, { cores: 4, memoryMiB: 4096 }))
        yield* v.resizeDisk(vm, 20)
        assert.deepInclude(yield* summaryOf(vm), {
          name: hostname(vm), template: false, cpus: 4, memoryBytes: 4 * GiB, diskBytes: 20 * GiB
        })
        yield* v.start(vm)
        assert.deepStrictEqual(yield* v.status(vm), { status: "running", busy: false, agentEnabled: true })
        yield* v.createSnapshot(vm, "before-upgrade", "taken by the contract suite")
        const [snapshot, ...others] = yield* v.listSnapshots(vm)
        assert.deepStrictEqual(others, [])
        assert.deepInclude(snapshot, { name: "before-upgrade", description: "taken by the contract suite" })
        assert.instanceOf(snapshot?.createdAt, Date)
        yield* v.deleteSnapshot(vm, "before-upgrade")
        assert.deepStrictEqual(yield* v.listSnapshots(vm), [])
        yield* v.stop(vm)
        assert.strictEqual((yield* v.status(vm)).status, "stopped")
        yield* v.destroy(vm, stamp(vm))
        assert.isUndefined(yield* summaryOf(vm))
      }))

    it.effect("configuring a VM that does not exist fails with VmNotFound", () =>
      Effect.gen(function*() {
        const vm = nowhere(5)
        const error = yield* Effect.flip(Effect.flatMap(Virtualization, (v) => v.configure(vm, cloudInit("ghost"))))
        assert.deepStrictEqual(error, new VmNotFound({ cluster, vmid: vm.vmid }))
      }))

    it.effect("a disk never shrinks: a smaller size fails the task and leaves the disk as it was", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(6)
        yield* v.resizeDisk(vm, 10)
        yield* v.resizeDisk(vm, 10)
        const error = yield* Effect.flip(v.resizeDisk(vm, 5))
        assert.instanceOf(error, TaskFailed)
        assert.include(error.exitStatus, "shrinking disks is not supported")
        assert.strictEqual((yield* summaryOf(vm))?.diskBytes, 10 * GiB)
      }))

    it.effect("starting a running VM and stopping a stopped one both succeed", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(7)
        yield* v.start(vm)
        yield* v.start(vm)
        assert.strictEqual((yield* v.status(vm)).status, "running")
        yield* v.stop(vm)
        yield* v.stop(vm)
        yield* v.shutdown(vm, 60)
        assert.strictEqual((yield* v.status(vm)).status, "stopped")
      }))

    it.effect("resetting a stopped VM fails the task", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(8)
        assert.instanceOf(yield* Effect.flip(v.reset(vm)), TaskFailed)
      }))

    it.effect("the guest agent runs a command in the guest and returns its output", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* running(9)
        yield* setup.setAgentRunning(vm, true)
        assert.deepStrictEqual(yield* v.guestExec(vm, ["echo", "hello", "world"]), {
          exitCode: 0, stdout: "hello world\n", stderr: ""
        })
        assert.strictEqual((yield* v.guestExec(vm, ["cat"], "from stdin")).stdout, "from stdin")
      }))

    it.effect("a silent guest agent makes guest commands fail with GuestAgentUnavailable", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* running(10)
        yield* setup.setAgentRunning(vm, false)
        assert.strictEqual((yield* Effect.flip(v.guestExec(vm, ["true"])))._tag, "GuestAgentUnavailable")
        const error = yield* Effect.flip(v.setGuestPassword(vm, "root", Redacted.make("new-password")))
        assert.strictEqual(error._tag, "GuestAgentUnavailable")
      }))

    it.effect("a stopped VM has no guest agent to run commands", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(11)
        yield* v.configure(vm, init(vm))
        assert.strictEqual((yield* Effect.flip(v.guestExec(vm, ["true"])))._tag, "GuestAgentUnavailable")
      }))

    it.effect("destroying a VM twice succeeds", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(12)
        yield* v.destroy(vm, stamp(vm))
        yield* v.destroy(vm, stamp(vm))
        assert.isUndefined(yield* summaryOf(vm))
      }))

    // PVE answers "VM N is running - destroy failed" (reference §3.10): the caller must stop first. A permanent
    // refusal, so TaskFailed, not the retryable VirtualizationUnavailable.
    it.effect("destroying a running VM fails the task and leaves the VM running", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* running(13)
        assert.instanceOf(yield* Effect.flip(v.destroy(vm, stamp(vm))), TaskFailed)
        assert.strictEqual((yield* v.status(vm)).status, "running")
      }))

    it.effect("a clone carries our stamp from its first moment; once configured, the cluster's listing shows it too", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(21)
        assert.deepStrictEqual(yield* v.ownerOf(vm), { stamp: stamp(vm), busy: false })
        yield* v.configure(vm, init(vm))
        assert.strictEqual((yield* summaryOf(vm))?.stamp, stamp(vm))
        assert.deepStrictEqual(yield* v.ownerOf(vm), { stamp: stamp(vm), busy: false })
      }))

    it.effect("destroy refuses a VM that carries another order's stamp, or none, and leaves it as it is", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(22)
        yield* v.configure(vm, init(vm))
        assert.deepStrictEqual(
          yield* Effect.flip(v.destroy(vm, "another-order")),
          new VmNotOurs({ cluster, vmid: vm.vmid, expected: "another-order", found: stamp(vm) })
        )
        yield* setup.restamp(vm, null)
        assert.isNull((yield* v.ownerOf(vm)).stamp)
        assert.deepStrictEqual(
          yield* Effect.flip(v.destroy(vm, stamp(vm))),
          new VmNotOurs({ cluster, vmid: vm.vmid, expected: stamp(vm), found: null })
        )
        yield* setup.restamp(vm, "someone-else")
        assert.strictEqual((yield* Effect.flip(v.destroy(vm, stamp(vm))))._tag, "VmNotOurs")
        assert.isDefined(yield* summaryOf(vm))
      }))

    it.effect("a configured VM starts with its node; setStartOnBoot turns that off and on again", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(23)
        yield* v.configure(vm, init(vm))
        assert.isTrue(yield* setup.startsOnBoot(vm))
        yield* v.setStartOnBoot(vm, false)
        assert.isFalse(yield* setup.startsOnBoot(vm))
        yield* v.setStartOnBoot(vm, true)
        assert.isTrue(yield* setup.startsOnBoot(vm))
      }))

    it.effect("the stamp of a VM that does not exist is VmNotFound, and destroying it succeeds", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = nowhere(24)
        assert.deepStrictEqual(yield* Effect.flip(v.ownerOf(vm)), new VmNotFound({ cluster, vmid: vm.vmid }))
        yield* v.destroy(vm, stamp(vm))
        assert.instanceOf(yield* Effect.flip(v.setStartOnBoot(vm, false)), VmNotFound)
      }))

    // Snapshot names are pve-configids (reference §3.8); PVE's refusal surfaces as TaskFailed.
    it.effect("a snapshot name PVE refuses fails the task and takes no snapshot", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(14)
        for (const bad of ["1st", "has space", "dot.ted", "a".repeat(41), "current"]) {
          assert.instanceOf(yield* Effect.flip(v.createSnapshot(vm, bad, "")), TaskFailed, bad)
        }
        yield* v.createSnapshot(vm, "A".repeat(40), "the longest name")
        assert.deepStrictEqual((yield* v.listSnapshots(vm)).map((s) => s.name), ["A".repeat(40)])
      }))

    it.effect("the console logs in with the cloud-init user and password and runs shell commands", () =>
      Effect.gen(function*() {
        const vm = yield* running(15)
        const term = yield* terminal(yield* Effect.flatMap(Virtualization, (v) => v.openConsole(vm)))
        yield* logIn(term, "root", `pw-${hostname(vm)}`)
        yield* term.until(`root@${hostname(vm)}:~# `)
        yield* term.type("echo hello\r")
        yield* term.until("\r\nhello\r\n")
      }))

    it.effect("the console refuses a wrong password", () =>
      Effect.gen(function*() {
        const vm = yield* running(16)
        const term = yield* terminal(yield* Effect.flatMap(Virtualization, (v) => v.openConsole(vm)))
        yield* logIn(term, "root", "not-the-password")
        yield* term.until("Login incorrect")
      }))

    it.effect("a password set through the guest agent opens the console login", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* running(17)
        yield* setup.setAgentRunning(vm, true)
        yield* v.setGuestPassword(vm, "root", Redacted.make("set-by-the-agent"))
        const term = yield* terminal(yield* v.openConsole(vm))
        yield* logIn(term, "root", "set-by-the-agent")
        yield* term.until(`root@${hostname(vm)}:~# `)
      }))

    it.effect("the shell behind the console sees the size given by resize", () =>
      Effect.gen(function*() {
        const vm = yield* running(18)
        const serial = yield* Effect.flatMap(Virtualization, (v) => v.openConsole(vm))
        const term = yield* terminal(serial)
        yield* serial.resize(132, 43)
        yield* logIn(term, "root", `pw-${hostname(vm)}`)
        yield* term.until(":~# ")
        yield* term.type("stty size\r")
        yield* term.until("\r\n43 132\r\n")
      }))

    it.effect("a stopped VM has no console", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* clone(19)
        yield* v.configure(vm, init(vm))
        const error = yield* Effect.flip(Effect.scoped(v.openConsole(vm)))
        assert.strictEqual(error._tag, "ConsoleClosed")
      }))

    it.effect("stopping a VM ends its console: the output stops and typing fails with ConsoleClosed", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* running(20)
        const serial = yield* v.openConsole(vm)
        yield* v.stop(vm)
        // Whether the stream ends or fails with ConsoleClosed is the adapter's choice; it must not hang.
        const drained = yield* Effect.result(Stream.runDrain(serial.output).pipe(Effect.timeout("5 seconds")))
        assert.isTrue(Result.isSuccess(drained) || drained.failure._tag === "ConsoleClosed")
        assert.strictEqual((yield* Effect.flip(serial.write(encoder.encode("\r"))))._tag, "ConsoleClosed")
      }))

    it.effect("an unknown cluster fails with ClusterUnknown", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.flatMap(Virtualization, (v) => v.listVms("no-such-cluster")))
        assert.deepInclude(error, { _tag: "ClusterUnknown", cluster: "no-such-cluster" })
      }))
  })
}

/** The sandbox PVE with every task instant, and a `ProxmoxClusters` that signs in to it with a password. */
const sandboxCluster = "sandbox"
const instant = Object.fromEntries(
  ["default", "qmclone", "qmconfig", "resize", "qmstart", "qmstop", "qmshutdown", "qmreset", "qmreboot", "qmsnapshot",
    "qmdelsnapshot", "qmdestroy"].map((type) => [type, 0])
)
const sandboxPve = layerSandboxProxmox({ taskDurations: instant, username: "root@pam", password: "contract-secret" })
const sandboxClusters = Layer.effect(ProxmoxClusters, Effect.map(SandboxProxmoxInstance, (pve) => ProxmoxClusters.of({
  get: (name) =>
    name === sandboxCluster
      ? Effect.succeed({
        name,
        url: pve.url,
        auth: { kind: "password", username: "root@pam", password: Redacted.make("contract-secret") },
        tls: { ca: null, fingerprint: null, insecure: false }
      })
      : Effect.fail(new ClusterUnknown({ cluster: name }))
})))
/** Short deadlines and back-offs: the sandbox answers at once, and a wrong answer should fail fast, not hang. */
const fastOptions: Partial<ProxmoxVirtualization.ProxmoxOptions> = {
  requestTimeout: "5 seconds",
  retries: 2,
  retryBaseDelay: "10 millis",
  taskPollInitial: "10 millis",
  taskPollMax: "50 millis",
  taskTimeout: "10 seconds",
  cloneTimeout: "10 seconds",
  guestExecTimeout: "5 seconds",
  consoleOpenTimeout: "5 seconds"
}
/** The simulation's control as the contract drives it, in memory or over loopback. */
const simulatedControl = <R>(control: Effect.Effect<SandboxControl, never, R>) => ({
  setAgentRunning: (vm: VmRef, running: boolean) =>
    Effect.flatMap(control, (c) => Effect.try(() => c.setAgentRunning(vm.vmid, running))),
  // As an operator would in the UI: the tags and the description's line, which is where PVE keeps our stamp.
  restamp: (vm: VmRef, stamp: string | null) =>
    Effect.flatMap(control, (c) =>
      Effect.try(() =>
        c.editConfig(vm.vmid, {
          tags: stamp === null ? null : `zh-order-${stamp}`,
          description: stamp === null ? "someone else's VM" : `zh-order: ${stamp}`
        })
      )),
  startsOnBoot: (vm: VmRef) => Effect.map(control, (c) => c.state().vms.find((x) => x.vmid === vm.vmid)?.config["onboot"] === "1")
})
/** The wrapper logs upstream failures as warnings; the contract provokes many on purpose. */
const wrapperOnSandbox = Layer.mergeAll(
  ProxmoxVirtualization.layerWith({ ...fastOptions, vmidRange: suiteIds }).pipe(
    Layer.provide([sandboxClusters, MemoryProxmoxVmids.layer])
  ),
  Logger.layer([])
).pipe(Layer.provideMerge(sandboxPve))

describe("Virtualization contract", () => {
  contract("the Proxmox wrapper on the PVE simulation in memory", {
    layer: Layer.mergeAll(
      SimulatedVirtualization.layer({ adapter: { ...fastOptions, vmidRange: suiteIds } }).pipe(
        Layer.provide(MemoryProxmoxVmids.layer)
      ),
      Logger.layer([])
    ),
    machineIds: suiteIds,
    cluster: sandboxCluster,
    template: { cluster: sandboxCluster, node: "pve1", vmid: 9000 },
    storage: "local-lvm",
    ...simulatedControl(Effect.map(ProxmoxSimulationInstance, (sim) => sim.control))
  })

  contract("the Proxmox wrapper on the sandbox PVE", {
    layer: wrapperOnSandbox,
    machineIds: suiteIds,
    cluster: sandboxCluster,
    template: { cluster: sandboxCluster, node: "pve1", vmid: 9000 },
    storage: "local-lvm",
    ...simulatedControl(Effect.map(SandboxProxmoxInstance, (pve) => pve.control))
  })
})

// What the lab cluster of domain tests stages (test/support/simulatedCluster.ts): a storage that runs out, an id of our
// range held by something else, cloud-init applied at the next boot.
describe("the lab cluster", () => {
  /** The machine of order `order-n`, made now. */
  const cloneTo = (n: number) =>
    Effect.flatMap(Virtualization, (v) =>
      v.createMachine(`order-${n}`, { cluster: labCluster, node: labTemplate.node, template: labTemplate, name: `vps-${n}`, storage: labStorage }).pipe(
        Effect.flatMap((made) => made._tag === "Created" ? Effect.succeed(made.vm) : Effect.die(new Error("under way")))
      ))

  layer(labVirtualization({ storageBytes: 8 * GiB }), { excludeTestServices: true })("small storage", (it) => {
    it.effect("a clone or a resize that does not fit on the storage fails the task", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* cloneTo(1) // the template's 3 GiB and this clone's 3 GiB leave 2 GiB
        assert.instanceOf(yield* Effect.flip(cloneTo(2)), TaskFailed)
        assert.instanceOf(yield* Effect.flip(v.resizeDisk(vm, 6)), TaskFailed)
        yield* v.resizeDisk(vm, 5)
        assert.deepStrictEqual((yield* v.listVms(labCluster)).filter((x) => !x.template).map((x) => x.createdFor), ["order-1"])
        const [pve1] = yield* v.nodeCapacity(labCluster, labStorage)
        assert.deepStrictEqual(pve1?.storage, { availableBytes: 0, totalBytes: 8 * GiB })
      }))
  })

  layer(labVirtualization(), { excludeTestServices: true })("cloud-init", (it) => {
    it.effect("a cloud-init password set on a stopped VM opens the console after the next start", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        const vm = yield* cloneTo(3)
        yield* v.configure(vm, cloudInit("vps-103"))
        yield* v.setCloudInitPassword(vm, Redacted.make("next-boot"))
        yield* v.start(vm)
        const term = yield* terminal(yield* v.openConsole(vm))
        yield* logIn(term, "root", "next-boot")
        yield* term.until("root@vps-103:~# ")
      }))
  })

  layer(labVirtualization({ machineIds: { from: 500, to: 503 } }), { excludeTestServices: true })("range", (it) => {
    it.effect("an id of our range held by something else is never given to an order; a range with no free id is NoMachineIdFree", () =>
      Effect.gen(function*() {
        const v = yield* Virtualization
        yield* SimulatedCluster.place({ cluster: labCluster, node: "pve1", vmid: 500, name: "by-hand", status: "running", cpus: 1, memoryBytes: GiB, diskBytes: GiB })
        const create = (order: string) =>
          v.createMachine(order, { cluster: labCluster, node: labTemplate.node, template: labTemplate, name: "vps-x", storage: labStorage })
        assert.deepStrictEqual(yield* create("a"), { _tag: "Created", vm: { cluster: labCluster, node: "pve1", vmid: 501 } })
        assert.deepStrictEqual(yield* create("b"), { _tag: "Created", vm: { cluster: labCluster, node: "pve1", vmid: 502 } })
        assert.deepInclude(yield* Effect.flip(create("c")), { _tag: "NoMachineIdFree", cluster: labCluster })
        const byHand = (yield* v.listVms(labCluster)).find((x) => x.vmid === 500)
        assert.deepInclude(byHand, { createdFor: null, managed: true, name: "by-hand" })
      }))
  })
})
