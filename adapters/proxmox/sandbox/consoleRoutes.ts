// The console's API calls (reference/proxmox.md §4): termproxy opens a listener and its ticket; vncwebsocket answered
// without an upgrade runs the same checks as the upgrade. The consoles themselves live in Consoles.ts.
import { fail, PveError } from "./PveError.ts"
import { reply, type Route } from "./Route.ts"

export const consoleRoutes: ReadonlyArray<Route> = [
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/termproxy",
    proxyNode: false,
    handle: ({ identity, params, sim }) => {
      if (identity === null) throw new PveError(401, "No ticket\n")
      return reply(sim.consoles.openTermproxy(identity, params.req("node"), params.reqInt("vmid"), params.str("serial")))
    }
  },
  {
    method: "GET",
    path: "/nodes/{node}/qemu/{vmid}/vncwebsocket",
    proxyNode: false,
    handle: ({ identity, params, sim }) => {
      const port = params.reqInt("port")
      const vmid = params.reqInt("vmid")
      if (identity === null) throw fail("permission denied - invalid PVEVNC ticket")
      sim.consoles.checkWebsocket(identity, params.req("node"), vmid, port, params.req("vncticket"))
      return reply({ port: String(port) })
    }
  }
]
