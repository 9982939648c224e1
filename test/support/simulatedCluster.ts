// The lab cluster of domain tests: the Proxmox adapter over the PVE simulation in memory (SimulatedVirtualization,
// with the in-memory VMID registry), and what a test drives of it said in the port's terms: the next call of an
// operation failing as the port would report it (staged as the upstream failure that gives that report), how many
// times an operation reached the cluster, the VMs as the cluster holds them, and changes made behind our back.
import { Effect, Layer } from "effect"
import * as MemoryProxmoxVmids from "../../adapters/fake/MemoryProxmoxVmids.ts"
import {
  ProxmoxSimulationInstance,
  type RecordedRequest,
  type SandboxFaultKind,
  type SandboxVmState
} from "../../adapters/proxmox/sandbox/ProxmoxSimulation.ts"
import * as SimulatedVirtualization from "../../adapters/proxmox/SimulatedVirtualization.ts"
import { stampOf } from "../../adapters/proxmox/stamp.ts"
import type { ShutdownTimedOut, TaskFailed, VirtualizationUnavailable, VmRef } from "../../ports/Virtualization.ts"
import { labCluster, labSeed } from "./virtualizationMother.ts"

/** The lab cluster (virtualizationMother) simulated, our machines at `machineIds`; every task instant. */
export const labVirtualization = (options: {
  readonly machineIds?: { readonly from: number; readonly to: number }
  readonly storageBytes?: number
} = {}) =>
  SimulatedVirtualization.layer({
    cluster: labCluster,
    ...labSeed(options),
    adapter: { vmidRange: options.machineIds ?? { from: 100_000, to: 200_000 } }
  }).pipe(Layer.provide(MemoryProxmoxVmids.layer))

const vm = (suffix: string) => new RegExp(`^/api2/json/nodes/[^/]+/qemu/\\d+${suffix}$`)
const resources = /^\/api2\/json\/cluster\/resources$/

/** The request by which each operation reaches the cluster (the adapter may read more around it). */
const requestOf = {
  listVms: { method: "GET", path: resources, query: { type: "vm" } },
  nodeCapacity: { method: "GET", path: resources, query: { type: "node" } },
  createMachine: { method: "POST", path: vm("/clone") },
  // A VM's config, not the check that a VMID is free before a clone (the same read, of a VM that does not exist yet).
  ownerOf: { method: "GET", path: vm("/config"), vm: "exists" },
  configure: { method: "POST", path: vm("/config") },
  resizeDisk: { method: "PUT", path: vm("/resize") },
  start: { method: "POST", path: vm("/status/start") },
  stop: { method: "POST", path: vm("/status/stop") },
  shutdown: { method: "POST", path: vm("/status/shutdown") },
  destroy: { method: "DELETE", path: vm("") },
  listSnapshots: { method: "GET", path: vm("/snapshot") },
  createSnapshot: { method: "POST", path: vm("/snapshot") },
  deleteSnapshot: { method: "DELETE", path: vm("/snapshot/[^/]+") }
} as const

export type Operation = keyof typeof requestOf

/** How the port reports the failure, and so what the cluster does to give it. */
export type Failure = VirtualizationUnavailable | TaskFailed | ShutdownTimedOut

/** An unavailable cluster answers 503 with the detail; a failed task ends with its exit status (§2.2, §2.3, §3.7). */
const faultOf = (failure: Failure): SandboxFaultKind => {
  switch (failure._tag) {
    case "VirtualizationUnavailable":
      return { _tag: "status", status: 503, message: failure.detail }
    case "TaskFailed":
      return { _tag: "taskFailure", exitStatus: failure.exitStatus }
    case "ShutdownTimedOut":
      return { _tag: "taskFailure", exitStatus: "VM quit/powerdown failed - got timeout" }
  }
}

const matches = (operation: Operation) => (request: RecordedRequest) => {
  const { method, path, ...rest } = requestOf[operation]
  const query = "query" in rest ? rest.query : {}
  return request.method === method && path.test(request.path) &&
    Object.entries(query).every(([name, value]) => String(request.query[name]) === value) &&
    (!("vm" in rest) || request.vmExists === true)
}

const control = Effect.map(ProxmoxSimulationInstance, (sim) => sim.control)
const withControl = <A>(f: (c: Effect.Success<typeof control>) => A) => Effect.flatMap(control, (c) => Effect.sync(() => f(c)))

/** The VM as PVE holds it, with the order our stamp names (tags first, then the description's line). */
export interface ClusterVm extends SandboxVmState {
  readonly cluster: string
  readonly stamp: string | null
  /** Started when its node boots (`onboot: 1`). */
  readonly onBoot: boolean
}

/** What domain tests drive of the simulated lab cluster. */
export const SimulatedCluster = {
  /** Every VM, templates included, by VMID. */
  vms: withControl((c): ReadonlyArray<ClusterVm> =>
    c.state().vms.map((v) => ({
      ...v,
      cluster: labCluster,
      stamp: stampOf(v.config["tags"], v.config["description"]),
      onBoot: v.config["onboot"] === "1"
    }))),
  /** The next call of `operation` fails as `failure` says; queued (twice = the next two). */
  failNext: (operation: Operation, failure: Failure) =>
    withControl((c) => c.inject({ match: requestOf[operation], kind: faultOf(failure) })),
  /** Every call of `operation` fails as `failure` says until `clearFaults`. */
  failAlways: (operation: Operation, failure: Failure) =>
    withControl((c) => c.inject({ match: requestOf[operation], kind: faultOf(failure), times: Infinity })),
  clearFaults: withControl((c) => c.clearFaults()),
  /** How many times `operation` reached the cluster, failed calls included. */
  calls: (operation: Operation) => withControl((c) => c.requests().filter(matches(operation)).length),
  /** Someone outside our control re-marks the VM (null: wipes our stamp), tags and description, as in the UI. */
  restamp: (ref: VmRef, stamp: string | null) =>
    withControl((c) =>
      c.editConfig(ref.vmid, {
        tags: stamp === null ? null : `zh-order-${stamp}`,
        description: stamp === null ? "someone else's VM" : `zh-order: ${stamp}`
      })),
  /** The VM is migrated to `node` (HA, an operator). */
  migrate: (ref: VmRef, node: string) => withControl((c) => c.migrate(ref.vmid, node)),
  /**
   * A VM made outside our provisioning appears at `vm`; `stamp` is what its own record names (a clone's description
   * line; the listing shows none), none by default.
   */
  place: (
    placed: VmRef & { readonly name: string; readonly status: "running" | "stopped"; readonly cpus: number; readonly memoryBytes: number; readonly diskBytes: number },
    stamp?: string
  ) =>
    withControl((c) =>
      c.place({
        vmid: placed.vmid,
        node: placed.node,
        name: placed.name,
        status: placed.status,
        cores: placed.cpus,
        memoryMiB: placed.memoryBytes / 1024 ** 2,
        diskBytes: placed.diskBytes,
        ...(stamp === undefined ? {} : { config: { description: `zh-order: ${stamp}` } })
      }))
}
