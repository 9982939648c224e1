// The sandbox's HTTP(S) front, in pveproxy's order: injected transport faults, body limits, authentication (401),
// route lookup (501), API-token and node checks, parameter verification (400), then the handler; WebSocket
// upgrades of `…/vncwebsocket` go through the same steps before reaching the console.
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from "node:http"
import { createServer as createHttpServer } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { agentRoutes } from "./agentRoutes.ts"
import type { Identity } from "./Auth.ts"
import { clusterRoutes } from "./clusterRoutes.ts"
import { configRoutes } from "./configRoutes.ts"
import { defaultFaultMessage, faultAnswer, type TransportFault, vmidIn } from "./Faults.ts"
import { decodePath, decodeUrlencoded, parseRequest, type ParsedRequest, sendError, sendJson } from "./httpWire.ts"
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

const queryOf = (req: IncomingMessage) => decodeUrlencoded(new URL(req.url ?? "/", "http://sandbox").search.replace(/^\?/, ""))

const asPveError = (e: unknown): PveError =>
  e instanceof PveError ? e : new PveError(500, `${e instanceof Error ? e.message : String(e)}\n`)

export class PveServer {
  private readonly routes: ReadonlyArray<BoundRoute>
  private readonly sockets = new Set<Socket>()
  readonly server: Server
  private readonly sim: Sim

  constructor(sim: Sim, tls: { readonly cert: string; readonly key: string } | undefined) {
    this.sim = sim
    this.routes = bindRoutes([
      ...clusterRoutes,
      ...vmRoutes,
      ...configRoutes,
      ...powerRoutes,
      ...snapshotRoutes,
      ...agentRoutes,
      ...taskRoutes,
      sim.consoles.route,
      sim.consoles.websocketRoute
    ])
    const onRequest = (req: IncomingMessage, res: ServerResponse) => void this.onRequest(req, res)
    this.server = tls === undefined ? createHttpServer(onRequest) : createHttpsServer({ cert: tls.cert, key: tls.key }, onRequest)
    this.server.on("connection", (socket: Socket) => {
      this.sockets.add(socket)
      socket.on("close", () => this.sockets.delete(socket))
    })
    this.server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.onUpgrade(req, socket, head))
  }

  /** Destroys every open connection, hung ones included. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy()
  }

  private record(method: string, path: string, query: Record<string, unknown>, body: Record<string, unknown>, headers: IncomingHttpHeaders) {
    const vmid = vmidIn(path)
    const vmExists = vmid === undefined ? null : this.sim.cluster.vms.has(vmid)
    this.sim.requests.push({ method, path, query, body, headers: flatHeaders(headers), vmExists, at: this.sim.clock.now() })
  }

  private async delayUnauthorized(error: PveError) {
    if (error.status !== 401 || this.sim.authFailureDelayMs <= 0) return
    await this.sim.clock.sleep(this.sim.authFailureDelayMs)
  }

  /** Authentication, route, node and parameters: everything before the handler runs. */
  private prepare(request: ParsedRequest, headers: IncomingHttpHeaders): Prepared {
    if (request.path !== API_BASE && !request.path.startsWith(`${API_BASE}/`)) {
      throw new PveError(501, "no such uri", undefined, true)
    }
    const relPath = request.path.slice(API_BASE.length) || "/"
    const identity: Identity | null = this.sim.auth.authenticate(request.method, relPath, headers)
    const match = matchRoute(this.routes, request.method, relPath)
    if (match === undefined) throw new PveError(501, `Method '${request.method} ${relPath}' not implemented`)
    const raw: Record<string, unknown> = { ...request.body, ...request.query }
    for (const [name, value] of Object.entries(match.pathParams)) {
      if (raw[name] !== undefined && String(raw[name]) !== value) {
        throw paramError({ [name]: "duplicate parameter (already defined in URI) with conflicting values!" })
      }
      raw[name] = value
    }
    const node = match.pathParams["node"]
    if (match.route.proxyNode && node !== undefined && !this.sim.cluster.nodes.has(node)) throw fail(unknownNode(node))
    const params = new Params(validateParams(match.route.schema.params, raw))
    const sim = this.sim
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

  private applyTransportFault(fault: TransportFault, socket: Duplex, res?: ServerResponse) {
    switch (fault._tag) {
      case "hang":
        return
      case "dropConnection":
        socket.destroy()
        return
      case "status": {
        const message = `${fault.message ?? defaultFaultMessage(fault.status)}\n`
        if (res !== undefined) sendJson(res, fault.status, message, faultAnswer(fault).body)
        else writeRaw(socket, new PveError(fault.status, message))
      }
    }
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse) {
    const method = (req.method ?? "GET").toUpperCase()
    const path = decodePath(req.url)
    const query = queryOf(req)
    const fault = this.sim.faults.takeTransport(method, path, query)
    if (fault !== undefined) {
      // Received all the same: the log counts the calls a fault answered (their body unread).
      this.record(method, path, query, {}, req.headers)
      return this.applyTransportFault(fault, req.socket, res)
    }
    let request: ParsedRequest
    try {
      request = await parseRequest(req)
    } catch (e) {
      this.record(method, path, {}, {}, req.headers)
      return sendError(res, asPveError(e))
    }
    this.record(method, path, request.query, request.body, req.headers)
    try {
      const { context, route } = this.prepare(request, req.headers)
      const result: Reply = await route.handle(context)
      const answer = this.sim.faults.answerOf(method, path, query, { status: 200, reason: "OK", body: { data: result.data, ...result.extra } })
      sendJson(res, answer.status, answer.reason, answer.body)
    } catch (e) {
      const error = asPveError(e)
      await this.delayUnauthorized(error)
      if (!res.headersSent) sendError(res, error)
    } finally {
      // GET never changes durable state; a write call may have, even one that failed after a partial effect.
      if (method !== "GET") this.sim.changed()
    }
  }

  private async onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    socket.on("error", () => socket.destroy())
    const path = decodePath(req.url)
    const query = queryOf(req)
    const fault = this.sim.faults.takeTransport("GET", path, query)
    this.record("GET", path, query, {}, req.headers)
    if (fault !== undefined) return this.applyTransportFault(fault, socket)
    try {
      if ((req.method ?? "GET").toUpperCase() !== "GET") throw new PveError(501, "no such uri", undefined, true)
      const { context, route } = this.prepare({ method: "GET", path, query, body: {} }, req.headers)
      if (route.path !== WEBSOCKET_PATH || context.identity === null) {
        const result = await route.handle(context)
        writeRaw(socket, undefined, { data: result.data, ...result.extra })
        return
      }
      const { params } = context
      this.sim.consoles.upgrade(req, socket, head, context.identity, params.req("node"), params.reqInt("vmid"),
        params.reqInt("port"), params.req("vncticket"))
    } catch (e) {
      const error = asPveError(e)
      await this.delayUnauthorized(error)
      writeRaw(socket, error)
    }
  }
}

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
