// One server's process as Wings runs it (reference/pterodactyl.md §3.3, §3.5): the power state machine
// (offline → starting → running → stopping → offline), the console log, ~1/s stats while running, a toy Minecraft
// command interpreter, and the fan-out of events to the console sockets attached to this server.
import type { SimClock, Timer } from "./SimClock.ts"

export type PowerState = "offline" | "starting" | "running" | "stopping"
export type PowerAction = "start" | "stop" | "restart" | "kill"

/** An attached console socket; it drops what its token does not allow or when it is not authenticated. */
export interface ConsoleSession {
  deliver(event: string, args?: ReadonlyArray<string>, permission?: string): void
  close(code: number, reason: string): void
}

const LOG_KEEP = 150
const STARTUP_STEP_MS = 50
const STOP_MS = 100
const STATS_EVERY_MS = 1000

const startupLines = (jar: string) => [
  "[Pterodactyl Daemon]: Checking server disk space usage, this could take a few seconds...",
  "[Pterodactyl Daemon]: Updating process configuration files...",
  "[Pterodactyl Daemon]: Ensuring file permissions are set correctly, this could take a few seconds...",
  "container@pterodactyl~ java -version",
  "openjdk version \"17.0.10\" 2024-01-16",
  `container@pterodactyl~ java -Xms128M -jar ${jar}`,
  "[Server thread/INFO]: Starting minecraft server version 1.20.4",
  "[Server thread/INFO]: Preparing level \"world\""
]

export class Console {
  state: PowerState = "offline"
  readonly sessions = new Set<ConsoleSession>()
  private readonly log: Array<string> = []
  private readonly pending = new Set<Timer>()
  private statsTimer: Timer | undefined
  private startedAt = 0
  private readonly clock: SimClock
  private readonly info: () => { readonly uuid: string; readonly suspended: boolean; readonly memoryMiB: number; readonly jar: string; readonly diskBytes: number }

  constructor(clock: SimClock, info: Console["info"]) {
    this.clock = clock
    this.info = info
  }

  broadcast(event: string, args?: ReadonlyArray<string>, permission?: string): void {
    for (const s of this.sessions) s.deliver(event, args, permission)
  }

  line(text: string): void {
    this.log.push(text)
    if (this.log.length > LOG_KEEP) this.log.splice(0, this.log.length - LOG_KEEP)
    this.broadcast("console output", [text])
  }

  /** The last lines, only while running (`send logs`, §3.3). */
  recentLogs(): ReadonlyArray<string> {
    return this.state === "running" ? [...this.log] : []
  }

  stats(): string {
    return JSON.stringify(this.statsObject())
  }

  statsObject() {
    const running = this.state === "running" || this.state === "starting"
    return {
      memory_bytes: running ? 512 * 1024 * 1024 : 0,
      memory_limit_bytes: this.info().memoryMiB * 1024 * 1024,
      cpu_absolute: running ? 12.5 : 0,
      network: { rx_bytes: running ? 1024 : 0, tx_bytes: running ? 2048 : 0 },
      uptime: this.state === "running" ? this.clock.now() - this.startedAt : 0,
      state: this.state,
      disk_bytes: this.info().diskBytes
    }
  }

  attach(session: ConsoleSession): void {
    this.sessions.add(session)
    this.tickStats()
  }

  detach(session: ConsoleSession): void {
    this.sessions.delete(session)
    this.tickStats()
  }

  private setState(state: PowerState) {
    this.state = state
    this.broadcast("status", [state])
    if (state === "running") this.startedAt = this.clock.now()
    this.tickStats()
  }

  /**
   * Stats every second while running, only while someone listens: a game left running for a simulated month costs
   * nothing on a test clock.
   */
  private tickStats() {
    if (this.state === "running" && this.sessions.size > 0) {
      this.statsTimer ??= this.clock.every(STATS_EVERY_MS, () => this.broadcast("stats", [this.stats()]))
    } else if (this.statsTimer !== undefined) {
      this.statsTimer.cancel()
      this.statsTimer = undefined
    }
  }

  private after(ms: number, f: () => void) {
    const timer = this.clock.later(ms, () => {
      this.pending.delete(timer)
      f()
    })
    this.pending.add(timer)
  }

  private cancelPending() {
    for (const t of this.pending) t.cancel()
    this.pending.clear()
  }

  /** Applies a power action; the refusal text when Wings refuses it (start/restart while suspended). */
  power(action: PowerAction): string | undefined {
    if ((action === "start" || action === "restart") && this.info().suspended) {
      return "Cannot start server instance while it is suspended."
    }
    switch (action) {
      case "start":
        if (this.state === "offline") this.boot()
        return undefined
      case "stop":
        if (this.state === "running" || this.state === "starting") this.halt(() => undefined)
        return undefined
      case "restart":
        if (this.state === "offline") this.boot()
        else this.halt(() => this.boot())
        return undefined
      case "kill":
        this.cancelPending()
        if (this.state !== "offline") this.setState("offline")
        return undefined
    }
  }

  private boot() {
    this.cancelPending()
    this.setState("starting")
    const lines = startupLines(this.info().jar)
    lines.forEach((text, i) => this.after(i * STARTUP_STEP_MS, () => this.line(text)))
    this.after(lines.length * STARTUP_STEP_MS, () => {
      this.line("[Server thread/INFO]: Done (2.345s)! For help, type \"help\"")
      this.setState("running")
    })
  }

  private halt(then: () => void) {
    this.cancelPending()
    this.setState("stopping")
    this.line("[Server thread/INFO]: Stopping server")
    this.after(STOP_MS, () => {
      this.setState("offline")
      then()
    })
  }

  /** Runs a console command; false when the server is not running (Wings ignores it, the panel answers 502). */
  command(text: string): boolean {
    if (this.state !== "running") return false
    this.line(text)
    const [verb = "", ...rest] = text.trim().split(/\s+/)
    switch (verb.toLowerCase()) {
      case "say":
        this.line(`[Server thread/INFO]: [Server] ${rest.join(" ")}`)
        break
      case "help":
        for (const l of ["/help [<page>]", "/list", "/say <message>", "/stop"]) this.line(`[Server thread/INFO]: ${l}`)
        break
      case "list":
        this.line("[Server thread/INFO]: There are 0 of a max of 20 players online: ")
        break
      case "stop":
        this.halt(() => undefined)
        break
      default:
        this.line("[Server thread/INFO]: Unknown command. Type \"help\" for help.")
    }
    return true
  }

  /** The server is gone: tell the sockets and close them (§3.3 `deleted`, close 1001). */
  deleted(): void {
    this.shutdown()
    this.broadcast("deleted", ["null"])
    for (const s of [...this.sessions]) s.close(1001, "server deleted")
  }

  /** Suspension: Wings stops the process; newer Wings (Pelican port of the 2025 fixes, UNVERIFIED upstream 1.11)
   * also closes every console socket with 4409. The sandbox follows the newer behaviour. */
  suspended(): void {
    if (this.state !== "offline") this.halt(() => undefined)
    for (const s of [...this.sessions]) s.close(4409, "server is suspended")
  }

  shutdown(): void {
    this.cancelPending()
    if (this.statsTimer !== undefined) this.statsTimer.cancel()
    this.statsTimer = undefined
    this.state = "offline"
  }
}
