// Login, version, cluster-wide and per-node views (reference/proxmox.md §1.1, §3.1–3.3, §6): resources, nextid,
// nodes with their capacity, storage status, and a node's VM list.
import { type Cluster, diskBytes, isTemplate, lockOf, type Vm } from "./Cluster.ts"
import { fail, paramError, PveError } from "./PveError.ts"
import { reply, type Route } from "./Route.ts"
import type { Sim } from "./Sim.ts"
import { memoryBytes, vcpus } from "./vmConfig.ts"

export const PVE_VERSION = { version: "9.0.10", release: "9.0", repoid: "deb1ca707ec72a89" } as const

const ROOTFS_BYTES = 100 * 1024 ** 3
const ROOTFS_USED = 9 * 1024 ** 3
const BOOT_SECONDS = 86_400 * 12

const uptimeOf = (sim: Sim, vm: Vm) =>
  vm.status === "running" && vm.startedAt !== null ? Math.max(0, Math.floor((sim.clock.now() - vm.startedAt) / 1000)) : 0

/** The live numbers qemu-server reports for a VM (`vmstatus`). */
export const vmStats = (sim: Sim, vm: Vm) => {
  const running = vm.status === "running"
  const maxmem = memoryBytes(vm.config)
  return {
    vmid: vm.vmid,
    name: vm.config.get("name") ?? `VM ${vm.vmid}`,
    status: vm.status,
    cpus: vcpus(vm.config),
    maxmem,
    mem: running ? Math.floor(maxmem * 0.35) : 0,
    maxdisk: diskBytes(vm),
    disk: 0,
    cpu: running ? 0.012 : 0,
    uptime: uptimeOf(sim, vm),
    netin: running ? 1024 * 42 : 0,
    netout: running ? 1024 * 17 : 0,
    diskread: running ? 1024 * 1024 * 90 : 0,
    diskwrite: running ? 1024 * 1024 * 12 : 0
  }
}

const withLock = <T extends object>(vm: Vm, entry: T) => {
  const lock = lockOf(vm)
  return lock === undefined ? entry : { ...entry, lock }
}

const nodeEntry = (sim: Sim, name: string) => {
  const spec = sim.cluster.nodes.get(name)
  return {
    id: `node/${name}`,
    type: "node",
    node: name,
    status: "online",
    cpu: sim.cluster.cpuLoad(name),
    maxcpu: spec?.cpus ?? 0,
    mem: sim.cluster.memoryInUse(name),
    maxmem: spec?.memoryBytes ?? 0,
    disk: ROOTFS_USED,
    maxdisk: ROOTFS_BYTES,
    uptime: BOOT_SECONDS,
    level: "",
    "cgroup-mode": 2
  }
}

const resources = (sim: Sim, type: string | undefined) => {
  const out: Array<object> = []
  if (type === undefined || type === "vm") {
    for (const vm of [...sim.cluster.vms.values()].sort((a, b) => a.vmid - b.vmid)) {
      const s = vmStats(sim, vm)
      out.push(withLock(vm, {
        id: `qemu/${vm.vmid}`,
        type: "qemu",
        vmid: vm.vmid,
        node: vm.node,
        name: s.name,
        status: s.status,
        template: isTemplate(vm) ? 1 : 0,
        // Read from the config on every request (reference/proxmox.md §3.1).
        ...(vm.config.has("tags") ? { tags: vm.config.get("tags") } : {}),
        maxcpu: s.cpus,
        cpu: s.cpu,
        maxmem: s.maxmem,
        mem: s.mem,
        maxdisk: s.maxdisk,
        disk: 0,
        uptime: s.uptime,
        netin: s.netin,
        netout: s.netout,
        diskread: s.diskread,
        diskwrite: s.diskwrite
      }))
    }
  }
  if (type === undefined || type === "node") for (const name of sim.cluster.nodes.keys()) out.push(nodeEntry(sim, name))
  if (type === undefined || type === "storage") {
    for (const node of sim.cluster.nodes.values()) {
      for (const storage of node.storage) {
        out.push({
          id: `storage/${node.name}/${storage.id}`,
          type: "storage",
          node: node.name,
          storage: storage.id,
          status: "available",
          disk: sim.cluster.storageUsed(node.name, storage.id),
          maxdisk: storage.totalBytes,
          content: "images,rootdir",
          shared: 0,
          plugintype: "lvmthin"
        })
      }
    }
  }
  return out
}

const NEXTID_LOWER = 100
const NEXTID_UPPER = 1_000_000

const nextFreeId = (cluster: Cluster): number => {
  for (let id = NEXTID_LOWER; id < NEXTID_UPPER; id++) if (!cluster.vms.has(id)) return id
  throw fail(`unable to get any free VMID in range [${NEXTID_LOWER}, ${NEXTID_UPPER})`)
}

