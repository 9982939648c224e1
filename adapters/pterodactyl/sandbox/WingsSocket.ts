// One console WebSocket on Wings (reference/pterodactyl.md §3.3): `{event,args}` JSON text frames, `auth` with the
// panel's JWT (re-auth on the same socket, listeners registered once), `token expiring`/`token expired` checks every
// min(30 s, ttl/4), `jwt error` for every non-auth message while unauthenticated or expired, and the client events
// `send logs`, `send stats`, `send command`, `set state` gated by the token's permissions.
import type { WebSocket } from "ws"
import type { Console, ConsoleSession, PowerAction } from "./Console.ts"
import { claimNumber, type Claims } from "./jwt.ts"
import type { Sim } from "./Sim.ts"
import type { Timer } from "./SimClock.ts"
import type { TokenContext } from "./Tokens.ts"

const POWER_PERMISSION: Readonly<Record<PowerAction, string>> = {
  start: "control.start",
  stop: "control.stop",
  kill: "control.stop",
  restart: "control.restart"
}

const parseFrame = (data: string): { readonly event: string; readonly args: ReadonlyArray<string> } | undefined => {
  try {
    const frame: unknown = JSON.parse(data)
    if (typeof frame !== "object" || frame === null || !("event" in frame) || typeof frame.event !== "string") return undefined
    const args = "args" in frame && Array.isArray(frame.args) ? frame.args.map(String) : []
    return { event: frame.event, args }
  } catch {
    return undefined
  }
}

export class WingsSocket implements ConsoleSession {
  private claims: Claims | undefined
  private everAuthed = false
  private checker: Timer | undefined
  private readonly ws: WebSocket
  private readonly sim: Sim
  private readonly console: Console
  private readonly serverUuid: string
  private readonly tokenContext: () => TokenContext

  constructor(ws: WebSocket, sim: Sim, console: Console, serverUuid: string, tokenContext: () => TokenContext) {
    this.ws = ws
    this.sim = sim
    this.console = console
    this.serverUuid = serverUuid
    this.tokenContext = tokenContext
    console.attach(this)
    const period = Math.min(30_000, Math.max(10, sim.settings.wingsTokenTtlMs / 4))
    this.checker = sim.clock.every(period, () => this.checkExpiry())
    ws.on("message", (data, isBinary) => {
      if (!isBinary) this.onFrame(data.toString())
    })
    ws.on("close", () => this.detach())
    ws.on("error", () => this.detach())
  }

  private detach() {
    this.checker?.cancel()
    this.checker = undefined
    this.console.detach(this)
  }

  private send(event: string, args?: ReadonlyArray<string>) {
    if (this.ws.readyState !== this.ws.OPEN) return
    this.ws.send(JSON.stringify(args === undefined || args.length === 0 ? { event } : { event, args }))
  }

  private can(permission: string | undefined): boolean {
    if (permission === undefined) return true
    const granted = this.claims?.["permissions"]
    if (!Array.isArray(granted)) return false
    // `*` grants every permission except the `admin.*` ones (§3.1).
    return granted.includes(permission) || (!permission.startsWith("admin.") && granted.includes("*"))
  }

  /** Whether the current token still holds (expiry and the denylist are checked on every use). */
  private valid(): boolean {
    return this.claims !== undefined && this.sim.tokens.problem(this.claims, this.tokenContext()) === undefined
  }

  deliver(event: string, args?: ReadonlyArray<string>, permission?: string): void {
    if (this.valid() && this.can(permission)) this.send(event, args)
  }

  close(code: number, reason: string): void {
    this.detach()
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(code, reason)
  }

  private checkExpiry() {
    if (this.claims === undefined) return
    const exp = claimNumber(this.claims, "exp") ?? 0
    const left = exp * 1000 - this.sim.clock.now()
    if (left <= 0) this.send("token expired")
    else if (left <= 60_000) this.send("token expiring")
  }

  private onFrame(data: string) {
    const frame = parseFrame(data)
    if (frame === undefined) return
    if (frame.event === "auth") return this.auth(frame.args[0] ?? "")
    if (this.claims === undefined) return this.send("jwt error", ["jwt: no jwt present"])
    const problem = this.sim.tokens.problem(this.claims, this.tokenContext())
    if (problem !== undefined) return this.send("jwt error", [problem])
    switch (frame.event) {
      case "send logs":
        for (const line of this.console.recentLogs()) this.send("console output", [line])
        return
      case "send stats":
        return this.send("stats", [this.console.stats()])
      case "send command":
        if (this.can("control.console")) this.console.command(frame.args[0] ?? "")
        return
      case "set state": {
        const action = frame.args[0]
        if (action !== "start" && action !== "stop" && action !== "restart" && action !== "kill") return
        if (!this.can(POWER_PERMISSION[action])) return
        const refused = this.console.power(action)
        if (refused !== undefined) {
          const text = this.can("admin.websocket.errors") ? refused : "An unexpected error was encountered while handling this request."
          this.send("daemon error", [`Error Event [${this.serverUuid}]: ${text}`])
        }
        return
      }
    }
  }

  private auth(token: string) {
    const checked = this.sim.tokens.checkConsole(token, this.tokenContext(), this.serverUuid)
    if ("error" in checked) return this.send("jwt error", [checked.error])
    this.claims = checked.claims
    this.send("auth success")
    if (this.everAuthed) return
    this.everAuthed = true
    this.send("status", [this.console.state])
    if (this.console.state === "offline") this.send("stats", [this.console.stats()])
  }
}
