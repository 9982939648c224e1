// The Application API (reference/pterodactyl.md §2): users, nodes, allocations, nests/eggs and servers by numeric id
// (plus exact `/external/{external_id}` lookups; `filter[…]` is a partial match).
import { deleteServer, startInstall, suspend, unsuspend } from "./lifecycle.ts"
import { at, validate } from "./rules.ts"
import { numericId, obj, pageUrl, type PanelRoute, route, type RouteContext } from "./Route.ts"
import { storeServer } from "./serverCreate.ts"
import { appAllocation, appEgg, appNode, appServer, appUser } from "./transformers.ts"
import { item, list, noContent, notFound, ok, paginate } from "./wire.ts"
import type { Server } from "./World.ts"

const BASE = "/api/application"

/** `filter[x]=a,b`: a partial (LIKE) match, comma = OR (§2.5). */
const partial = (ctx: RouteContext, name: string, value: string | null): boolean => {
  const filter = ctx.query.get(`filter[${name}]`)
  if (filter === null || filter === "") return true
  return filter.split(",").some((f) => (value ?? "").toLowerCase().includes(f.toLowerCase()))
}

const paged = <T>(ctx: RouteContext, object: string, rows: ReadonlyArray<T>, render: (row: T) => unknown) => {
  const page = paginate(rows, ctx.query, pageUrl(ctx), 50)
  return ok(list(object, page.rows.map(render), { pagination: page.pagination }))
}

const serverById = (ctx: RouteContext): Server => {
  const id = numericId(ctx.params["server"])
  const server = id === undefined ? undefined : ctx.sim.world.servers.get(id)
  if (server === undefined) throw notFound()
  return server
}

const storeUser = (ctx: RouteContext) => {
  const body = obj(ctx.body)
  const { world } = ctx.sim
  const users = [...world.users.values()]
  const f = (name: string, rules: string, custom?: Readonly<Record<string, (v: unknown) => boolean>>) => ({
    field: name,
    rules,
    ...at(body, name),
    ...(custom === undefined ? {} : { custom })
  })
  const username = typeof body["username"] === "string" ? body["username"].toLowerCase() : body["username"]
  validate([
    f("external_id", "sometimes|nullable|string|max:191|unique", { unique: (v) => !users.some((u) => u.external_id === v) }),
    f("email", "required|email|between:1,191|unique", { unique: (v) => !users.some((u) => u.email === v) }),
    { field: "username", rules: "required|between:1,191|unique|p_username", ...at(body, "username"), value: username, custom: {
      unique: (v) => !users.some((u) => u.username === v),
      p_username: (v) => typeof v === "string" && /^[a-z0-9]([\w.-]+)[a-z0-9]$/.test(v)
    } },
    f("first_name", "required|string|between:1,191"),
    f("last_name", "required|string|between:1,191"),
    f("password", "sometimes|nullable|string"),
    f("root_admin", "sometimes|boolean"),
    f("language", "sometimes|string")
  ])
  const user = world.addUser({
    username: String(username),
    email: String(body["email"]),
    first_name: String(body["first_name"]),
    last_name: String(body["last_name"]),
    external_id: typeof body["external_id"] === "string" ? body["external_id"] : null,
    language: typeof body["language"] === "string" ? body["language"] : "en",
    root_admin: body["root_admin"] === true
  })
  return ok(item("user", appUser(user), { resource: `${ctx.sim.panelUrl}${BASE}/users/${user.id}` }), 201)
}

