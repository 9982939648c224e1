// The sandbox's HTTP(S) front, in pveproxy's order: injected transport faults, body limits, authentication (401),
// route lookup (501), API-token and node checks, parameter verification (400), then the handler; WebSocket
// upgrades of `…/vncwebsocket` go through the same steps before reaching the console. Requests are Effects
// (effect/http, served on a node server by NodeHttpServer.makeHandler); a handler runs as a worker of the simulation,
// so, like a pvedaemon worker, it finishes even when its client goes away.
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Fiber, FiberSet, Scope } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import type { IncomingHttpHeaders, IncomingMessage, Server } from "node:http"
import { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { agentRoutes } from "./agentRoutes.ts"
import type { Identity, RequestHeaders } from "./Auth.ts"
import { clusterRoutes } from "./clusterRoutes.ts"
import { configRoutes } from "./configRoutes.ts"
import { consoleRoutes } from "./consoleRoutes.ts"
import { type TransportAction, vmidIn } from "./Faults.ts"
import { asPveError, decodePath, decodeQuery, errorResponse, jsonResponse, type ParsedRequest, readRequest } from "./httpWire.ts"
import { powerRoutes } from "./powerRoutes.ts"
import { fail, paramError, PveError, unknownNode } from "./PveError.ts"
import { bindRoutes, type BoundRoute, matchRoute, Params, type Reply, type RouteContext } from "./Route.ts"
import type { Sim } from "./Sim.ts"
import { snapshotRoutes } from "./snapshotRoutes.ts"
import { taskRoutes } from "./taskRoutes.ts"
import { validateParams } from "./validateParams.ts"
import { vmRoutes } from "./vmRoutes.ts"

const API_BASE = "/api2/json"
const WEBSOCKET_PATH = "/nodes/{node}/qemu/{vmid}/vncwebsocket"

interface Prepared {
  readonly route: BoundRoute
  readonly context: RouteContext
}

const flatHeaders = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(", ") : v]])))

const record = (sim: Sim, method: string, path: string, query: Record<string, unknown>, body: Record<string, unknown>, headers: RequestHeaders) => {
  const vmid = vmidIn(path)
  const vmExists = vmid === undefined ? null : sim.cluster.vms.has(vmid)
  const flat = Object.fromEntries(Object.entries(headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]])))
  sim.requests.push({ method, path, query, body, headers: flat, vmExists, at: sim.clock.now() })
  // Trimmed a tenth at a time, so that each request pays for the trim only once in a while.
  if (sim.requests.length > sim.requestLogLimit * 1.1) sim.requests.splice(0, sim.requests.length - sim.requestLogLimit)
}

/** PVE holds every 401 back (§1.1); on the simulator's clock. */
const delayUnauthorized = (sim: Sim, error: PveError): Effect.Effect<void> =>
  error.status === 401 && sim.authFailureDelayMs > 0 ? sim.clock.sleep(sim.authFailureDelayMs) : Effect.void

/** Authentication, route, node and parameters: everything before the handler runs. Throws the PveError to answer. */
const prepare = (sim: Sim, routes: ReadonlyArray<BoundRoute>, request: ParsedRequest, headers: RequestHeaders): Prepared => {
  if (request.path !== API_BASE && !request.path.startsWith(`${API_BASE}/`)) {
    throw new PveError(501, "no such uri", undefined, true)
  }
  const relPath = request.path.slice(API_BASE.length) || "/"
  const identity: Identity | null = sim.auth.authenticate(request.method, relPath, headers)
  const match = matchRoute(routes, request.method, relPath)
  if (match === undefined) throw new PveError(501, `Method '${request.method} ${relPath}' not implemented`)
  const raw: Record<string, unknown> = { ...request.body, ...request.query }
  for (const [name, value] of Object.entries(match.pathParams)) {
    if (raw[name] !== undefined && String(raw[name]) !== value) {
      throw paramError({ [name]: "duplicate parameter (already defined in URI) with conflicting values!" })
    }
    raw[name] = value
  }
  const node = match.pathParams["node"]
  if (match.route.proxyNode && node !== undefined && !sim.cluster.nodes.has(node)) throw fail(unknownNode(node))
  const params = new Params(validateParams(match.route.schema.params, raw))
  const context: RouteContext = {
    params,
    identity,
    sim,
    fork: (task) => {
      const injected = sim.faults.taskFailure(request.method, request.path, request.query)
      injected?.consume()
      return sim.tasks.start({
        ...task,
        user: identity?.user ?? "root@pam",
        ...(injected === undefined ? {} : { injectedFailure: injected.exitStatus, injectedLog: injected.log })
      }).upid
    }
  }
  return { route: match.route, context }
}

