// Clone, resize, destroy and live status of a VM (reference/proxmox.md §3.4, §3.6, §3.7, §3.10): the synchronous
// checks qemu-server makes before forking, and what its workers do to configs and storage.
import { agentEnabled, type Cluster, isTemplate, lockOf, type Vm } from "./Cluster.ts"
import { vmStats } from "./clusterRoutes.ts"
import { fail, TaskError } from "./PveError.ts"
import { reply, type Route } from "./Route.ts"
import { assertUnlocked, rootOnly, vmInTask } from "./vmGuards.ts"
import {
  configDigest,
  dataDrives,
  drives,
  newSmbios,
  newUuid,
  normaliseNet,
  parseSize,
  sortedConfig,
  type VmConfig,
  withDriveSize
} from "./vmConfig.ts"

const EXTENT = 4 * 1024 * 1024
const GIB = 1024 ** 3

const gib = (bytes: number) => `${(bytes / GIB).toFixed(2)} GiB`

/** Keys a clone never copies (snapshot bookkeeping, runtime state, unused volumes). */
const notCopied = (key: string) =>
  ["snapshots", "parent", "snaptime", "vmstate", "snapstate", "runningcpu", "runningmachine", "running-nets-host-mtu",
    "lock", "template"].includes(key) || /^unused\d+$/.test(key)

interface ClonePlan {
  readonly config: VmConfig
  /** Bytes needed per storage. */
  readonly needs: ReadonlyMap<string, number>
  readonly copies: ReadonlyArray<{ readonly key: string; readonly from: string; readonly size: number }>
}

/** The new VM's config: fresh MACs, SMBIOS UUID and vmgenid, new volumes on the target storage. */
const planClone = (
  source: Vm,
  sourceConfig: VmConfig,
  newid: number,
  options: { readonly full: boolean; readonly storage: string | undefined; readonly name: string | undefined; readonly description: string | undefined }
): ClonePlan => {
  const config: VmConfig = new Map()
  const needs = new Map<string, number>()
  const copies: Array<{ key: string; from: string; size: number }> = []
  const byKey = new Map(drives(sourceConfig).map((d) => [d.key, d]))
  let disk = 0
  for (const [key, value] of sourceConfig) {
    if (notCopied(key)) continue
    const drive = byKey.get(key)
    if (/^net\d+$/.test(key)) config.set(key, normaliseNet(value, true) ?? value)
    else if (drive === undefined || (drive.cdrom && !drive.cloudinit)) config.set(key, value)
    else if (drive.cloudinit) config.set(key, `${options.storage ?? drive.storage}:vm-${newid}-cloudinit,media=cdrom`)
    else {
      const storage = options.full ? options.storage ?? drive.storage : drive.storage
      const volname = options.full
        ? `vm-${newid}-disk-${disk}`
        : `${drive.volid.split(":")[1] ?? ""}/vm-${newid}-disk-${disk}`
      disk += 1
      config.set(key, withDriveSize(`${storage}:${volname}`, drive.size))
      needs.set(storage, (needs.get(storage) ?? 0) + drive.size)
      copies.push({ key, from: drive.volid, size: drive.size })
    }
  }
  config.set("smbios1", newSmbios(sourceConfig.get("smbios1")))
  if (sourceConfig.has("vmgenid")) config.set("vmgenid", newUuid())
  config.set("name", options.name ?? `Copy-of-VM-${sourceConfig.get("name") ?? source.vmid}`)
  if (options.description !== undefined && options.description !== "") config.set("description", options.description)
  return { config: sortedConfig(config), needs, copies }
}

const removeIfStill = (cluster: Cluster, vm: Vm) => {
  if (cluster.vms.get(vm.vmid) === vm) cluster.vms.delete(vm.vmid)
}

