// A VPS serial console seen from the keyboard, two ways: through the server's relay (`GET /api/vps/:id/console`,
// raw terminal bytes in binary frames) and straight to the sandbox Proxmox as the server itself reaches it
// (`termproxy`, then `vncwebsocket` with the ticket, the auth line, `OK`, and `0:<len>:<data>` input frames —
// reference/proxmox.md §4, adapters/proxmox/console.ts).
import { Schema } from "effect"
import WebSocket from "ws"

export type Path = "relay" | "direct"

interface Waiter {
  readonly marker: string
  readonly resolve: () => void
}

/**
 * An open console. `until(marker)` resolves as soon as a received frame completes `marker` after what earlier
 * waits consumed: it is driven by the socket's message event, so a round trip is timed without polling. While a
 * wait is on, only the few characters that could start the marker are kept, so megabytes of output cost the
 * reader no more than a scan of each frame.
 */
export class Terminal {
  readonly path: Path
  private readonly ws: WebSocket
  private readonly frame: (data: Buffer) => Buffer
  /** Output not consumed yet (all of it while nobody waits; the possible start of the marker while someone does). */
  private unread = ""
  private waiter: Waiter | undefined
  /** Bytes of terminal output received so far. */
  received = 0
  readonly closed: Promise<void>

  constructor(path: Path, ws: WebSocket, frame: (data: Buffer) => Buffer) {
    this.path = path
    this.ws = ws
    this.frame = frame
    this.closed = new Promise((resolve) => ws.once("close", () => resolve()))
    ws.on("message", (data: Buffer) => {
      this.received += data.byteLength
      this.unread += data.toString("latin1")
      this.check()
    })
  }

  private check() {
    const waiter = this.waiter
    if (waiter === undefined) return
    const at = this.unread.indexOf(waiter.marker)
    if (at < 0) {
      this.unread = this.unread.slice(Math.max(0, this.unread.length - waiter.marker.length + 1))
      return
    }
    this.unread = this.unread.slice(at + waiter.marker.length)
    this.waiter = undefined
    waiter.resolve()
  }

  /** Waits for `marker` in the output not yet consumed; rejects after `timeoutMs`. */
  until(marker: string, timeoutMs = 10_000): Promise<void> {
    if (this.waiter !== undefined) return Promise.reject(new Error("one wait at a time"))
    const before = this.unread.slice(-200)
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined
        reject(new Error(`${this.path} console: no ${JSON.stringify(marker)} within ${timeoutMs} ms after ${JSON.stringify(before)}`))
      }, timeoutMs)
      this.waiter = { marker, resolve: () => {
        clearTimeout(timer)
        resolve()
      } }
      this.check()
    })
  }

  /** One frame of typed input. */
  type(data: string | Buffer) {
    this.ws.send(this.frame(typeof data === "string" ? Buffer.from(data, "latin1") : data), { binary: true })
  }

  /** Negotiated WebSocket extensions (none expected: neither server accepts permessage-deflate). */
  get extensions() {
    return this.ws.extensions
  }

  async close() {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000, "done")
    await Promise.race([this.closed, new Promise((r) => setTimeout(r, 5_000))])
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.terminate()
  }
}

const opened = (ws: WebSocket, what: string): Promise<void> =>
  new Promise((resolve, reject) => {
    ws.once("open", () => resolve())
    ws.once("error", (e) => reject(new Error(`${what}: ${e.message}`)))
    ws.once("unexpected-response", (_request, response) => reject(new Error(`${what} answered ${response.statusCode}`)))
  })

/** The server's relay, opened as the panel's page does: its Origin and the session cookie. */
export const openRelay = async (serverUrl: string, origin: string, cookie: string, vpsId: string): Promise<Terminal> => {
  const ws = new WebSocket(`${serverUrl.replace(/^http/, "ws")}/api/vps/${vpsId}/console`, {
    headers: { Origin: origin, Cookie: cookie },
    handshakeTimeout: 15_000
  })
  const terminal = new Terminal("relay", ws, (data) => data)
  await opened(ws, "the console relay")
  return terminal
}

const Envelope = <S extends Schema.Top & { readonly DecodingServices: never }>(data: S) => Schema.Struct({ data })
const decodeTicket = Schema.decodeUnknownSync(Envelope(Schema.Struct({ ticket: Schema.String, CSRFPreventionToken: Schema.String })))
const decodeTermProxy = Schema.decodeUnknownSync(Envelope(Schema.Struct({
  user: Schema.String,
  ticket: Schema.String,
  port: Schema.Union([Schema.Number, Schema.NumberFromString])
})))

const pveCall = async (url: string, init: RequestInit, what: string): Promise<unknown> => {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${what} answered ${response.status}: ${text.slice(0, 200)}`)
  return JSON.parse(text)
}

const form = (params: Record<string, string>) => new URLSearchParams(params).toString()

/** `0:<byte length>:<data>`: termproxy forwards exactly that many bytes to the pty (§4.4). */
const inputFrame = (data: Buffer) => Buffer.concat([Buffer.from(`0:${data.byteLength}:`, "latin1"), data])

/** The console of `vm` straight from the sandbox Proxmox, with a ticket session of its own. */
export const openDirect = async (
  pveUrl: string,
  login: { readonly username: string; readonly password: string },
  vm: { readonly node: string; readonly vmid: number }
): Promise<Terminal> => {
  const api = `${pveUrl}/api2/json`
  const session = decodeTicket(await pveCall(`${api}/access/ticket`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form(login)
  }, "POST /access/ticket")).data
  const cookie = `PVEAuthCookie=${encodeURIComponent(session.ticket)}`
  const vmPath = `/nodes/${encodeURIComponent(vm.node)}/qemu/${vm.vmid}`
  const proxy = decodeTermProxy(await pveCall(`${api}${vmPath}/termproxy`, {
    method: "POST",
    headers: { cookie, CSRFPreventionToken: session.CSRFPreventionToken }
  }, "POST termproxy")).data
  // The VNC ticket lives about 40 s and termproxy waits 10 s for us: connect at once (§4.2).
  const query = new URLSearchParams({ port: String(proxy.port), vncticket: proxy.ticket })
  const ws = new WebSocket(`${api.replace(/^http/, "ws")}${vmPath}/vncwebsocket?${query}`, "binary", {
    headers: { cookie },
    handshakeTimeout: 10_000
  })
  const terminal = new Terminal("direct", ws, inputFrame)
  await opened(ws, "the direct console")
  ws.send(`${proxy.user}:${proxy.ticket}\n`)
  await terminal.until("OK")
  terminal.received = 0
  return terminal
}

/** Nearest-rank percentile of sorted values. */
export const percentile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN
