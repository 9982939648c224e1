// The simulated cluster's state: nodes with their storage, VMs with their configs, snapshots, power state and guest,
// and the per-VM config flocks. Capacity (committed vCPUs/RAM, storage use) is always derived from the VMs.
import {
  bootDisk,
  dataDrives,
  formatSize,
  memoryBytes,
  newSmbios,
  newUuid,
  normaliseNet,
  vcpus,
  type VmConfig
} from "./vmConfig.ts"
import { configMissing, fail } from "./PveError.ts"
import { Flock } from "./Flock.ts"

export interface StorageSpec {
  readonly id: string
  readonly totalBytes: number
}

export interface NodeSpec {
  readonly name: string
  readonly cpus: number
  readonly memoryBytes: number
  readonly storage: ReadonlyArray<StorageSpec>
}

export interface TemplateSpec {
  readonly vmid: number
  readonly node: string
  readonly name: string
  readonly diskBytes: number
}

export interface Snapshot {
  readonly name: string
  readonly description: string
  readonly snaptime: number
  readonly vmstate: boolean
  parent: string | undefined
  readonly config: VmConfig
}

export interface GuestExec {
  readonly exitcode: number
  readonly out: string
  readonly err: string
}

/** What runs inside the VM: its hostname and accounts as cloud-init and the agent left them. */
export interface Guest {
  hostname: string
  readonly passwords: Map<string, string>
  readonly execs: Map<number, GuestExec>
  nextPid: number
}

export interface Vm {
  readonly vmid: number
  node: string
  config: VmConfig
  status: "running" | "stopped"
  /** Simulated ms when it last started. */
  startedAt: number | null
  readonly snapshots: Array<Snapshot>
  /** The user the cloud image ships with (`debian`, `ubuntu`), used when `ciuser` is not set. */
  readonly imageUser: string
  guest: Guest
  /** `setAgentRunning(vmid, false)` holds the agent down regardless of the config. */
  agentHeldDown: boolean
}

export const newGuest = (hostname: string): Guest => ({ hostname, passwords: new Map(), execs: new Map(), nextPid: 1000 })

export class Cluster {
  readonly nodes: ReadonlyMap<string, NodeSpec>
  readonly vms = new Map<number, Vm>()
  private readonly flocks = new Map<number, Flock>()

  constructor(nodes: ReadonlyArray<NodeSpec>, templates: ReadonlyArray<TemplateSpec>) {
    this.nodes = new Map(nodes.map((n) => [n.name, n]))
    for (const t of templates) this.addTemplate(t)
  }

  private addTemplate(t: TemplateSpec): void {
    const node = this.nodes.get(t.node)
    const storage = node?.storage[0]
    if (node === undefined || storage === undefined) throw new Error(`template ${t.vmid}: no node '${t.node}' with storage`)
    const config: VmConfig = new Map([
      ["boot", "order=scsi0"],
      ["cores", "1"],
      ["ide2", `${storage.id}:vm-${t.vmid}-cloudinit,media=cdrom`],
      ["memory", "1024"],
      ["meta", `creation-qemu=9.2.0,ctime=${Math.floor(Date.now() / 1000)}`],
      ["name", t.name],
      ["net0", normaliseNet("virtio,bridge=vmbr0") ?? ""],
      ["ostype", "l26"],
      ["scsi0", `${storage.id}:base-${t.vmid}-disk-0,size=${formatSize(t.diskBytes)}`],
      ["scsihw", "virtio-scsi-single"],
      ["smbios1", newSmbios(undefined)],
      ["template", "1"],
      ["vmgenid", newUuid()]
    ])
    this.vms.set(t.vmid, {
      vmid: t.vmid,
      node: t.node,
      config,
      status: "stopped",
      startedAt: null,
      snapshots: [],
      imageUser: t.name.split("-")[0] ?? "root",
      guest: newGuest(t.name),
      agentHeldDown: false
    })
  }

  /** `load_config($vmid)` on `node`: the VM, or the 500 qemu-server gives for a missing or misplaced config. */
  vmOn(node: string, vmid: number): Vm {
    const vm = this.vms.get(vmid)
    if (vm === undefined || vm.node !== node) throw fail(configMissing(node, vmid))
    return vm
  }

  flock(vmid: number): Flock {
    let flock = this.flocks.get(vmid)
    if (flock === undefined) {
      flock = new Flock()
      this.flocks.set(vmid, flock)
    }
    return flock
  }

  createVm(vmid: number, node: string, config: VmConfig, imageUser: string): Vm {
    const vm: Vm = {
      vmid,
      node,
      config,
      status: "stopped",
      startedAt: null,
      snapshots: [],
      imageUser,
      guest: newGuest(config.get("name") ?? `vm${vmid}`),
      agentHeldDown: false
    }
    this.vms.set(vmid, vm)
    return vm
  }

  // --- capacity ----------------------------------------------------------------------------------------------------

  storageUsed(node: string, storage: string): number {
    let used = 0
    for (const vm of this.vms.values()) {
      if (vm.node !== node) continue
      for (const d of dataDrives(vm.config)) if (d.storage === storage) used += d.size
    }
    return used
  }

  storageFree(node: string, storage: string): number {
    const spec = this.nodes.get(node)?.storage.find((s) => s.id === storage)
    return spec === undefined ? 0 : Math.max(0, spec.totalBytes - this.storageUsed(node, storage))
  }

  /** vCPUs and RAM claimed by the node's non-template VMs, stopped ones included (reference/proxmox.md §6). */
  committed(node: string): { readonly cpus: number; readonly memoryBytes: number } {
    let cpus = 0
    let memory = 0
    for (const vm of this.vms.values()) {
      if (vm.node !== node || isTemplate(vm)) continue
      cpus += vcpus(vm.config)
      memory += memoryBytes(vm.config)
    }
    return { cpus, memoryBytes: memory }
  }

  /** Live memory use: a 2 GiB host baseline plus what running guests hold. */
  memoryInUse(node: string): number {
    let used = 2 * 1024 ** 3
    for (const vm of this.vms.values()) if (vm.node === node && vm.status === "running") used += memoryBytes(vm.config)
    const total = this.nodes.get(node)?.memoryBytes ?? used
    return Math.min(used, total)
  }

  cpuLoad(node: string): number {
    let running = 0
    for (const vm of this.vms.values()) if (vm.node === node && vm.status === "running") running += vcpus(vm.config)
    const cpus = this.nodes.get(node)?.cpus ?? 1
    return Math.min(1, 0.01 + (0.05 * running) / cpus)
  }
}

export const isTemplate = (vm: Vm) => vm.config.get("template") === "1"

export const lockOf = (vm: Vm): string | undefined => vm.config.get("lock")

export const diskBytes = (vm: Vm): number => bootDisk(vm.config)?.size ?? 0

/** The agent answers when the VM runs, `agent` is enabled in its config and no test holds it down. */
export const agentEnabled = (config: VmConfig): boolean => {
  const raw = config.get("agent")
  if (raw === undefined) return false
  const m = /(?:^|,)(?:enabled=)?([01])(?:,|$)/.exec(raw)
  return m?.[1] === "1"
}

export const loginUser = (vm: Vm): string => vm.config.get("ciuser") ?? vm.imageUser