const cloneRoute: Route = {
  method: "POST",
  path: "/nodes/{node}/qemu/{vmid}/clone",
  proxyNode: true,
  handle: ({ fork, params, sim }) => {
    const cluster = sim.cluster
    const node = params.req("node")
    const vmid = params.reqInt("vmid")
    const newid = params.reqInt("newid")
    const storage = params.str("storage")
    const given = params.str("target")
    const target = given === undefined || given === node || given === "localhost" ? undefined : given
    const pool = params.str("pool")
    if (pool !== undefined) throw fail(`pool '${pool}' does not exist`)
    if (target !== undefined && !cluster.nodes.has(target)) throw fail(`no such cluster node '${target}'`)
    if (storage !== undefined) {
      if (cluster.nodes.get(node)?.storage.find((s) => s.id === storage) === undefined) {
        throw fail(`storage '${storage}' does not exist`)
      }
      if (target !== undefined) throw fail(`can't clone to non-shared storage '${storage}'`)
    }
    const source = cluster.vmOn(node, vmid)
    assertUnlocked(source)
    const snapname = params.str("snapname")
    const snapshot = snapname === undefined ? undefined : source.snapshots.find((s) => s.name === snapname)
    if (snapname !== undefined && snapshot === undefined) throw fail(`snapshot '${snapname}' does not exist`)
    const full = params.flag("full") ?? !isTemplate(source)
    if (storage !== undefined && !full) throw fail("parameter 'storage' not allowed for linked clones")
    if (params.has("format") && !full) throw fail("parameter 'format' not allowed for linked clones")
    const sourceConfig = snapshot?.config ?? source.config
    if (!full) {
      const notBase = dataDrives(sourceConfig).find((d) => !(d.volid.split(":")[1] ?? "").startsWith("base-"))
      if (notBase !== undefined) throw fail(`Linked clone feature is not supported for '${notBase.volid}' (${notBase.key})`)
    }
    if (target !== undefined) throw fail(`can't clone VM to node '${target}' (VM uses local storage)`)
    if (cluster.vms.has(newid)) throw fail(`unable to create VM ${newid}: config file already exists`)

    // The new config exists at once, holding only the clone lock, so the VMID is taken from here on.
    const clone = cluster.createVm(newid, node, new Map([["lock", "clone"]]), source.imageUser)
    const plan = planClone(source, sourceConfig, newid, {
      full,
      storage,
      name: params.str("name"),
      description: params.str("description")
    })
    const upid = fork({
      node,
      type: "qmclone",
      id: String(vmid),
      begin: (log) => {
        log(`creating a clone of VM ${vmid} with ID ${newid}`)
        for (const [store, bytes] of plan.needs) {
          const free = cluster.storageFree(node, store)
          if (bytes > free) {
            removeIfStill(cluster, clone)
            throw new TaskError(
              `clone failed: lvcreate 'pve/vm-${newid}-disk-0' error:   Volume group "pve" has insufficient free space ` +
                `(${Math.floor(free / EXTENT)} extents): ${Math.ceil(bytes / EXTENT)} required.`
            )
          }
        }
        clone.config = new Map([...plan.config, ["lock", "clone"]])
        for (const copy of plan.copies) {
          log(`create ${full ? "full" : "linked"} clone of drive ${copy.key} (${copy.from})`)
          log(`  Logical volume "vm-${newid}-disk-${plan.copies.indexOf(copy)}" created.`)
        }
        return {
          finish: (finishLog) => {
            for (const copy of plan.copies) {
              if (full) finishLog(`transferred ${gib(copy.size)} of ${gib(copy.size)} (100.00%)`)
            }
            clone.config.delete("lock")
          },
          abort: () => removeIfStill(cluster, clone)
        }
      }
    })
    return reply(upid)
  }
}

