// Guest-agent calls (reference/proxmox.md §3.9): each fails with qemu-server's `assert_agent_available` messages unless
// the agent is configured, the VM runs and the agent answers; exec results are kept by pid until read once exited.
import { agentEnabled, type Vm } from "./Cluster.ts"
import { guestUsers, runGuestCommand } from "./guestCommands.ts"
import { fail } from "./PveError.ts"
import { reply, type Route, type RouteContext } from "./Route.ts"

/** `assert_agent_available`: configured, running, answering — in that order. */
const agentVm = ({ params, sim }: RouteContext): Vm => {
  const vm = sim.cluster.vmOn(params.req("node"), params.reqInt("vmid"))
  if (!vm.config.has("agent")) throw fail("No QEMU guest agent configured")
  if (vm.status !== "running") throw fail(`VM ${vm.vmid} is not running`)
  if (!agentEnabled(vm.config) || vm.agentHeldDown) throw fail("QEMU guest agent is not running")
  return vm
}

export const agentRoutes: ReadonlyArray<Route> = [
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/agent/exec",
    proxyNode: true,
    handle: (context) => {
      const vm = agentVm(context)
      const command = context.params.list("command")
      const input = context.params.str("input-data")
      if (command.length === 0 && input === undefined) throw fail("command or input-data (or both) required")
      const pid = vm.guest.nextPid++
      vm.guest.execs.set(pid, runGuestCommand(vm, command, { input }))
      return reply({ pid })
    }
  },
  {
    method: "GET",
    path: "/nodes/{node}/qemu/{vmid}/agent/exec-status",
    proxyNode: true,
    handle: (context) => {
      const vm = agentVm(context)
      const pid = context.params.reqInt("pid")
      const result = vm.guest.execs.get(pid)
      if (result === undefined) throw fail("Agent error: Invalid parameter 'pid'")
      // QGA forgets a process once its exit status has been collected.
      vm.guest.execs.delete(pid)
      return reply({
        exited: 1,
        exitcode: result.exitcode,
        ...(result.out === "" ? {} : { "out-data": result.out }),
        ...(result.err === "" ? {} : { "err-data": result.err })
      })
    }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/agent/ping",
    proxyNode: true,
    handle: (context) => {
      agentVm(context)
      return reply({ result: {} })
    }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/agent/set-user-password",
    proxyNode: true,
    handle: (context) => {
      const vm = agentVm(context)
      const username = context.params.req("username")
      if (!guestUsers(vm).includes(username)) throw fail("Agent error: child process has failed to set user password")
      // A `crypted` password is stored as given: the simulated guest compares passwords literally.
      vm.guest.passwords.set(username, context.params.req("password"))
      return reply({ result: {} })
    }
  }
]
