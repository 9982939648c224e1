// The in-process control surface of a sandbox PVE (not reachable over HTTP): its clock, fault injection, the guest
// agent switch, and read-only snapshots of its state and of every request a client sent.
import { agentEnabled, diskBytes, isTemplate, lockOf } from "./Cluster.ts"
import type { Fault } from "./Faults.ts"
import type { RecordedRequest, Sim } from "./Sim.ts"
import { formatSize, memoryMiB, sortedConfig } from "./vmConfig.ts"

export type { Fault as SandboxFault, FaultKind as SandboxFaultKind } from "./Faults.ts"
export type { RecordedRequest } from "./Sim.ts"

export interface SandboxSnapshotState {
  readonly name: string
  readonly description: string
  readonly snaptime: number
  readonly vmstate: boolean
  readonly parent: string | null
}

export interface SandboxVmState {
  readonly vmid: number
  readonly node: string
  readonly name: string
  readonly status: "running" | "stopped"
  readonly template: boolean
  readonly lock: string | null
  /** Every config key as stored: `sshkeys` still percent-encoded, `cipassword` as the client set it (unmasked). */
  readonly config: Readonly<Record<string, string>>
  readonly cores: number
  readonly sockets: number
  /** MiB, as in the config. */
  readonly memory: number
  /** Size of the boot disk. */
  readonly diskBytes: number
  readonly snapshots: ReadonlyArray<SandboxSnapshotState>
  /** Whether the guest agent would answer right now. */
  readonly agentRunning: boolean
}

export interface SandboxTaskState {
  readonly upid: string
  readonly node: string
  readonly type: string
  readonly id: string
  readonly user: string
  readonly status: "running" | "stopped"
  readonly exitstatus: string | null
  readonly log: ReadonlyArray<string>
}

export interface SandboxNodeState {
  readonly name: string
  readonly cpus: number
  readonly memoryBytes: number
  readonly committedCpus: number
  readonly committedMemoryBytes: number
  readonly storage: ReadonlyArray<{ readonly id: string; readonly totalBytes: number; readonly usedBytes: number }>
}

export interface SandboxState {
  readonly vms: ReadonlyArray<SandboxVmState>
  readonly tasks: ReadonlyArray<SandboxTaskState>
  readonly nodes: ReadonlyArray<SandboxNodeState>
  readonly requests: ReadonlyArray<RecordedRequest>
}

export interface SandboxControl {
  /** The simulated clock, in ms since the epoch (real time plus everything advanced). */
  now(): number
  /** Moves the simulated clock forward: tickets, CSRF tokens and console tickets age accordingly. */
  advanceClock(ms: number): void
  inject(fault: Fault): void
  clearFaults(): void
  state(): SandboxState
  /** Every request received, oldest first, with its decoded parameters and headers. */
  requests(): ReadonlyArray<RecordedRequest>
  /** `false` holds the VM's guest agent down ("QEMU guest agent is not running"); `true` lets it answer again. */
  setAgentRunning(vmid: number, running: boolean): void
  /** Console WebSockets currently open. */
  consoleSessions(): number
  /**
   * Changes a VM's stored config as someone outside our control would (an operator, another tool): each key set to
   * its value, or removed when the value is null.
   */
  editConfig(vmid: number, changes: Readonly<Record<string, string | null>>): void
  /**
   * A VM made outside our control (by hand, another tool, an earlier run) appears at `vmid` on `node`: a disk of
   * `diskBytes` on the node's first storage, and `config` (a description, tags) beside the basics.
   */
  place(vm: PlacedVm): void
  /** The VM is migrated to `node` (HA, an operator): found there from now on, as missing on its old node. */
  migrate(vmid: number, node: string): void
}

export interface PlacedVm {
  readonly vmid: number
  readonly node: string
  readonly name: string
  readonly status: "running" | "stopped"
  readonly cores: number
  readonly memoryMiB: number
  readonly diskBytes: number
  readonly config?: Readonly<Record<string, string>>
}

