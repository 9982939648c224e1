// The Client API server view, console token, power, command and resources (reference/pterodactyl.md §3.1, §3.5).
import { boundServer, CLIENT, tokenContext, usableServer } from "./clientAccess.ts"
import { at, validate } from "./rules.ts"
import { obj, type PanelRoute, route } from "./Route.ts"
import { clientServer } from "./transformers.ts"
import { item, noContent, ok, panelError } from "./wire.ts"

const ADMIN_PERMISSIONS = ["*", "admin.websocket.errors", "admin.websocket.install", "admin.websocket.transfer"]

export const clientRoutes: ReadonlyArray<PanelRoute> = [
  route("GET", "/api/client", (ctx) => {
    const servers = [...ctx.sim.world.servers.values()].filter((s) => s.user === ctx.user.id || ctx.user.root_admin)
    return ok({ object: "list", data: servers.map((s) => item("server", clientServer(ctx.sim, s, s.user === ctx.user.id))), meta: { pagination: { total: servers.length, count: servers.length, per_page: 50, current_page: 1, total_pages: 1, links: {} } } })
  }),
  route("GET", CLIENT, (ctx) => {
    const server = boundServer(ctx)
    return ok(item("server", clientServer(ctx.sim, server, server.user === ctx.user.id)))
  }),
  route("GET", `${CLIENT}/websocket`, (ctx) => {
    const server = usableServer(ctx, { adminWhileInstalling: true })
    const permissions = ctx.user.root_admin ? ADMIN_PERMISSIONS : ["*"]
    const token = ctx.sim.tokens.issue("websocket", tokenContext(ctx, server), server.uuid, ctx.sim.settings.wingsTokenTtlMs, {
      permissions,
      user_uuid: ctx.user.uuid,
      user_id: ctx.user.id
    })
    const socket = `${ctx.sim.nodeUrl.replace(/^http/, "ws")}/api/servers/${server.uuid}/ws`
    return ok({ data: { token, socket } })
  }),
  route("POST", `${CLIENT}/power`, (ctx) => {
    const server = usableServer(ctx)
    const body = obj(ctx.body)
    validate([{ field: "signal", rules: "required|string|in:start,stop,restart,kill", ...at(body, "signal") }])
    const signal = body["signal"]
    if (signal !== "start" && signal !== "stop" && signal !== "restart" && signal !== "kill") throw new Error("sandbox: signal passed validation")
    const refused = server.console.power(signal)
    if (refused !== undefined) throw panelError(400, "DaemonConnectionException", `An error occurred on the remote host: ${refused}.`)
    return noContent()
  }),
  route("POST", `${CLIENT}/command`, (ctx) => {
    const server = usableServer(ctx)
    const body = obj(ctx.body)
    validate([{ field: "command", rules: "required|string|min:1", ...at(body, "command") }])
    if (!server.console.command(String(body["command"]))) {
      throw panelError(502, "HttpException", "Server must be online in order to send commands.")
    }
    return noContent()
  }),
  route("GET", `${CLIENT}/resources`, (ctx) => {
    const server = usableServer(ctx)
    const stats = server.console.statsObject()
    return ok(item("stats", {
      current_state: server.console.state,
      is_suspended: false,
      resources: {
        memory_bytes: stats.memory_bytes,
        cpu_absolute: stats.cpu_absolute,
        disk_bytes: stats.disk_bytes,
        network_rx_bytes: stats.network.rx_bytes,
        network_tx_bytes: stats.network.tx_bytes,
        uptime: stats.uptime
      }
    }))
  })
]
