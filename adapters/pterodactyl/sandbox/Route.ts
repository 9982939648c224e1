// What a panel route handler sees, and the path matcher (`/api/application/servers/{server}/suspend`).
import type { Sim } from "./Sim.ts"
import type { Reply } from "./wire.ts"
import type { User } from "./World.ts"

export interface RouteContext {
  readonly sim: Sim
  readonly params: Readonly<Record<string, string>>
  readonly query: URLSearchParams
  /** The decoded JSON body (`{}` when empty), or undefined for a non-JSON body. */
  readonly body: unknown
  /** The raw body, for `files/write`. */
  readonly raw: Buffer
  readonly user: User
  readonly url: URL
}

export interface PanelRoute {
  readonly method: string
  readonly path: string
  handle(ctx: RouteContext): Reply
}

export const route = (method: string, path: string, handle: PanelRoute["handle"]): PanelRoute => ({ method, path, handle })

export const matchRoute = (routes: ReadonlyArray<PanelRoute>, method: string, path: string) => {
  const segments = path.split("/").filter((s) => s !== "")
  for (const r of routes) {
    if (r.method !== method) continue
    const pattern = r.path.split("/").filter((s) => s !== "")
    if (pattern.length !== segments.length) continue
    const params: Record<string, string> = {}
    const ok = pattern.every((p, i) => {
      const segment = decodeURIComponent(segments[i] ?? "")
      if (p.startsWith("{")) {
        params[p.slice(1, -1)] = segment
        return true
      }
      return p === segment
    })
    if (ok) return { route: r, params }
  }
  return undefined
}

/** Strictly a positive integer path id, as Laravel's `{server:id}` bindings need. */
export const numericId = (value: string | undefined): number | undefined =>
  value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined

/** The absolute URL of the current request with `page` replaced (pagination links carry the panel host, §1.2). */
export const pageUrl = (ctx: RouteContext) => (page: number) => {
  const u = new URL(ctx.url.pathname, ctx.sim.panelUrl)
  for (const [k, v] of ctx.query) if (k !== "page") u.searchParams.append(k, v)
  u.searchParams.set("page", String(page))
  return u.toString()
}

export const obj = (body: unknown): Readonly<Record<string, unknown>> =>
  typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {}
