// Power calls (reference/proxmox.md §3.7): each forks a worker; "already running" on start is a task failure, reset
// and reboot of a stopped VM fail before forking (qemu-server's `check_running` precedes `fork_worker` there).
import { isTemplate, type Vm } from "./Cluster.ts"
import { fail, paramError, TaskError } from "./PveError.ts"
import { reply, type Route, type RouteContext } from "./Route.ts"
import type { Sim } from "./Sim.ts"
import { bootGuest } from "./guestCommands.ts"
import type { TaskWork } from "./Tasks.ts"
import { assertUnlocked, rootOnly, runningOn, vmInTask } from "./vmGuards.ts"
import { drives } from "./vmConfig.ts"

const START_ROOT_PARAMS = ["stateuri", "skiplock", "migratedfrom", "migration_type", "migration_network", "targetstorage",
  "force-cpu", "with-conntrack-state", "nets-host-mtu"]

const noop: TaskWork = { finish: () => undefined }

/** Powers the VM on: cloud-init's ISO is regenerated here, so config written before applies now (§5.7). */
const powerOn = (sim: Sim, vm: Vm, log: (line: string) => void) => {
  if (drives(vm.config).some((d) => d.cloudinit)) log("generating cloud-init ISO")
  vm.status = "running"
  vm.startedAt = sim.clock.now()
  bootGuest(vm)
  sim.consoles.resetTerminal(vm.vmid)
}

const powerOff = (sim: Sim, vm: Vm) => {
  vm.status = "stopped"
  vm.startedAt = null
  vm.guest.execs.clear()
  sim.consoles.closeForVm(vm.vmid)
}

const vmPath = ({ params }: RouteContext) => ({ node: params.req("node"), vmid: params.reqInt("vmid") })

/** Stop and shutdown: nothing to do when it is not running; otherwise the lock is checked and the VM goes off. */
const stopLike = (type: "qmstop" | "qmshutdown"): Route["handle"] => (context) => {
  const { fork, identity, params, sim } = context
  rootOnly(identity, params, ["skiplock", "keepActive", "migratedfrom"])
  const { node, vmid } = vmPath(context)
  return reply(fork({
    node,
    type,
    id: String(vmid),
    flockVmid: vmid,
    begin: () => {
      const { running, vm } = runningOn(sim.cluster, node, vmid, true)
      if (!running) return noop
      if (params.flag("skiplock") !== true) assertUnlocked(vm, true)
      return { finish: () => powerOff(sim, vm) }
    }
  }))
}

/** Reset and reboot: refused at once when the VM is not running. */
const requireRunning = (sim: Sim, node: string, vmid: number) => {
  const { running } = runningOn(sim.cluster, node, vmid)
  if (!running) throw fail(`VM ${vmid} not running`)
}

export const powerRoutes: ReadonlyArray<Route> = [
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/status/start",
    proxyNode: true,
    handle: (context) => {
      const { fork, identity, params, sim } = context
      rootOnly(identity, params, START_ROOT_PARAMS)
      if (params.has("targetstorage") && !params.has("migratedfrom")) {
        throw paramError({ targetstorage: "targetstorage can only by used with migratedfrom." })
      }
      const { node, vmid } = vmPath(context)
      return reply(fork({
        node,
        type: "qmstart",
        id: String(vmid),
        flockVmid: vmid,
        begin: () => {
          const vm = vmInTask(sim.cluster, node, vmid)
          if (isTemplate(vm)) throw new TaskError("you can't start a vm if it's a template")
          if (params.flag("skiplock") !== true) assertUnlocked(vm, true)
          if (vm.status === "running") throw new TaskError(`VM ${vmid} already running`)
          return { finish: (log) => powerOn(sim, vm, log) }
        }
      }))
    }
  },
  { method: "POST", path: "/nodes/{node}/qemu/{vmid}/status/stop", proxyNode: true, handle: stopLike("qmstop") },
  { method: "POST", path: "/nodes/{node}/qemu/{vmid}/status/shutdown", proxyNode: true, handle: stopLike("qmshutdown") },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/status/reset",
    proxyNode: true,
    handle: (context) => {
      const { fork, identity, params, sim } = context
      rootOnly(identity, params, ["skiplock"])
      const { node, vmid } = vmPath(context)
      requireRunning(sim, node, vmid)
      return reply(fork({
        node,
        type: "qmreset",
        id: String(vmid),
        flockVmid: vmid,
        begin: () => {
          const vm = vmInTask(sim.cluster, node, vmid)
          if (params.flag("skiplock") !== true) assertUnlocked(vm, true)
          return {
            finish: () => {
              // A hard reset reboots the guest but does not regenerate the cloud-init ISO.
              vm.startedAt = sim.clock.now()
              vm.guest.execs.clear()
              sim.consoles.resetTerminal(vmid)
            }
          }
        }
      }))
    }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/status/reboot",
    proxyNode: true,
    handle: (context) => {
      const { fork, sim } = context
      const { node, vmid } = vmPath(context)
      requireRunning(sim, node, vmid)
      return reply(fork({
        node,
        type: "qmreboot",
        id: String(vmid),
        flockVmid: vmid,
        begin: () => {
          const { running, vm } = runningOn(sim.cluster, node, vmid, true)
          if (!running) return noop
          assertUnlocked(vm, true)
          return {
            finish: (log) => {
              powerOff(sim, vm)
              powerOn(sim, vm, log)
            }
          }
        }
      }))
    }
  }
]
