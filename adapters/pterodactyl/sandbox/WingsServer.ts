// The Wings of every sandbox node on one loopback listener (reference/pterodactyl.md §3.2, §4.1): the console
// WebSocket (403 unless `Origin` is exactly the panel URL), single-use signed downloads (files, backups) streamed with
// Content-Length and Content-Disposition, and multipart uploads of parts named `files`.
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer, type Server as HttpServer } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { WebSocketServer } from "ws"
import { baseName, type FileData, joinPath, normalizePath, sizeOf, streamData } from "./FileTree.ts"
import { claimString, type Claims } from "./jwt.ts"
import { boundaryOf, parseMultipart } from "./multipart.ts"
import { recordRequest, type Sim } from "./Sim.ts"
import type { TokenContext } from "./Tokens.ts"
import { readBody } from "./wire.ts"
import { WingsSocket } from "./WingsSocket.ts"
import type { Server } from "./World.ts"

const NOT_FOUND = "The requested resource was not found on this server."
const WS_PATH = /^\/api\/servers\/([0-9a-f-]{36})\/ws$/

const sendWings = (res: ServerResponse, status: number, body?: unknown) => {
  res.statusCode = status
  if (body === undefined) return void res.end()
  res.setHeader("Content-Type", "application/json; charset=utf-8")
  res.end(JSON.stringify(body))
}

const rawAnswer = (socket: Duplex, status: number, reason: string, body = "") => {
  if (socket.destroyed) return
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
}

