// `POST /api/application/servers` (reference/pterodactyl.md §2.2): every rule of StoreServerRequest, the egg's
// variables validated at admin level (missing keys validated as null, defaults not filled in), `allocation.default`
// existing and unassigned, or `deploy` picking a random free allocation on a viable public node.
import { randomInt } from "node:crypto"
import { createServer } from "./lifecycle.ts"
import { appServer } from "./transformers.ts"
import { at, type FieldCheck, validate } from "./rules.ts"
import { obj, type RouteContext } from "./Route.ts"
import { item, ok, panelError, type Reply } from "./wire.ts"
import type { Allocation } from "./World.ts"

const num = (v: unknown, fallback = 0) => (v === null || v === undefined ? fallback : Number(v))

const free = (ctx: RouteContext, id: unknown): Allocation | undefined => {
  const a = ctx.sim.world.allocations.get(Number(id))
  return a !== undefined && a.serverId === null && Number.isInteger(Number(id)) ? a : undefined
}

/** Auto-deploy (§2.2): public nodes of the locations with room for the limits, then one random free allocation. */
const deploy = (ctx: RouteContext, body: Readonly<Record<string, unknown>>): Allocation => {
  const d = obj(body["deploy"])
  const locations = Array.isArray(d["locations"]) ? d["locations"].map(Number) : []
  const limits = obj(body["limits"])
  const { world } = ctx.sim
  const nodes = [...world.nodes.values()].filter((n) => {
    if (!n.public || (locations.length > 0 && !locations.includes(n.location_id))) return false
    const used = world.allocatedResources(n.id)
    return used.memory + num(limits["memory"]) <= n.memory * (1 + n.memory_overallocate / 100) &&
      used.disk + num(limits["disk"]) <= n.disk * (1 + n.disk_overallocate / 100)
  })
  if (nodes.length === 0) {
    throw panelError(400, "NoViableNodeException", "No nodes satisfying the requirements specified were found.")
  }
  const ranges = (Array.isArray(d["port_range"]) ? d["port_range"] : []).map(String).map((r) => {
    const [lo = "0", hi = lo] = r.split("-")
    if (Number(hi) - Number(lo) > 1000) {
      throw panelError(400, "InvalidPortMappingException", "The port range provided is too large (> 1000 ports).")
    }
    return [Number(lo), Number(hi)] as const
  })
  const candidates = [...world.allocations.values()].filter((a) =>
    a.serverId === null && nodes.some((n) => n.id === a.node) &&
    (ranges.length === 0 || ranges.some(([lo, hi]) => a.port >= lo && a.port <= hi)) &&
    (d["dedicated_ip"] !== true || ![...world.allocations.values()].some((o) => o.ip === a.ip && o.node === a.node && o.serverId !== null))
  )
  const pick = candidates.length === 0 ? undefined : candidates[randomInt(candidates.length)]
  if (pick === undefined) {
    throw panelError(400, "NoViableAllocationException", "No allocations satisfying the requirements specified were found for deployment on this node.")
  }
  return pick
}