const storageStatus = (sim: Sim, node: string, storage: string) => {
  const spec = sim.cluster.nodes.get(node)?.storage.find((s) => s.id === storage)
  if (spec === undefined) throw fail(`storage '${storage}' does not exist`)
  const used = sim.cluster.storageUsed(node, storage)
  return {
    type: "lvmthin",
    content: "images,rootdir",
    active: 1,
    enabled: 1,
    shared: 0,
    total: spec.totalBytes,
    used,
    avail: Math.max(0, spec.totalBytes - used)
  }
}

export const clusterRoutes: ReadonlyArray<Route> = [
  {
    method: "POST",
    path: "/access/ticket",
    proxyNode: false,
    handle: ({ params, sim }) => {
      const realm = params.str("realm")
      const given = params.req("username")
      const username = realm !== undefined && !given.includes("@") ? `${given}@${realm}` : given
      const user = sim.auth.login(username, params.req("password"))
      if (user === undefined) throw new PveError(401, "authentication failure\n")
      const { csrf, ticket } = sim.auth.issueTicket(user)
      return reply({
        username: user,
        ticket,
        CSRFPreventionToken: csrf,
        clustername: sim.clusterName,
        cap: {
          vms: { "VM.Allocate": 1, "VM.Clone": 1, "VM.Config.Cloudinit": 1, "VM.Console": 1, "VM.PowerMgmt": 1 },
          storage: { "Datastore.AllocateSpace": 1, "Datastore.Audit": 1 },
          nodes: { "Sys.Audit": 1 },
          access: {},
          dc: { "Sys.Audit": 1 },
          sdn: { "SDN.Use": 1 }
        }
      })
    }
  },
  { method: "GET", path: "/version", proxyNode: false, handle: () => reply({ ...PVE_VERSION, console: "xtermjs" }) },
  {
    method: "GET",
    path: "/cluster/resources",
    proxyNode: false,
    handle: ({ params, sim }) => reply(resources(sim, params.str("type")))
  },
  {
    method: "GET",
    path: "/cluster/nextid",
    proxyNode: false,
    handle: ({ params, sim }) => {
      const wanted = params.int("vmid")
      if (wanted === undefined) return reply(nextFreeId(sim.cluster))
      if (sim.cluster.vms.has(wanted)) throw paramError({ vmid: `VM ${wanted} already exists` })
      return reply(wanted)
    }
  },
  {
    method: "GET",
    path: "/nodes",
    proxyNode: false,
    handle: ({ sim }) =>
      reply([...sim.cluster.nodes.keys()].map((name) => {
        const { cpu, disk, id, level, maxcpu, maxdisk, maxmem, mem, node, status, type, uptime } = nodeEntry(sim, name)
        return { id, type, node, status, cpu, maxcpu, mem, maxmem, disk, maxdisk, uptime, level,
          ssl_fingerprint: "5A:1B:0C:6E:2F:93:D7:44:8B:A0:3C:71:E5:29:9F:06:BD:12:48:C3:7A:55:E1:0D:96:3B:F4:28:6C:A7:1E:80" }
      }))
  },
  {
    method: "GET",
    path: "/nodes/{node}/status",
    proxyNode: true,
    handle: ({ params, sim }) => {
      const name = params.req("node")
      const spec = sim.cluster.nodes.get(name)
      const total = spec?.memoryBytes ?? 0
      const used = sim.cluster.memoryInUse(name)
      return reply({
        cpu: sim.cluster.cpuLoad(name),
        cpuinfo: { cores: Math.max(1, (spec?.cpus ?? 2) / 2), cpus: spec?.cpus ?? 0, sockets: 1, model: "AMD EPYC 7313P 16-Core Processor" },
        memory: { total, used, free: total - used, available: total - used },
        swap: { total: 0, used: 0, free: 0 },
        rootfs: { total: ROOTFS_BYTES, used: ROOTFS_USED, avail: ROOTFS_BYTES - ROOTFS_USED, free: ROOTFS_BYTES - ROOTFS_USED },
        loadavg: ["0.21", "0.18", "0.12"],
        uptime: BOOT_SECONDS,
        pveversion: `pve-manager/${PVE_VERSION.version}/${PVE_VERSION.repoid}`,
        "current-kernel": { sysname: "Linux", release: "6.14.8-2-pve", version: "#1 SMP PREEMPT_DYNAMIC PMX 6.14.8-2", machine: "x86_64" },
        "boot-info": { mode: "efi", secureboot: 0 },
        ksm: { shared: 0 }
      })
    }
  },
  {
    method: "GET",
    path: "/nodes/{node}/storage/{storage}/status",
    proxyNode: true,
    handle: ({ params, sim }) => reply(storageStatus(sim, params.req("node"), params.req("storage")))
  },
  {
    method: "GET",
    path: "/nodes/{node}/qemu",
    proxyNode: true,
    handle: ({ params, sim }) => {
      const node = params.req("node")
      const vms = [...sim.cluster.vms.values()].filter((vm) => vm.node === node).sort((a, b) => a.vmid - b.vmid)
      return reply(vms.map((vm) => {
        const entry = withLock(vm, vmStats(sim, vm))
        return isTemplate(vm) ? { ...entry, template: 1 } : entry
      }))
    }
  }
]
