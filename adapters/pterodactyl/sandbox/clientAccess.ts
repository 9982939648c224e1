// Client API server binding and state guard (reference/pterodactyl.md §3.4, §5): `{server}` is the 8-char identifier
// or the 36-char uuid (404 otherwise, and for servers the key's user cannot see); everything but GET server answers
// 409 while the server is suspended, installing, install_failed or restoring_backup — root admins may still get a
// console token while it is installing or restoring.
import type { RouteContext } from "./Route.ts"
import type { TokenContext } from "./Tokens.ts"
import { conflict, notFound } from "./wire.ts"
import type { Server } from "./World.ts"

export const CLIENT = "/api/client/servers/{server}"

export const boundServer = (ctx: RouteContext): Server => {
  const server = ctx.sim.world.serverByRef(ctx.params["server"] ?? "")
  if (server === undefined || (!ctx.user.root_admin && server.user !== ctx.user.id)) throw notFound()
  return server
}

export const usableServer = (ctx: RouteContext, options: { readonly adminWhileInstalling?: boolean } = {}): Server => {
  const server = boundServer(ctx)
  const node = ctx.sim.world.nodes.get(server.node)
  if (server.status === "suspended") {
    throw conflict("This server is currently suspended and the functionality requested is unavailable.")
  }
  if (node?.maintenance_mode === true) {
    throw conflict("The node of this server is currently under maintenance and the functionality requested is unavailable.")
  }
  if (options.adminWhileInstalling === true && ctx.user.root_admin) return server
  if (server.status === "installing" || server.status === "install_failed") {
    throw conflict("This server has not yet completed its installation process, please try again later.")
  }
  if (server.status === "restoring_backup") {
    throw conflict("This server is currently restoring from a backup, please try again later.")
  }
  return server
}

export const tokenContext = (ctx: RouteContext, server: Server): TokenContext => {
  const node = ctx.sim.world.nodes.get(server.node)
  if (node === undefined) throw new Error(`sandbox: server ${server.id} on unknown node`)
  return { panelUrl: ctx.sim.panelUrl, nodeUrl: ctx.sim.nodeUrl, secret: node.secret, now: ctx.sim.clock.now }
}

/** The `signed_url` object pointing at Wings (§4.1). */
export const signedUrl = (url: string) => ({ object: "signed_url", attributes: { url } })
