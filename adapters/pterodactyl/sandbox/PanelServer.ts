// The panel's HTTP front, in Laravel's middleware order (reference/pterodactyl.md §1): injected failures, Bearer
// authentication (401, or a 302 to /auth/login without `Accept: application/json`), key type and root-admin checks
// (403), the per-user per-minute limiter (429 + Retry-After, X-RateLimit-* on every answer), malformed JSON (400),
// then the route (404 when none).
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer, type Server as HttpServer } from "node:http"
import type { Socket } from "node:net"
import { applicationRoutes } from "./applicationRoutes.ts"
import { backupRoutes } from "./backupRoutes.ts"
import { clientRoutes } from "./clientRoutes.ts"
import { fileRoutes } from "./fileRoutes.ts"
import { settleInstalls } from "./lifecycle.ts"
import { matchRoute, type PanelRoute } from "./Route.ts"
import { recordRequest, type Sim } from "./Sim.ts"
import { defaultCode, defaultDetail, notFound, PanelError, panelError, readBody, sendPanelError, sendReply } from "./wire.ts"
import type { User } from "./World.ts"

const MAX_BODY = 16 * 1024 * 1024
const routes: ReadonlyArray<PanelRoute> = [...applicationRoutes, ...clientRoutes, ...fileRoutes, ...backupRoutes]

export class PanelServer {
  readonly server: HttpServer
  private readonly sim: Sim
  private readonly sockets = new Set<Socket>()

  constructor(sim: Sim) {
    this.sim = sim
    this.server = createServer((req, res) => void this.onRequest(req, res))
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s)
      s.on("close", () => this.sockets.delete(s))
    })
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve())
      for (const s of this.sockets) s.destroy()
    })
  }

  private authenticate(req: IncomingMessage, api: "application" | "client"): User {
    const header = req.headers.authorization ?? ""
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? ""
    // Identifier (prefix + 11 chars) then the 32-char secret (§1.1).
    const key = token.length === 48 ? this.sim.world.keys.get(token.slice(0, 16)) : undefined
    const user = key !== undefined && key.secret === token.slice(16) ? this.sim.world.users.get(key.userId) : undefined
    if (key === undefined || user === undefined) throw panelError(401, "AuthenticationException", "Unauthenticated.")
    if (api === "client" && key.kind === "application") {
      throw panelError(403, "AccessDeniedHttpException", "You are attempting to use an application API key on an endpoint that requires a client API key.")
    }
    if (api === "application" && !user.root_admin) {
      throw panelError(403, "AccessDeniedHttpException", "This account does not have permission to access the API.")
    }
    return user
  }

  /** Counts the request against the user's bucket; the headers every answer carries, or a 429. */
  private throttle(user: User, api: "application" | "client"): Record<string, string> {
    const limit = this.sim.settings.rateLimits[api]
    const injected = this.sim.faults.takeThrottle()
    const hit = injected === undefined ? this.sim.limiter.hit(`${api}:${user.uuid}`, limit, this.sim.clock.now()) : { remaining: 0, retryAfter: injected }
    const headers = { "X-RateLimit-Limit": String(limit), "X-RateLimit-Remaining": String(hit.remaining) }
    if (hit.retryAfter !== undefined) {
      throw panelError(429, "ThrottleRequestsException", "Too Many Attempts.", {
        ...headers,
        "Retry-After": String(hit.retryAfter),
        "X-RateLimit-Reset": String(Math.floor(this.sim.clock.now() / 1000) + hit.retryAfter)
      })
    }
    return headers
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse) {
    const method = (req.method ?? "GET").toUpperCase()
    const url = new URL(req.url ?? "/", this.sim.panelUrl)
    recordRequest(this.sim, "panel", method, url, req.headers)
    let headers: Record<string, string> = {}
    try {
      const fault = this.sim.faults.take(method, url.pathname)
      if (fault !== undefined) {
        req.resume()
        throw panelError(fault.status, fault.code ?? defaultCode(fault.status), fault.detail ?? defaultDetail(fault.status))
      }
      const api = url.pathname.startsWith("/api/application") ? "application" : url.pathname.startsWith("/api/client") ? "client" : undefined
      if (api === undefined) throw notFound()
      const user = this.authenticate(req, api)
      headers = this.throttle(user, api)
      const raw = await readBody(req, MAX_BODY)
      if (raw === "too large") throw panelError(413, "PostTooLargeException", "The request body is too large.")
      const isJson = /json/i.test(req.headers["content-type"] ?? "")
      let body: unknown = {}
      if (isJson && raw.length > 0) {
        try {
          body = JSON.parse(raw.toString("utf8"))
        } catch (e) {
          throw panelError(400, "BadRequestHttpException", `The JSON data passed in the request appears to be malformed: ${e instanceof Error ? "Syntax error" : "error"}`)
        }
      }
      const match = matchRoute(routes, method, url.pathname)
      if (match === undefined) throw notFound()
      settleInstalls(this.sim)
      const reply = await match.route.handle({ sim: this.sim, params: match.params, query: url.searchParams, body, raw, user, url })
      sendReply(res, reply, headers)
    } catch (e) {
      const error = e instanceof PanelError
        ? e
        : panelError(500, "HttpException", "An unexpected error was encountered while processing this request, please try again.")
      if (!(e instanceof PanelError)) this.sim.settings.warn(`sandbox Pterodactyl: ${e instanceof Error ? e.message : String(e)}`)
      if (!res.headersSent) sendPanelError(res, req, error, this.sim.panelUrl, headers)
    } finally {
      // Every write may have changed something durable, even one that failed half-way (a rename of several files).
      if (method !== "GET" && method !== "HEAD") this.sim.changed()
    }
  }
}