/** The handler's reply; whatever it throws or fails with becomes the PveError to answer. */
const runHandler = ({ context, route }: Prepared): Effect.Effect<Reply, PveError> =>
  Effect.suspend(() => {
    const result = route.handle(context)
    return Effect.isEffect(result) ? result : Effect.succeed(result)
  }).pipe(Effect.catchDefect((e) => Effect.fail(asPveError(e))))

/** An HTTP answer written straight to an upgrade request's socket, then the socket is closed. */
const writeRaw = (socket: Duplex, error: PveError | undefined, payload?: unknown) => {
  if (socket.destroyed) return
  const status = error?.status ?? 200
  const reason = (error?.message ?? "OK").split("\n")[0] ?? ""
  const json = error === undefined || !error.bare
  const body = error === undefined
    ? JSON.stringify(payload)
    : error.bare
    ? (error.status === 401 ? "" : error.message)
    : JSON.stringify({ data: null, ...(error.errors === undefined ? {} : { errors: error.errors }), message: error.message })
  const head = [
    `HTTP/1.1 ${status} ${reason}`,
    "Connection: close",
    ...(json ? ["Content-Type: application/json;charset=UTF-8"] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    "",
    ""
  ].join("\r\n")
  socket.end(head + body)
}

/**
 * Serves the simulation on `server` (listening or fed connections in memory) until the scope closes; closing stops
 * the server, destroys every open connection (hung ones included) and interrupts what is still running.
 */
export const servePve = (sim: Sim, server: Server): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const routes = bindRoutes([
      ...clusterRoutes,
      ...vmRoutes,
      ...configRoutes,
      ...powerRoutes,
      ...snapshotRoutes,
      ...agentRoutes,
      ...taskRoutes,
      ...consoleRoutes
    ])
    const scope = yield* Effect.scope
    // Requests, upgrades and workers live in a child scope, closed after the connections are gone (below).
    const running = yield* Scope.fork(scope, "parallel")
    const workers = yield* Scope.provide(FiberSet.make<HttpServerResponse.HttpServerResponse, never>(), running)
    const upgrades = yield* Scope.provide(FiberSet.make<void, never>(), running)
    const runUpgrade = yield* FiberSet.runtime(upgrades)<never>()

    /**
     * Prepares and runs the call as a worker of the simulation; the caller only waits for it. A call that ran may still
     * lose its answer to an `answerLost` fault (matched on the query as sent, `rawQuery`).
     */
    const answer = (
      request: ParsedRequest,
      rawQuery: Record<string, unknown>,
      headers: RequestHeaders
    ): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
      Effect.try({ try: () => prepare(sim, routes, request, headers), catch: asPveError }).pipe(
        Effect.flatMap(runHandler),
        Effect.map((result) => {
          const ok = { status: 200, reason: "OK", body: { data: result.data, ...result.extra } }
          const sent = sim.faults.answerOf(request.method, request.path, rawQuery, ok)
          return jsonResponse(sent.status, sent.reason, sent.body)
        }),
        Effect.catch((error: PveError) => Effect.as(delayUnauthorized(sim, error), errorResponse(error))),
        // GET never changes durable state; a write call may have, even one that failed after a partial effect.
        Effect.ensuring(Effect.sync(() => {
          if (request.method !== "GET") sim.changed()
        })),
        (work) => FiberSet.run(workers, Effect.interruptible(work)),
        // effect/http runs a request uninterruptibly; its wait for the worker ends with the client or the server.
        Effect.flatMap((worker) => Effect.interruptible(Fiber.join(worker)))
      )

    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const method = request.method.toUpperCase()
      const path = decodePath(request.url)
      const rawQuery = decodeQuery(request.url)
      const action = sim.faults.takeTransport(method, path, rawQuery)
      // effect/http runs a request uninterruptibly: the wait ends early only if the client or the server gives up.
      if (action !== undefined && action.delayMs > 0) yield* Effect.interruptible(sim.clock.sleep(action.delayMs))
      if (action !== undefined && action.then._tag !== "proceed") {
        // Received all the same: the log counts the calls a fault answered (their body unread).
        record(sim, method, path, rawQuery, {}, request.headers)
        return yield* transportAnswer(action.then, request)
      }
      return yield* readRequest(request).pipe(Effect.matchEffect({
        onFailure: (error) => {
          record(sim, method, path, {}, {}, request.headers)
          return Effect.succeed(errorResponse(error))
        },
        onSuccess: (parsed) => {
          record(sim, method, path, parsed.query, parsed.body, request.headers)
          return answer(parsed, rawQuery, request.headers)
        }
      }))
    })

    const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): Effect.Effect<void> =>
      Effect.gen(function*() {
        socket.on("error", () => socket.destroy())
        const path = decodePath(req.url)
        const query = decodeQuery(req.url)
        const headers = flatHeaders(req.headers)
        const action = sim.faults.takeTransport("GET", path, query)
        record(sim, "GET", path, query, {}, headers)
        if (action !== undefined && action.delayMs > 0) yield* sim.clock.sleep(action.delayMs)
        if (action !== undefined && action.then._tag !== "proceed") return transportOnSocket(action.then, socket)
        const attempt = Effect.gen(function*() {
          if ((req.method ?? "GET").toUpperCase() !== "GET") return yield* Effect.fail(new PveError(501, "no such uri", undefined, true))
          const prepared = yield* Effect.try({
            try: () => prepare(sim, routes, { method: "GET", path, query, body: {} }, headers),
            catch: asPveError
          })
          const { context, route } = prepared
          if (route.path !== WEBSOCKET_PATH || context.identity === null) {
            const result = yield* runHandler(prepared)
            return writeRaw(socket, undefined, { data: result.data, ...result.extra })
          }
          const identity = context.identity
          const { params } = context
          yield* Effect.try({
            try: () =>
              sim.consoles.upgrade(req, socket, head, identity, params.req("node"), params.reqInt("vmid"), params.reqInt("port"),
                params.req("vncticket")),
            catch: asPveError
          })
        })
        yield* Effect.catch(attempt, (error: PveError) =>
          Effect.andThen(delayUnauthorized(sim, error), Effect.sync(() => writeRaw(socket, error))))
      })

    const handler = yield* NodeHttpServer.makeHandler(app, { scope: running })
    const sockets = new Set<Duplex>()
    const onConnection = (socket: Duplex) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    }
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => void runUpgrade(upgrade(req, socket, head))
    server.on("connection", onConnection)
    server.on("request", handler)
    server.on("upgrade", onUpgrade)
    // Runs before `running` closes: no answer is written to a connection the close is about to destroy.
    yield* Effect.addFinalizer(() =>
      Effect.callback<void>((resume) => {
        server.off("request", handler)
        server.off("upgrade", onUpgrade)
        server.close(() => resume(Effect.void))
        for (const socket of sockets) socket.destroy()
      })
    )
  })