const resizeRoute: Route = {
  method: "PUT",
  path: "/nodes/{node}/qemu/{vmid}/resize",
  proxyNode: true,
  handle: ({ fork, identity, params, sim }) => {
    rootOnly(identity, params, ["skiplock"])
    const node = params.req("node")
    const vmid = params.reqInt("vmid")
    const disk = params.req("disk")
    const sizeText = params.req("size")
    // Every check of the resize runs inside the worker (reference/proxmox.md §3.6).
    return reply(fork({
      node,
      type: "resize",
      id: String(vmid),
      flockVmid: vmid,
      begin: () => {
        const vm = vmInTask(sim.cluster, node, vmid)
        const digest = params.str("digest")
        if (digest !== undefined && digest !== "" && digest !== configDigest(vm.config)) {
          throw new TaskError("checksum mismatch (file change by other user?)")
        }
        if (params.flag("skiplock") !== true) assertUnlocked(vm, true)
        const value = vm.config.get(disk)
        if (value === undefined) throw new TaskError(`disk '${disk}' does not exist`)
        const drive = drives(vm.config).find((d) => d.key === disk)
        if (drive === undefined || drive.volid === "") throw new TaskError(`disk '${disk}' has no associated volume`)
        if (drive.cdrom) throw new TaskError("you can't resize a cdrom")
        const grow = sizeText.startsWith("+")
        const requested = parseSize(sizeText.replace(/^\+/, "")) ?? 0
        const newSize = Math.floor(grow ? drive.size + requested : requested)
        if (newSize < drive.size) throw new TaskError("shrinking disks is not supported")
        if (newSize === drive.size) return { finish: () => undefined }
        const growth = newSize - drive.size
        if (growth > sim.cluster.storageFree(node, drive.storage)) {
          throw new TaskError(`command '/sbin/lvextend -L ${newSize / 1024}k pve/${drive.volid.split(":")[1] ?? ""}' failed: exit code 5`)
        }
        return {
          finish: (log) => {
            log(`  Size of logical volume pve/${drive.volid.split(":")[1] ?? ""} changed from ${gib(drive.size)} ` +
              `(${drive.size / EXTENT} extents) to ${gib(newSize)} (${newSize / EXTENT} extents).`)
            log(`  Logical volume pve/${drive.volid.split(":")[1] ?? ""} successfully resized.`)
            vm.config.set(disk, withDriveSize(value, newSize))
          }
        }
      }
    }))
  }
}

const destroyRoute: Route = {
  method: "DELETE",
  path: "/nodes/{node}/qemu/{vmid}",
  proxyNode: true,
  handle: ({ fork, identity, params, sim }) => {
    rootOnly(identity, params, ["skiplock"])
    const node = params.req("node")
    const vmid = params.reqInt("vmid")
    const earlyChecks = (vm: Vm, inTask: boolean) => {
      const problem = vm.config.get("protection") === "1"
        ? `can't remove VM ${vmid} - protection mode enabled`
        : vm.status === "running"
        ? `VM ${vmid} is running - destroy failed`
        : undefined
      if (problem !== undefined) throw inTask ? new TaskError(problem) : fail(problem)
    }
    earlyChecks(sim.cluster.vmOn(node, vmid), false)
    return reply(fork({
      node,
      type: "qmdestroy",
      id: String(vmid),
      flockVmid: vmid,
      begin: () => {
        const vm = vmInTask(sim.cluster, node, vmid)
        earlyChecks(vm, true)
        if (params.flag("skiplock") !== true) assertUnlocked(vm, true)
        // The config stays (locked) until the very end, so the VMID is not reusable before the task is done.
        vm.config.set("lock", "destroyed")
        return {
          finish: (log) => {
            for (const d of dataDrives(vm.config)) log(`  Logical volume "${d.volid.split(":")[1] ?? ""}" successfully removed.`)
            if (params.flag("purge") === true) log(`purging VM ${vmid} from related configurations..`)
            sim.consoles.closeForVm(vmid)
            if (sim.cluster.vms.get(vmid) === vm) sim.cluster.vms.delete(vmid)
          },
          abort: () => {
            vm.config.delete("lock")
          }
        }
      }
    }))
  }
}

const statusRoute: Route = {
  method: "GET",
  path: "/nodes/{node}/qemu/{vmid}/status/current",
  proxyNode: true,
  handle: ({ params, sim }) => {
    const vm = sim.cluster.vmOn(params.req("node"), params.reqInt("vmid"))
    const stats = vmStats(sim, vm)
    const running = vm.status === "running"
    const lock = lockOf(vm)
    return reply({
      ...stats,
      qmpstatus: vm.status,
      ha: { managed: 0 },
      ...(agentEnabled(vm.config) ? { agent: 1 } : {}),
      ...([...vm.config.keys()].some((k) => /^serial\d$/.test(k)) ? { serial: 1 } : {}),
      ...(lock === undefined ? {} : { lock }),
      ...(vm.config.has("tags") ? { tags: vm.config.get("tags") } : {}),
      ...(isTemplate(vm) ? { template: 1 } : {}),
      ...(running
        ? { pid: 10_000 + vm.vmid, "running-qemu": "10.0.2", "running-machine": "pc-i440fx-10.0+pve0" }
        : {})
    })
  }
}

export const vmRoutes: ReadonlyArray<Route> = [cloneRoute, resizeRoute, destroyRoute, statusRoute]
