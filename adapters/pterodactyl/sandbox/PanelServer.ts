// The panel's HTTP front, in Laravel's middleware order (reference/pterodactyl.md §1): injected failures, Bearer
// authentication (401, or a 302 to /auth/login without `Accept: application/json`), key type and root-admin checks
// (403), the per-user per-minute limiter (429 + Retry-After, X-RateLimit-* on every answer), malformed JSON (400),
// then the route (404 when none). An effect/http app: served on a port or reached in memory (Fronts.ts).
import { Effect } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import { applicationRoutes } from "./applicationRoutes.ts"
import type { FailSpec } from "./Faults.ts"
import { backupRoutes } from "./backupRoutes.ts"
import { clientRoutes } from "./clientRoutes.ts"
import { fileRoutes } from "./fileRoutes.ts"
import { settleInstalls } from "./lifecycle.ts"
import { matchRoute, type PanelRoute } from "./Route.ts"
import { keptBody, recordRequest, type Sim } from "./Sim.ts"
import { defaultCode, defaultDetail, notFound, PanelError, panelError, panelErrorResponse, readBody, replyResponse } from "./wire.ts"
import type { User } from "./World.ts"

const MAX_BODY = 16 * 1024 * 1024
const routes: ReadonlyArray<PanelRoute> = [...applicationRoutes, ...clientRoutes, ...fileRoutes, ...backupRoutes]

type Api = "application" | "client"

const authenticate = (sim: Sim, authorization: string | undefined, api: Api): User => {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1] ?? ""
  // Identifier (prefix + 11 chars) then the 32-char secret (§1.1).
  const key = token.length === 48 ? sim.world.keys.get(token.slice(0, 16)) : undefined
  const user = key !== undefined && key.secret === token.slice(16) ? sim.world.users.get(key.userId) : undefined
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
const throttle = (sim: Sim, user: User, api: Api): Record<string, string> => {
  const limit = sim.settings.rateLimits[api]
  const injected = sim.faults.takeThrottle()
  const hit = injected === undefined ? sim.limiter.hit(`${api}:${user.uuid}`, limit, sim.clock.now()) : { remaining: 0, retryAfter: injected }
  const headers = { "X-RateLimit-Limit": String(limit), "X-RateLimit-Remaining": String(hit.remaining) }
  if (hit.retryAfter !== undefined) {
    throw panelError(429, "ThrottleRequestsException", "Too Many Attempts.", {
      ...headers,
      "Retry-After": String(hit.retryAfter),
      "X-RateLimit-Reset": String(Math.floor(sim.clock.now() / 1000) + hit.retryAfter)
    })
  }
  return headers
}

const faultError = (fault: FailSpec) =>
  panelError(fault.status, fault.code ?? defaultCode(fault.status), fault.detail ?? defaultDetail(fault.status), fault.headers)

/** Everything before the body: an injected failure, the API the path belongs to, the key's user and its rate limit. */
const admit = (sim: Sim, method: string, url: URL, authorization: string | undefined) => {
  const fault = sim.faults.take(method, url.pathname)
  if (fault !== undefined) throw faultError(fault)
  const api = url.pathname.startsWith("/api/application") ? "application" : url.pathname.startsWith("/api/client") ? "client" : undefined
  if (api === undefined) throw notFound()
  const user = authenticate(sim, authorization, api)
  return { user, headers: throttle(sim, user, api) }
}

const parseJson = (raw: Buffer, contentType: string | undefined): unknown => {
  if (!/json/i.test(contentType ?? "") || raw.length === 0) return {}
  try {
    return JSON.parse(raw.toString("utf8"))
  } catch (e) {
    throw panelError(400, "BadRequestHttpException", `The JSON data passed in the request appears to be malformed: ${e instanceof Error ? "Syntax error" : "error"}`)
  }
}

/** A thrown PanelError as it is; anything else a 500, reported through `warn`. */
const asPanelError = (sim: Sim) => (e: unknown): PanelError => {
  if (e instanceof PanelError) return e
  sim.settings.warn(`sandbox Pterodactyl: ${e instanceof Error ? e.message : String(e)}`)
  return panelError(500, "HttpException", "An unexpected error was encountered while processing this request, please try again.")
}

/** The panel: one effect/http app over the simulation's state. */
export const panelApp = (sim: Sim): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const method = request.method.toUpperCase()
    const url = new URL(request.url, sim.panelUrl)
    const recorded = recordRequest(sim, "panel", method, url, request.headers)
    const transport = sim.faults.takeTransport(method, url.pathname, request)
    if (transport !== undefined) return yield* transport
    let headers: Record<string, string> = {}
    const toError = asPanelError(sim)
    return yield* Effect.gen(function*() {
      const admitted = yield* Effect.try({ try: () => admit(sim, method, url, request.headers["authorization"]), catch: toError })
      headers = admitted.headers
      const raw = yield* readBody(request, MAX_BODY).pipe(Effect.mapError(toError))
      if (raw !== "too large") recorded.body = keptBody(raw)
      if (raw === "too large") return yield* Effect.fail(panelError(413, "PostTooLargeException", "The request body is too large."))
      const body = yield* Effect.try({ try: () => parseJson(raw, request.headers["content-type"]), catch: toError })
      const match = matchRoute(routes, method, url.pathname)
      if (match === undefined) return yield* Effect.fail(notFound())
      const reply = yield* Effect.try({
        try: () => {
          settleInstalls(sim)
          return match.route.handle({ sim, params: match.params, query: url.searchParams, body, raw, user: admitted.user, url })
        },
        catch: toError
      })
      const lost = sim.faults.takeLost(method, url.pathname)
      return lost === undefined ? replyResponse(reply, headers) : yield* Effect.fail(faultError(lost))
    }).pipe(
      Effect.catch((error) => Effect.succeed(panelErrorResponse(error, request.headers["accept"], sim.panelUrl, headers))),
      // Every write may have changed something durable, even one that failed half-way (a rename of several files).
      Effect.ensuring(Effect.sync(() => {
        if (method !== "GET" && method !== "HEAD") sim.changed()
      }))
    )
  })
