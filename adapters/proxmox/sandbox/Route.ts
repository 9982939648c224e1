// What a route handler sees: verified parameters, the caller, the simulator, and a way to fork a task that honours an
// injected `taskFailure` fault. Also the path matcher (`/nodes/{node}/qemu/{vmid}/config`).
import type { Effect } from "effect"
import type { Identity } from "./Auth.ts"
import { apiSchema, type EndpointSchema } from "./apiSchema.ts"
import type { PveError } from "./PveError.ts"
import type { Sim } from "./Sim.ts"
import type { TaskRequest } from "./Tasks.ts"
import type { ParamValue } from "./validateParams.ts"

export class Params {
  private readonly values: ReadonlyMap<string, ParamValue>

  constructor(values: ReadonlyMap<string, ParamValue>) {
    this.values = values
  }

  has(name: string): boolean {
    return this.values.has(name)
  }

  /** Every verified parameter, in arrival order. */
  entries(): ReadonlyArray<readonly [string, ParamValue]> {
    return [...this.values]
  }

  str(name: string): string | undefined {
    const v = this.values.get(name)
    return v === undefined ? undefined : Array.isArray(v) ? v.join(",") : String(v)
  }

  /** A parameter the schema requires (so validation guarantees it). */
  req(name: string): string {
    const v = this.str(name)
    if (v === undefined) throw new Error(`sandbox bug: required parameter '${name}' missing after validation`)
    return v
  }

  int(name: string): number | undefined {
    const v = this.values.get(name)
    return typeof v === "number" ? v : undefined
  }

  reqInt(name: string): number {
    const v = this.int(name)
    if (v === undefined) throw new Error(`sandbox bug: integer parameter '${name}' missing after validation`)
    return v
  }

  /** A boolean parameter: verified as 0/1. */
  flag(name: string): boolean | undefined {
    const v = this.values.get(name)
    return v === undefined ? undefined : v === 1
  }

  list(name: string): ReadonlyArray<string> {
    const v = this.values.get(name)
    return Array.isArray(v) ? v : v === undefined ? [] : [String(v)]
  }
}

export interface RouteContext {
  readonly params: Params
  /** Null only for the calls that need no authentication (`POST /access/ticket`). */
  readonly identity: Identity | null
  readonly sim: Sim
  /** Forks a worker as the caller; returns its UPID. */
  fork(request: Omit<TaskRequest, "user" | "injectedFailure">): string
}

/** What a handler returns: the `data`, plus envelope attributes such as `total`. */
export interface Reply {
  readonly data: unknown
  readonly extra?: Readonly<Record<string, unknown>>
}

export interface Route {
  readonly method: EndpointSchema["method"]
  readonly path: string
  /** `proxyto => 'node'`: an unknown node fails before validation, as pveproxy cannot resolve it. */
  readonly proxyNode: boolean
  /** The answer, or work that waits (on the simulator's clock) before answering; a thrown PveError is the error answer. */
  handle(context: RouteContext): Reply | Effect.Effect<Reply, PveError>
}

export interface BoundRoute extends Route {
  readonly schema: EndpointSchema
}

export const reply = (data: unknown, extra?: Readonly<Record<string, unknown>>): Reply =>
  extra === undefined ? { data } : { data, extra }

/** Attaches each route's schema; a route without one is a programming error caught at start. */
export const bindRoutes = (routes: ReadonlyArray<Route>): ReadonlyArray<BoundRoute> =>
  routes.map((route) => {
    const schema = apiSchema.find((s) => s.method === route.method && s.path === route.path)
    if (schema === undefined) throw new Error(`no schema for ${route.method} ${route.path}`)
    return { ...route, schema }
  })

/** The route for `relPath`, with the values of its `{placeholders}`. */
export const matchRoute = (
  routes: ReadonlyArray<BoundRoute>,
  method: string,
  relPath: string
): { readonly route: BoundRoute; readonly pathParams: Record<string, string> } | undefined => {
  const segments = relPath.split("/").filter((s) => s !== "")
  for (const route of routes) {
    if (route.method !== method) continue
    const pattern = route.path.split("/").filter((s) => s !== "")
    if (pattern.length !== segments.length) continue
    const pathParams: Record<string, string> = {}
    const ok = pattern.every((p, i) => {
      const segment = segments[i] ?? ""
      if (p.startsWith("{") && p.endsWith("}")) {
        pathParams[p.slice(1, -1)] = segment
        return true
      }
      return p === segment
    })
    if (ok) return { route, pathParams }
  }
  return undefined
}
