// The serial console (reference/proxmox.md §4): `termproxy` opens a listener on a port 5900–5999 with a console ticket,
// `vncwebsocket` connects to it within 10 s, then the termproxy wire protocol — an auth line, `OK`, and framed input
// (`0:<len>:<data>`, `1:<cols>:<rows>:`, `2`) driving the guest's serial terminal.
import type { IncomingMessage } from "node:http"
import type { Duplex } from "node:stream"
import { type WebSocket, WebSocketServer } from "ws"
import type { Auth, Identity } from "./Auth.ts"
import type { Cluster } from "./Cluster.ts"
import { fail, PveError } from "./PveError.ts"
import { SerialTerminal } from "./SerialTerminal.ts"
import type { SimClock } from "./SimClock.ts"
import type { Tasks } from "./Tasks.ts"

const MAX_FRAME = 128 * 1024
const CONNECT_WINDOW_MS = 10_000
const AUTH_LINE_WINDOW_MS = 10_000

interface Listener {
  readonly port: number
  readonly node: string
  readonly vmid: number
  readonly user: string
  readonly viaToken: boolean
  readonly ticket: string
  /** Simulated ms of the termproxy call. */
  readonly openedAt: number
  readonly iface: string | undefined
  readonly endTask: (exitstatus: string) => void
  connected: boolean
}

interface Connection {
  readonly ws: WebSocket
  readonly listener: Listener
  authed: boolean
  pending: Buffer
}