export const storeServer = (ctx: RouteContext): Reply => {
  const body = obj(ctx.body)
  const { world } = ctx.sim
  const hasDeploy = at(body, "deploy").present
  const field = (name: string, rules: string, custom?: FieldCheck["custom"]): FieldCheck => ({
    field: name,
    attribute: name.replace(/_/g, " "),
    rules,
    ...at(body, name),
    ...(custom === undefined ? {} : { custom })
  })
  const eggId = Number(body["egg"])
  const egg = Number.isInteger(eggId) ? world.eggs.get(eggId) : undefined
  const additional = Array.isArray(at(body, "allocation.additional").value) ? (at(body, "allocation.additional").value as Array<unknown>) : []
  validate([
    field("external_id", "sometimes|nullable|string|between:1,191|unique", {
      unique: (v) => ![...world.servers.values()].some((s) => s.external_id === v)
    }),
    field("name", "required|string|between:1,191"),
    field("description", "sometimes|nullable|string"),
    field("user", "required|integer|exists", { exists: (v) => world.users.has(Number(v)) }),
    field("egg", "required|integer|exists", { exists: () => egg !== undefined }),
    field("docker_image", "required|string|max:191|regex:/^[\\w\\.\\/\\-:@ ]*$/"),
    field("startup", "required|string"),
    field("environment", "present|array"),
    field("skip_scripts", "sometimes|boolean"),
    field("oom_disabled", "sometimes|boolean"),
    field("start_on_completion", "sometimes|boolean"),
    field("limits", "required|array"),
    field("limits.memory", "required|numeric|min:0"),
    field("limits.swap", "required|numeric|min:-1"),
    field("limits.disk", "required|numeric|min:0"),
    field("limits.io", "required|numeric|between:10,1000"),
    field("limits.cpu", "required|numeric|min:0"),
    field("limits.threads", "sometimes|nullable|regex:/^[0-9-,]+$/"),
    field("feature_limits", "required|array"),
    field("feature_limits.databases", "present|nullable|integer|min:0"),
    field("feature_limits.allocations", "sometimes|nullable|integer|min:0"),
    field("feature_limits.backups", "present|nullable|integer|min:0"),
    ...(hasDeploy
      ? [
        field("deploy.locations", "present|array"),
        field("deploy.dedicated_ip", "required|boolean"),
        field("deploy.port_range", "present|array")
      ]
      : [
        field("allocation.default", "required_without|integer|bail|exists", { exists: (v) => free(ctx, v) !== undefined }),
        ...additional.map((_, i) => field(`allocation.additional.${i}`, "integer|exists", { exists: (v) => free(ctx, v) !== undefined }))
      ]),
    // Admin-level validation of EVERY egg variable; a missing key is validated as null (§2.2, §6.3).
    ...(egg?.variables ?? []).map((v): FieldCheck => {
      const value = at(body, `environment.${v.env_variable}`)
      return {
        field: `environment.${v.env_variable}`,
        attribute: `${v.name} variable`,
        rules: v.rules,
        present: true,
        value: value.present ? value.value : null
      }
    })
  ])
  if (egg === undefined) throw new Error("sandbox: egg vanished after validation")
  const allocation = hasDeploy ? deploy(ctx, body) : free(ctx, at(body, "allocation.default").value)
  if (allocation === undefined) throw new Error("sandbox: allocation vanished after validation")
  const limits = obj(body["limits"])
  const features = obj(body["feature_limits"])
  const env = obj(body["environment"])
  const server = createServer(ctx.sim, {
    external_id: typeof body["external_id"] === "string" ? body["external_id"] : null,
    name: String(body["name"]),
    description: typeof body["description"] === "string" ? body["description"] : "",
    user: Number(body["user"]),
    egg: egg.id,
    image: String(body["docker_image"]),
    startup: String(body["startup"]),
    // Only the egg's variables are stored (the panel ignores other keys).
    environment: Object.fromEntries(egg.variables.map((v) => {
      const value = env[v.env_variable]
      return [v.env_variable, value === undefined || value === null ? null : String(value)]
    })),
    limits: {
      memory: num(limits["memory"]),
      swap: num(limits["swap"]),
      disk: num(limits["disk"]),
      io: num(limits["io"]),
      cpu: num(limits["cpu"]),
      threads: typeof limits["threads"] === "string" ? limits["threads"] : null,
      oom_disabled: body["oom_disabled"] === undefined ? true : Boolean(body["oom_disabled"])
    },
    feature_limits: {
      databases: num(features["databases"]),
      allocations: num(features["allocations"]),
      backups: num(features["backups"])
    },
    allocation: allocation.id,
    additional: hasDeploy ? [] : additional.map(Number)
  })
  return ok(item("server", appServer(server)), 201)
}