export class WingsServer {
  readonly server: HttpServer
  private readonly sim: Sim
  private readonly sockets = new Set<Socket>()
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 32 * 1024 })

  constructor(sim: Sim) {
    this.sim = sim
    this.server = createServer((req, res) => void this.onRequest(req, res).catch(() => {
      if (!res.headersSent) sendWings(res, 500, { error: "An unexpected error was encountered while processing this request" })
      else res.destroy()
    }))
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s)
      s.on("close", () => this.sockets.delete(s))
    })
    this.server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head))
  }

  close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate()
    return new Promise((resolve) => {
      this.server.close(() => resolve())
      for (const s of this.sockets) s.destroy()
    })
  }

  tokenContext(server: Server): TokenContext {
    const node = this.sim.world.nodes.get(server.node)
    if (node === undefined) throw new Error(`sandbox: server ${server.id} on unknown node ${server.node}`)
    return { panelUrl: this.sim.panelUrl, nodeUrl: this.sim.nodeUrl, secret: node.secret, now: this.sim.clock.now }
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    socket.on("error", () => socket.destroy())
    const url = new URL(req.url ?? "/", this.sim.nodeUrl)
    recordRequest(this.sim, "wings", "GET", url, req.headers)
    const fault = this.sim.faults.take("GET", url.pathname)
    if (fault !== undefined) return rawAnswer(socket, fault.status, "Injected", JSON.stringify({ error: fault.detail ?? "injected failure" }))
    const match = WS_PATH.exec(url.pathname)
    const server = match === null ? undefined : this.sim.world.serverByUuid(match[1] ?? "")
    if (server === undefined) return rawAnswer(socket, 404, "Not Found", JSON.stringify({ error: NOT_FOUND }))
    // Wings' Upgrader.CheckOrigin: exactly the panel URL (its `remote`), a missing Origin fails too (§3.2).
    if (req.headers.origin !== this.sim.panelUrl) return rawAnswer(socket, 403, "Forbidden")
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      new WingsSocket(ws, this.sim, server.console, server.uuid, () => this.tokenContext(server))
    })
  }

  /** The claims of a signed URL, whichever node signed it; answers 404 (reused) or 403 (invalid) itself. */
  private redeem(url: URL, res: ServerResponse): { readonly claims: Claims; readonly server: Server } | undefined {
    const token = url.searchParams.get("token") ?? ""
    for (const server of this.sim.world.servers.values()) {
      const uuid = claimString(decodeClaims(token), "server_uuid")
      if (server.uuid !== uuid) continue
      const redeemed = this.sim.tokens.redeem(token, this.tokenContext(server))
      if (redeemed === "used") return void sendWings(res, 404, { error: NOT_FOUND })
      if (redeemed === "invalid") break
      return { claims: redeemed.claims, server }
    }
    sendWings(res, 403, { error: "You are not authorized to access this endpoint." })
    return undefined
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse) {
    const method = (req.method ?? "GET").toUpperCase()
    const url = new URL(req.url ?? "/", this.sim.nodeUrl)
    recordRequest(this.sim, "wings", method, url, req.headers)
    const fault = this.sim.faults.take(method, url.pathname)
    if (fault !== undefined) return sendWings(res, fault.status, { error: fault.detail ?? "injected failure" })
    if (method === "GET" && url.pathname === "/download/file") return this.downloadFile(url, res)
    if (method === "GET" && url.pathname === "/download/backup") return this.downloadBackup(url, res)
    if (method === "POST" && url.pathname === "/upload/file") return this.upload(url, req, res)
    sendWings(res, 404, { error: NOT_FOUND })
  }

  private async stream(res: ServerResponse, name: string, data: FileData) {
    res.statusCode = 200
    res.setHeader("Content-Length", sizeOf(data))
    // Wings writes the name's UTF-8 bytes as they are (Go's strconv.Quote keeps printable runes); Node takes Latin-1.
    res.setHeader("Content-Disposition", `attachment; filename="${Buffer.from(name.replace(/"/g, ""), "utf8").toString("latin1")}"`)
    res.setHeader("Content-Type", "application/octet-stream")
    this.sim.transfers.inFlight += 1
    try {
      const whole = await streamData(data, res, this.sim.faults.downloadCut())
      if (!whole) res.socket?.destroy()
    } finally {
      this.sim.transfers.inFlight -= 1
    }
  }

  private async downloadFile(url: URL, res: ServerResponse) {
    const redeemed = this.redeem(url, res)
    if (redeemed === undefined) return
    const path = claimString(redeemed.claims, "file_path") ?? ""
    const entry = redeemed.server.files.get(path)
    if (entry?.kind !== "file") return sendWings(res, 404, { error: NOT_FOUND })
    await this.stream(res, baseName(path), entry.data)
  }

  private async downloadBackup(url: URL, res: ServerResponse) {
    const redeemed = this.redeem(url, res)
    if (redeemed === undefined) return
    const uuid = claimString(redeemed.claims, "backup_uuid")
    const backup = redeemed.server.backups.find((b) => b.uuid === uuid)
    if (backup === undefined || backup.completed_at === null) return sendWings(res, 404, { error: NOT_FOUND })
    await this.stream(res, `${backup.uuid}.tar.gz`, backup.content)
  }

  private async upload(url: URL, req: IncomingMessage, res: ServerResponse) {
    const redeemed = this.redeem(url, res)
    if (redeemed === undefined) return void req.resume()
    const node = this.sim.world.nodes.get(redeemed.server.node)
    const limit = Math.min(node?.upload_size ?? 100, this.sim.settings.uploadLimitMiB) * 1024 * 1024
    const boundary = boundaryOf(req.headers["content-type"])
    if (boundary === undefined) return sendWings(res, 400, { error: "request is not multipart" })
    // Bounded read: each file may be up to the limit; the whole body up to twice that plus framing.
    const body = await readBody(req, 2 * limit + 64 * 1024)
    if (body === "too large") return sendWings(res, 413, { error: "file is too large" })
    const files = parseMultipart(body, boundary).filter((p) => p.name === "files" && p.filename !== undefined)
    if (files.some((f) => f.data.length > limit)) return sendWings(res, 413, { error: "file is too large" })
    const directory = normalizePath(url.searchParams.get("directory") ?? "/")
    for (const f of files) redeemed.server.files.write(joinPath(directory, baseName(f.filename ?? "")), Buffer.from(f.data))
    this.sim.changed()
    sendWings(res, 200)
  }
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