const nodeOf = (sim: Sim, name: string) => {
  const node = sim.cluster.nodes.get(name)
  if (node === undefined) throw new Error(`sandbox: no node ${name}`)
  return node
}

export const makeControl = (sim: Sim): SandboxControl => ({
  now: () => sim.clock.now(),
  advanceClock: (ms) => sim.clock.advance(ms),
  inject: (fault) => sim.faults.inject(fault),
  clearFaults: () => sim.faults.clear(),
  requests: () => [...sim.requests],
  consoleSessions: () => sim.consoles.openCount(),
  editConfig: (vmid, changes) => {
    const vm = sim.cluster.vms.get(vmid)
    if (vm === undefined) throw new Error(`sandbox: no VM ${vmid}`)
    const config = new Map(vm.config)
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) config.delete(key)
      else config.set(key, value)
    }
    vm.config = sortedConfig(config)
    sim.changed()
  },
  place: (placed) => {
    const storage = nodeOf(sim, placed.node).storage[0]
    if (sim.cluster.vms.has(placed.vmid)) throw new Error(`sandbox: VM ${placed.vmid} already exists`)
    if (storage === undefined) throw new Error(`sandbox: node ${placed.node} has no storage`)
    const config = new Map([
      ["cores", String(placed.cores)],
      ["memory", String(placed.memoryMiB)],
      ["name", placed.name],
      ["scsi0", `${storage.id}:vm-${placed.vmid}-disk-0,size=${formatSize(placed.diskBytes)}`],
      ...Object.entries(placed.config ?? {})
    ])
    const vm = sim.cluster.createVm(placed.vmid, placed.node, sortedConfig(config), "root")
    if (placed.status === "running") {
      vm.status = "running"
      vm.startedAt = sim.clock.now()
    }
    sim.changed()
  },
  migrate: (vmid, node) => {
    nodeOf(sim, node)
    const vm = sim.cluster.vms.get(vmid)
    if (vm === undefined) throw new Error(`sandbox: no VM ${vmid}`)
    vm.node = node
    sim.changed()
  },
  setAgentRunning: (vmid, running) => {
    const vm = sim.cluster.vms.get(vmid)
    if (vm === undefined) throw new Error(`sandbox: no VM ${vmid}`)
    vm.agentHeldDown = !running
  },
  state: () => ({
    vms: [...sim.cluster.vms.values()].sort((a, b) => a.vmid - b.vmid).map((vm) => ({
      vmid: vm.vmid,
      node: vm.node,
      name: vm.config.get("name") ?? "",
      status: vm.status,
      template: isTemplate(vm),
      lock: lockOf(vm) ?? null,
      config: Object.fromEntries(vm.config),
      cores: Number(vm.config.get("cores") ?? "1"),
      sockets: Number(vm.config.get("sockets") ?? "1"),
      memory: memoryMiB(vm.config),
      diskBytes: diskBytes(vm),
      snapshots: vm.snapshots.map((s) => ({
        name: s.name,
        description: s.description,
        snaptime: s.snaptime,
        vmstate: s.vmstate,
        parent: s.parent ?? null
      })),
      agentRunning: vm.status === "running" && agentEnabled(vm.config) && !vm.agentHeldDown
    })),
    tasks: sim.tasks.all().map((t) => ({
      upid: t.upid,
      node: t.node,
      type: t.type,
      id: t.id,
      user: t.user,
      status: t.status,
      exitstatus: t.exitstatus ?? null,
      log: [...t.log]
    })),
    nodes: [...sim.cluster.nodes.values()].map((n) => {
      const committed = sim.cluster.committed(n.name)
      return {
        name: n.name,
        cpus: n.cpus,
        memoryBytes: n.memoryBytes,
        committedCpus: committed.cpus,
        committedMemoryBytes: committed.memoryBytes,
        storage: n.storage.map((s) => ({ id: s.id, totalBytes: s.totalBytes, usedBytes: sim.cluster.storageUsed(n.name, s.id) }))
      }
    }),
    requests: [...sim.requests]
  })
})