type Outcome = Exclude<TransportAction["then"], { _tag: "proceed" }>

/** Resets a TCP connection (RST); a connection that is not TCP (TLS, in memory) is destroyed. */
const reset = (socket: Duplex) => {
  try {
    if (socket instanceof Socket) return void socket.resetAndDestroy()
  } catch {
    // not a TCP handle
  }
  socket.destroy()
}

/**
 * A transport fault on a request: its answer, or no answer (a hang lasts until the client or the server gives up:
 * interruptible, as effect/http runs a request uninterruptibly).
 */
const transportAnswer = (
  outcome: Outcome,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const socket = () => NodeHttpServerRequest.toIncomingMessage(request).socket
  switch (outcome._tag) {
    case "respond":
      return Effect.succeed(jsonResponse(outcome.status, outcome.reason, outcome.body))
    case "hang":
      return Effect.interruptible(Effect.never)
    case "drop":
      return Effect.andThen(Effect.sync(() => socket().destroy()), Effect.interruptible(Effect.never))
    case "reset":
      return Effect.andThen(Effect.sync(() => reset(socket())), Effect.interruptible(Effect.never))
  }
}

/** The same on an upgrade request, whose socket is written to directly. */
const transportOnSocket = (outcome: Outcome, socket: Duplex): void => {
  switch (outcome._tag) {
    case "respond":
      return writeRaw(socket, new PveError(outcome.status, outcome.message))
    case "hang":
      return
    case "drop":
      return void socket.destroy()
    case "reset":
      return reset(socket)
  }
}
