// The Wings of every sandbox node on one front (reference/pterodactyl.md §3.2, §4.1): the console WebSocket (403
// unless `Origin` is exactly the panel URL), single-use signed downloads (files, backups) streamed with Content-Length
// and Content-Disposition, and multipart uploads of parts named `files`. An effect/http app: served on a port or
// reached in memory (Fronts.ts).
import { Effect, Stream } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { baseName, dataStream, type FileData, joinPath, normalizePath, sizeOf } from "./FileTree.ts"
import { claimString, type Claims } from "./jwt.ts"
import { boundaryOf, parseMultipart } from "./multipart.ts"
import { recordRequest, type Sim } from "./Sim.ts"
import type { TokenContext } from "./Tokens.ts"
import { readBody } from "./wire.ts"
import { serveConsoleSocket } from "./WingsSocket.ts"
import type { Server } from "./World.ts"

const NOT_FOUND = "The requested resource was not found on this server."
const WS_PATH = /^\/api\/servers\/([0-9a-f-]{36})\/ws$/

const wingsAnswer = (status: number, body?: unknown): HttpServerResponse.HttpServerResponse =>
  body === undefined
    ? HttpServerResponse.empty({ status })
    : HttpServerResponse.text(JSON.stringify(body), { status, contentType: "application/json; charset=utf-8" })

/** An answer to an upgrade request that is not upgraded (as Wings' router answers before its upgrader runs). */
const refusedUpgrade = (status: number, body = ""): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, { status, contentType: "text/plain", headers: { Connection: "close" } })

export const tokenContext = (sim: Sim, server: Server): TokenContext => {
  const node = sim.world.nodes.get(server.node)
  if (node === undefined) throw new Error(`sandbox: server ${server.id} on unknown node ${server.node}`)
  return { panelUrl: sim.panelUrl, nodeUrl: sim.nodeUrl, secret: node.secret, now: sim.clock.now }
}

/** The payload of a JWT without checking it: only to find which server (hence which node secret) it names. */
const decodeClaims = (token: string): Claims => {
  try {
    const payload: unknown = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"))
    return typeof payload === "object" && payload !== null ? (payload as Claims) : {}
  } catch {
    return {}
  }
}

/** The claims of a signed URL, whichever node signed it, or the answer: 404 (reused) or 403 (invalid). */
const redeem = (sim: Sim, url: URL): { readonly claims: Claims; readonly server: Server } | HttpServerResponse.HttpServerResponse => {
  const token = url.searchParams.get("token") ?? ""
  for (const server of sim.world.servers.values()) {
    const uuid = claimString(decodeClaims(token), "server_uuid")
    if (server.uuid !== uuid) continue
    const redeemed = sim.tokens.redeem(token, tokenContext(sim, server))
    if (redeemed === "used") return wingsAnswer(404, { error: NOT_FOUND })
    if (redeemed === "invalid") break
    return { claims: redeemed.claims, server }
  }
  return wingsAnswer(403, { error: "You are not authorized to access this endpoint." })
}

/** A download: the bytes pulled as the client reads them, counted in flight until the body ends or is dropped. */
const download = (sim: Sim, name: string, data: FileData): HttpServerResponse.HttpServerResponse => {
  const body = Stream.suspend(() => {
    sim.transfers.inFlight += 1
    return dataStream(data, sim.faults.downloadCut())
  }).pipe(Stream.ensuring(Effect.sync(() => void (sim.transfers.inFlight -= 1))))
  return HttpServerResponse.stream(body, {
    contentLength: sizeOf(data),
    contentType: "application/octet-stream",
    // Wings writes the name's UTF-8 bytes as they are (Go's strconv.Quote keeps printable runes); Node takes Latin-1.
    headers: { "Content-Disposition": `attachment; filename="${Buffer.from(name.replace(/"/g, ""), "utf8").toString("latin1")}"` }
  })
}

const downloadFile = (sim: Sim, url: URL): HttpServerResponse.HttpServerResponse => {
  const redeemed = redeem(sim, url)
  if (HttpServerResponse.isHttpServerResponse(redeemed)) return redeemed
  const path = claimString(redeemed.claims, "file_path") ?? ""
  const entry = redeemed.server.files.get(path)
  if (entry?.kind !== "file") return wingsAnswer(404, { error: NOT_FOUND })
  return download(sim, baseName(path), entry.data)
}

