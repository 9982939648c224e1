// Snapshots (reference/proxmox.md §3.8): the list with its pseudo entry `current`, create and delete as workers that
// hold the `snapshot` / `snapshot-delete` config lock while they run.
import { fail, TaskError } from "./PveError.ts"
import { reply, type Route } from "./Route.ts"
import { assertUnlocked, vmInTask } from "./vmGuards.ts"
import { configDigest, dataDrives } from "./vmConfig.ts"

export const snapshotRoutes: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/nodes/{node}/qemu/{vmid}/snapshot",
    proxyNode: true,
    handle: ({ params, sim }) => {
      const vm = sim.cluster.vmOn(params.req("node"), params.reqInt("vmid"))
      const items: Array<Record<string, string | number>> = vm.snapshots.map((s) => ({
        name: s.name,
        description: s.description,
        snaptime: s.snaptime,
        vmstate: s.vmstate ? 1 : 0,
        ...(s.parent === undefined ? {} : { parent: s.parent })
      }))
      const parent = vm.config.get("parent")
      items.push({
        name: "current",
        description: "You are here!",
        digest: configDigest(vm.config),
        running: vm.status === "running" ? 1 : 0,
        ...(parent === undefined ? {} : { parent })
      })
      return reply(items)
    }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/snapshot",
    proxyNode: true,
    handle: ({ fork, params, sim }) => {
      const node = params.req("node")
      const vmid = params.reqInt("vmid")
      const snapname = params.req("snapname")
      if (snapname === "current") throw fail("unable to use snapshot name 'current' (reserved name)")
      if (snapname.toLowerCase() === "pending") throw fail("unable to use snapshot name 'pending' (reserved name)")
      sim.cluster.vmOn(node, vmid)
      return reply(fork({
        node,
        type: "qmsnapshot",
        id: String(vmid),
        begin: (log) => {
          const vm = vmInTask(sim.cluster, node, vmid)
          assertUnlocked(vm, true)
          if (vm.snapshots.some((s) => s.name === snapname)) throw new TaskError(`snapshot name '${snapname}' already used`)
          const withState = params.flag("vmstate") === true && vm.status === "running"
          vm.config.set("lock", "snapshot")
          if (withState) log("saving VM state and RAM using storage 'local-lvm'")
          for (const d of dataDrives(vm.config)) log(`snapshotting 'drive-${d.key}' (${d.volid})`)
          return {
            finish: (finishLog) => {
              const config = new Map(vm.config)
              config.delete("lock")
              config.delete("parent")
              vm.snapshots.push({
                name: snapname,
                description: params.str("description") ?? "",
                snaptime: sim.clock.nowSeconds(),
                vmstate: withState,
                parent: vm.config.get("parent"),
                config
              })
              for (const d of dataDrives(vm.config)) {
                finishLog(`  Logical volume "snap_${d.volid.split(":")[1] ?? ""}_${snapname}" created.`)
              }
              vm.config.set("parent", snapname)
              vm.config.delete("lock")
            },
            abort: () => {
              vm.config.delete("lock")
            }
          }
        }
      }))
    }
  },
  {
    method: "DELETE",
    path: "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}",
    proxyNode: true,
    handle: ({ fork, params, sim }) => {
      const node = params.req("node")
      const vmid = params.reqInt("vmid")
      const snapname = params.req("snapname")
      return reply(fork({
        node,
        type: "qmdelsnapshot",
        id: String(vmid),
        begin: () => {
          const vm = vmInTask(sim.cluster, node, vmid)
          const snapshot = vm.snapshots.find((s) => s.name === snapname)
          if (snapshot === undefined) throw new TaskError(`snapshot '${snapname}' does not exist`)
          if (params.flag("force") !== true) assertUnlocked(vm, true)
          vm.config.set("lock", "snapshot-delete")
          return {
            finish: (log) => {
              for (const d of dataDrives(snapshot.config)) {
                log(`  Logical volume "snap_${d.volid.split(":")[1] ?? ""}_${snapname}" successfully removed.`)
              }
              const at = vm.snapshots.indexOf(snapshot)
              if (at >= 0) vm.snapshots.splice(at, 1)
              for (const other of vm.snapshots) if (other.parent === snapname) other.parent = snapshot.parent
              if (vm.config.get("parent") === snapname) {
                if (snapshot.parent === undefined) vm.config.delete("parent")
                else vm.config.set("parent", snapshot.parent)
              }
              vm.config.delete("lock")
            },
            abort: () => {
              vm.config.delete("lock")
            }
          }
        }
      }))
    }
  }
]