export class Consoles {
  private readonly listeners = new Map<number, Listener>()
  private readonly connections = new Set<Connection>()
  private readonly terminals = new Map<number, SerialTerminal>()
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME,
    // pve-http-server echoes the requested subprotocol; clients offer `binary`.
    handleProtocols: (protocols) => (protocols.has("binary") ? "binary" : ([...protocols][0] ?? false))
  })

  private readonly clock: SimClock
  private readonly auth: Auth
  private readonly cluster: Cluster
  private readonly tasks: Tasks

  constructor(clock: SimClock, auth: Auth, cluster: Cluster, tasks: Tasks) {
    this.clock = clock
    this.auth = auth
    this.cluster = cluster
    this.tasks = tasks
  }

  /** Open console WebSockets (past the handshake, not yet closed). */
  openCount(): number {
    return this.connections.size
  }

  /**
   * `POST /nodes/{node}/qemu/{vmid}/termproxy`: a listener on a free port waits for the client's WebSocket for a while;
   * its ticket, port and the task that holds it open.
   */
  openTermproxy(identity: Identity, node: string, vmid: number, serial: string | undefined) {
    const vm = this.cluster.vmOn(node, vmid)
    const vgaSerial = /^(?:type=)?(serial\d)/.exec(vm.config.get("vga") ?? "")?.[1]
    const iface = serial ?? vgaSerial
    let port = 5900
    while (this.listeners.has(port) && port <= 5999) port++
    if (port > 5999) throw fail("unable to find free port (5900-5999)")
    const ticket = this.auth.vncTicket(identity.user, vmid, port)
    const task = this.tasks.startOpen(node, "vncproxy", String(vmid), identity.user)
    const listener: Listener = {
      port, node, vmid, user: identity.user, viaToken: identity.viaToken, ticket, openedAt: this.clock.now(), iface,
      endTask: task.end, connected: false
    }
    this.listeners.set(port, listener)
    this.clock.later(CONNECT_WINDOW_MS, () => {
      if (listener.connected) return
      this.listeners.delete(port)
      task.end("failed waiting for client: timed out")
    })
    return { user: identity.user, ticket, port, upid: task.record.upid }
  }

  /** `GET …/vncwebsocket` without an upgrade: the API handler's own checks of the console ticket and the VM. */
  checkWebsocket(identity: Identity, node: string, vmid: number, port: number, vncticket: string): void {
    if (!this.auth.verifyVncTicket(vncticket, identity.user, vmid, port)) {
      throw fail("permission denied - invalid PVEVNC ticket")
    }
    this.cluster.vmOn(node, vmid)
  }

  /**
   * The `vncwebsocket` upgrade once the request is authenticated and its parameters verified: the console ticket
   * must belong to this user, VM and port; then the listener must still be waiting, or the socket just closes.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, identity: Identity, node: string, vmid: number, port: number, vncticket: string): void {
    if (!this.auth.verifyVncTicket(vncticket, identity.user, vmid, port)) throw fail("permission denied - invalid PVEVNC ticket")
    this.cluster.vmOn(node, vmid)
    const version = req.headers["sec-websocket-version"]
    if (version !== "13") throw fail(`unsupported websocket-version '${version ?? ""}'`)
    if (req.headers["sec-websocket-key"] === undefined) throw fail("missing websocket-key")
    const listener = this.listeners.get(port)
    const late = listener !== undefined && this.clock.now() - listener.openedAt > CONNECT_WINDOW_MS
    if (listener === undefined || listener.connected || late) {
      if (late) {
        this.listeners.delete(port)
        listener.endTask("failed waiting for client: timed out")
      }
      // pveproxy cannot reach termproxy's port any more: it drops the client without an HTTP answer.
      socket.destroy()
      return
    }
    listener.connected = true
    const offered = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim())
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, listener, offered.includes("binary")))
  }

  private serve(ws: WebSocket, listener: Listener, offeredBinary: boolean) {
    const conn: Connection = { ws, listener, authed: false, pending: Buffer.alloc(0) }
    this.connections.add(conn)
    const authTimer = this.clock.later(AUTH_LINE_WINDOW_MS, () => {
      if (!conn.authed) ws.terminate()
    })
    ws.on("close", () => {
      authTimer.cancel()
      this.connections.delete(conn)
      this.listeners.delete(listener.port)
      listener.endTask("OK")
    })
    ws.on("error", () => ws.terminate())
    ws.on("message", (data: Buffer | ArrayBuffer | Array<Buffer>) => {
      const chunk = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)
      this.onData(conn, chunk)
    })
    // go-proxmox PR #259: the connection closes unless `binary` was offered.
    if (!offeredBinary) ws.close(1002, "subprotocol 'binary' required")
  }

  private send(conn: Connection, text: string, then?: () => void) {
    conn.ws.send(Buffer.from(text, "utf8"), { binary: true }, then === undefined ? undefined : () => then())
  }

  /** termproxy exits: the socket ends without a close frame, after whatever it last printed. */
  private hangUp(conn: Connection, lastWords?: string) {
    if (lastWords === undefined) conn.ws.terminate()
    else this.send(conn, lastWords, () => conn.ws.terminate())
  }

  private onData(conn: Connection, chunk: Buffer) {
    conn.pending = Buffer.concat([conn.pending, chunk])
    if (!conn.authed) {
      const nl = conn.pending.indexOf(0x0a)
      if (nl < 0) {
        if (conn.pending.length > 4096) this.hangUp(conn)
        return
      }
      const line = conn.pending.subarray(0, nl).toString("utf8")
      conn.pending = conn.pending.subarray(nl + 1)
      if (!this.authenticate(conn, line)) return
    }
    this.onFrames(conn)
  }

  /** The auth line `<user>:<vncticket>`; on success `OK`, then `qm terminal` starts (or fails and hangs up). */
  private authenticate(conn: Connection, line: string): boolean {
    const { listener } = conn
    const colon = line.indexOf(":")
    const user = colon < 0 ? "" : line.slice(0, colon)
    const ticket = colon < 0 ? "" : line.slice(colon + 1).replace(/\r$/, "")
    // Older termproxy verifies through `/access/ticket`, which refuses token ids (§4.4 API-token caveat).
    const valid = ticket === listener.ticket && !listener.viaToken && !user.includes("!") &&
      this.auth.verifyVncTicket(ticket, user, listener.vmid, listener.port)
    if (!valid) {
      this.hangUp(conn)
      return false
    }
    conn.authed = true
    this.send(conn, "OK")
    const vm = this.cluster.vms.get(listener.vmid)
    const sockets = ["serial0", "serial1", "serial2", "serial3"].filter((s) => vm?.config.get(s) === "socket")
    const iface = listener.iface ?? sockets[0]
    const problem = vm === undefined || vm.node !== listener.node
      ? `Configuration file 'nodes/${listener.node}/qemu-server/${listener.vmid}.conf' does not exist`
      : iface === undefined
      ? "unable to find a serial interface"
      : vm.config.get(iface) !== "socket"
      ? `serial interface '${iface}' is not configured`
      : vm.status !== "running"
      ? `VM ${listener.vmid} not running`
      : undefined
    if (problem !== undefined || vm === undefined) {
      this.hangUp(conn, `${problem ?? ""}\r\n`)
      return false
    }
    this.send(conn, `starting serial terminal on interface ${iface}\r\n`)
    return true
  }

  private terminalFor(vmid: number): SerialTerminal | undefined {
    const existing = this.terminals.get(vmid)
    if (existing !== undefined) return existing
    const vm = this.cluster.vms.get(vmid)
    if (vm === undefined) return undefined
    const terminal = new SerialTerminal(vm)
    this.terminals.set(vmid, terminal)
    return terminal
  }

  /** Output goes to every console attached to the VM's serial port, like a shared tty. */
  private broadcast(vmid: number, text: string) {
    if (text === "") return
    for (const conn of this.connections) if (conn.authed && conn.listener.vmid === vmid) this.send(conn, text)
  }

  private onFrames(conn: Connection) {
    const vmid = conn.listener.vmid
    for (;;) {
      const buf = conn.pending
      if (buf.length === 0) return
      const type = buf[0]
      if (type === 0x32) {
        conn.pending = buf.subarray(1)
        continue
      }
      if ((type === 0x30 || type === 0x31) && buf.length < 2) return
      if ((type !== 0x30 && type !== 0x31) || buf[1] !== 0x3a) {
        conn.pending = buf.subarray(1)
        continue
      }
      if (type === 0x30) {
        const colon = buf.indexOf(0x3a, 2)
        if (colon < 0) {
          if (buf.length > 16) conn.pending = buf.subarray(1)
          return
        }
        const digits = buf.subarray(2, colon).toString("latin1")
        if (!/^\d+$/.test(digits)) {
          conn.pending = buf.subarray(1)
          continue
        }
        const end = colon + 1 + Number(digits)
        if (buf.length < end) return
        const data = buf.subarray(colon + 1, end).toString("utf8")
        conn.pending = buf.subarray(end)
        const terminal = this.terminalFor(vmid)
        if (terminal !== undefined) this.broadcast(vmid, terminal.input(data))
        continue
      }
      const m = /^1:(\d+):(\d+):/.exec(buf.subarray(0, 32).toString("latin1"))
      if (m === null) {
        if (buf.length > 24 || /^1:[\d:]*[^\d:]/.test(buf.subarray(0, 32).toString("latin1"))) conn.pending = buf.subarray(1)
        else return
        continue
      }
      this.terminalFor(vmid)?.resize(Number(m[1]), Number(m[2]))
      conn.pending = buf.subarray(m[0].length)
    }
  }

  /** The VM stopped or vanished: `qm terminal` exits, and the tty starts over at the next boot. */
  closeForVm(vmid: number): void {
    this.terminals.delete(vmid)
    for (const conn of this.connections) if (conn.listener.vmid === vmid) conn.ws.terminate()
  }

  /** The guest rebooted: the getty is back at its login prompt. */
  resetTerminal(vmid: number): void {
    this.terminals.delete(vmid)
  }

  close(): void {
    for (const conn of this.connections) conn.ws.terminate()
    this.wss.close()
  }
}