const downloadBackup = (sim: Sim, url: URL): HttpServerResponse.HttpServerResponse => {
  const redeemed = redeem(sim, url)
  if (HttpServerResponse.isHttpServerResponse(redeemed)) return redeemed
  const uuid = claimString(redeemed.claims, "backup_uuid")
  const backup = redeemed.server.backups.find((b) => b.uuid === uuid)
  if (backup === undefined || backup.completed_at === null) return wingsAnswer(404, { error: NOT_FOUND })
  return download(sim, `${backup.uuid}.tar.gz`, backup.content)
}

const upload = (sim: Sim, url: URL, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const redeemed = redeem(sim, url)
    if (HttpServerResponse.isHttpServerResponse(redeemed)) return redeemed
    const node = sim.world.nodes.get(redeemed.server.node)
    const limit = Math.min(node?.upload_size ?? 100, sim.settings.uploadLimitMiB) * 1024 * 1024
    const boundary = boundaryOf(request.headers["content-type"])
    if (boundary === undefined) return wingsAnswer(400, { error: "request is not multipart" })
    // Bounded read: each file may be up to the limit; the whole body up to twice that plus framing.
    const body = yield* readBody(request, 2 * limit + 64 * 1024)
    if (body === "too large") return wingsAnswer(413, { error: "file is too large" })
    const files = parseMultipart(body, boundary).filter((p) => p.name === "files" && p.filename !== undefined)
    if (files.some((f) => f.data.length > limit)) return wingsAnswer(413, { error: "file is too large" })
    const directory = normalizePath(url.searchParams.get("directory") ?? "/")
    for (const f of files) redeemed.server.files.write(joinPath(directory, baseName(f.filename ?? "")), Buffer.from(f.data))
    sim.changed()
    return wingsAnswer(200)
  })

/** A console WebSocket: refused before the upgrade (injected failure, unknown server, wrong Origin), else served. */
const consoleUpgrade = (sim: Sim, url: URL, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const transport = sim.faults.takeTransport("GET", url.pathname, request)
    if (transport !== undefined) return yield* transport
    const fault = sim.faults.take("GET", url.pathname)
    if (fault !== undefined) return refusedUpgrade(fault.status, JSON.stringify({ error: fault.detail ?? "injected failure" }))
    const match = WS_PATH.exec(url.pathname)
    const server = match === null ? undefined : sim.world.serverByUuid(match[1] ?? "")
    if (server === undefined) return refusedUpgrade(404, JSON.stringify({ error: NOT_FOUND }))
    // Wings' Upgrader.CheckOrigin: exactly the panel URL (its `remote`), a missing Origin fails too (§3.2).
    if (request.headers["origin"] !== sim.panelUrl) return refusedUpgrade(403)
    if (request.headers["upgrade"]?.toLowerCase() !== "websocket") return refusedUpgrade(400, "Bad Request")
    const socket = yield* request.upgrade
    yield* Effect.scoped(serveConsoleSocket(socket, sim, server.console, server.uuid, () => tokenContext(sim, server)))
    return HttpServerResponse.empty()
  })

/** Wings: one effect/http app over the simulation's state. */
export const wingsApp = (sim: Sim): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const method = request.method.toUpperCase()
    const url = new URL(request.url, sim.nodeUrl)
    // An upgrade request (Node's `upgrade` event) is only ever the console socket, whatever its path.
    if (request.headers["upgrade"] !== undefined) {
      recordRequest(sim, "wings", "GET", url, request.headers)
      return yield* consoleUpgrade(sim, url, request)
    }
    recordRequest(sim, "wings", method, url, request.headers)
    const transport = sim.faults.takeTransport(method, url.pathname, request)
    if (transport !== undefined) return yield* transport
    const fault = sim.faults.take(method, url.pathname)
    if (fault !== undefined) return wingsAnswer(fault.status, { error: fault.detail ?? "injected failure" })
    if (method === "GET" && url.pathname === "/download/file") return downloadFile(sim, url)
    if (method === "GET" && url.pathname === "/download/backup") return downloadBackup(sim, url)
    if (method === "POST" && url.pathname === "/upload/file") return yield* upload(sim, url, request)
    return wingsAnswer(404, { error: NOT_FOUND })
  }).pipe(
    Effect.catchCause(() => Effect.succeed(wingsAnswer(500, { error: "An unexpected error was encountered while processing this request" })))
  )