export const applicationRoutes: ReadonlyArray<PanelRoute> = [
  route("GET", `${BASE}/users`, (ctx) =>
    paged(ctx, "user", [...ctx.sim.world.users.values()].filter((u) =>
      partial(ctx, "email", u.email) && partial(ctx, "external_id", u.external_id) &&
      partial(ctx, "username", u.username) && partial(ctx, "uuid", u.uuid)), appUser)),
  route("GET", `${BASE}/users/external/{external}`, (ctx) => {
    const user = [...ctx.sim.world.users.values()].find((u) => u.external_id === ctx.params["external"])
    if (user === undefined) throw notFound()
    return ok(item("user", appUser(user)))
  }),
  route("GET", `${BASE}/users/{user}`, (ctx) => {
    const id = numericId(ctx.params["user"])
    const user = id === undefined ? undefined : ctx.sim.world.users.get(id)
    if (user === undefined) throw notFound()
    return ok(item("user", appUser(user)))
  }),
  route("POST", `${BASE}/users`, storeUser),
  route("GET", `${BASE}/nodes`, (ctx) => paged(ctx, "node", [...ctx.sim.world.nodes.values()], (n) => appNode(ctx.sim, n))),
  route("GET", `${BASE}/nodes/{node}`, (ctx) => {
    const id = numericId(ctx.params["node"])
    const node = id === undefined ? undefined : ctx.sim.world.nodes.get(id)
    if (node === undefined) throw notFound()
    return ok(item("node", appNode(ctx.sim, node)))
  }),
  route("GET", `${BASE}/nodes/{node}/allocations`, (ctx) => {
    const id = numericId(ctx.params["node"])
    if (id === undefined || !ctx.sim.world.nodes.has(id)) throw notFound()
    const serverFilter = ctx.sim.settings.allocationServerFilter ? ctx.query.get("filter[server_id]") : null
    const ip = ctx.query.get("filter[ip]")
    const port = ctx.query.get("filter[port]")
    const rows = [...ctx.sim.world.allocations.values()].filter((a) =>
      a.node === id &&
      (ip === null || a.ip === ip) &&
      (port === null || String(a.port) === port) &&
      // Numeric = that server's allocations; anything else = unassigned only (§2.11).
      (serverFilter === null || (/^\d+$/.test(serverFilter) ? a.serverId === Number(serverFilter) : a.serverId === null))
    )
    return paged(ctx, "allocation", rows, appAllocation)
  }),
  route("GET", `${BASE}/nests`, (ctx) =>
    paged(ctx, "nest", [...ctx.sim.world.nests.values()], (n) => ({ id: n.id, uuid: `nest-${n.id}`, author: "support@pterodactyl.io", name: n.name, description: null }))),
  route("GET", `${BASE}/nests/{nest}/eggs`, (ctx) => {
    const nest = numericId(ctx.params["nest"])
    if (nest === undefined || !ctx.sim.world.nests.has(nest)) throw notFound()
    const include = (ctx.query.get("include") ?? "").split(",").includes("variables")
    return paged(ctx, "egg", [...ctx.sim.world.eggs.values()].filter((e) => e.nest === nest), (e) => appEgg(e, include))
  }),
  route("GET", `${BASE}/nests/{nest}/eggs/{egg}`, (ctx) => {
    const egg = ctx.sim.world.eggs.get(numericId(ctx.params["egg"]) ?? -1)
    if (egg === undefined || String(egg.nest) !== ctx.params["nest"]) throw notFound()
    return ok(item("egg", appEgg(egg, (ctx.query.get("include") ?? "").split(",").includes("variables"))))
  }),
  route("GET", `${BASE}/servers`, (ctx) =>
    paged(ctx, "server", [...ctx.sim.world.servers.values()].filter((s) =>
      partial(ctx, "external_id", s.external_id) && partial(ctx, "uuid", s.uuid) && partial(ctx, "uuidShort", s.identifier) &&
      partial(ctx, "name", s.name) && partial(ctx, "image", s.image)), appServer)),
  route("POST", `${BASE}/servers`, storeServer),
  route("GET", `${BASE}/servers/external/{external}`, (ctx) => {
    const server = [...ctx.sim.world.servers.values()].find((s) => s.external_id === ctx.params["external"])
    if (server === undefined) throw notFound()
    return ok(item("server", appServer(server)))
  }),
  route("GET", `${BASE}/servers/{server}`, (ctx) => ok(item("server", appServer(serverById(ctx))))),
  route("POST", `${BASE}/servers/{server}/suspend`, (ctx) => {
    suspend(ctx.sim, serverById(ctx))
    return noContent()
  }),
  route("POST", `${BASE}/servers/{server}/unsuspend`, (ctx) => {
    unsuspend(ctx.sim, serverById(ctx))
    return noContent()
  }),
  route("POST", `${BASE}/servers/{server}/reinstall`, (ctx) => {
    const server = serverById(ctx)
    // Reinstall sets `installing`, which silently lifts a suspension (§2.6).
    startInstall(ctx.sim, server, true)
    return noContent()
  }),
  route("DELETE", `${BASE}/servers/{server}`, (ctx) => {
    deleteServer(ctx.sim, serverById(ctx))
    return noContent()
  }),
  route("DELETE", `${BASE}/servers/{server}/{force}`, (ctx) => {
    // `/force` skips Wings errors; any other trailing word is a normal delete (§2.1). Wings never fails here.
    deleteServer(ctx.sim, serverById(ctx))
    return noContent()
  })
]
