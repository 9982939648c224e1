// One console WebSocket on Wings (reference/pterodactyl.md §3.3): `{event,args}` JSON text frames, `auth` with the
// panel's JWT (re-auth on the same socket, listeners registered once), `token expiring`/`token expired` checks every
// min(30 s, ttl/4), `jwt error` for every non-auth message while unauthenticated or expired, and the client events
// `send logs`, `send stats`, `send command`, `set state` gated by the token's permissions.
import { Effect, Queue, type Scope } from "effect"
import { Socket } from "effect/socket"
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

/** The socket's side of the console: the frames' semantics; sending is handing a frame to `write`. */
class WingsSession implements ConsoleSession {
  private claims: Claims | undefined
  private everAuthed = false
  checker: Timer | undefined
  private readonly write: (frame: string | Socket.CloseEvent) => void
  private readonly sim: Sim
  private readonly console: Console
  private readonly serverUuid: string
  private readonly tokenContext: () => TokenContext

  constructor(write: (frame: string | Socket.CloseEvent) => void, sim: Sim, console: Console, serverUuid: string, tokenContext: () => TokenContext) {
    this.write = write
    this.sim = sim
    this.console = console
    this.serverUuid = serverUuid
    this.tokenContext = tokenContext
  }

  detach() {
    this.checker?.cancel()
    this.checker = undefined
    this.console.detach(this)
  }

  private send(event: string, args?: ReadonlyArray<string>) {
    this.write(JSON.stringify(args === undefined || args.length === 0 ? { event } : { event, args }))
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
    this.write(new Socket.CloseEvent(code, reason))
  }

  checkExpiry() {
    if (this.claims === undefined) return
    const exp = claimNumber(this.claims, "exp") ?? 0
    const left = exp * 1000 - this.sim.clock.now()
    if (left <= 0) this.send("token expired")
    else if (left <= 60_000) this.send("token expiring")
  }

  onFrame(data: string) {
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

/**
 * Serves one upgraded console socket until either side closes it: frames are read in order, and what the session
 * sends goes through one queue to the socket (the console delivers from timers and other requests, synchronously).
 */
export const serveConsoleSocket = (
  socket: Socket.Socket,
  sim: Sim,
  console: Console,
  serverUuid: string,
  tokenContext: () => TokenContext
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const reader = yield* socket.reader
    const writer = yield* socket.writer
    const outbox = yield* Queue.unbounded<string | Socket.CloseEvent>()
    const session = new WingsSession((frame) => void Queue.offerUnsafe(outbox, frame), sim, console, serverUuid, tokenContext)
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        console.attach(session)
        const period = Math.min(30_000, Math.max(10, sim.settings.wingsTokenTtlMs / 4))
        session.checker = sim.clock.every(period, () => session.checkExpiry())
      }),
      () => Effect.sync(() => session.detach())
    )
    yield* Queue.take(outbox).pipe(Effect.flatMap(writer.write), Effect.forever, Effect.ignore, Effect.forkScoped)
    // Text frames only; a binary one is ignored. The loop ends when the socket closes or fails.
    yield* reader.pull.pipe(
      Effect.flatMap((frames) =>
        Effect.sync(() => {
          for (const frame of frames) if (typeof frame === "string") session.onFrame(frame)
        })
      ),
      Effect.forever
    )
  }).pipe(Effect.ignore)
