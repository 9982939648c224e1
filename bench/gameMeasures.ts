// (h) The game console relay against a direct Wings console to the same server: output throughput of a burst of
// `say` commands and single-command round trips. (i) A large file downloaded through the relay against straight
// from the node's signed URL, with the server's memory sampled meanwhile. Both paths end in this process, which
// also runs the sandbox panel and its Wings, so they pay the upstream alike and differ only by the server's hop.
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { request as httpGet } from "node:http"
import { resolve as resolvePath } from "node:path"
import { performance } from "node:perf_hooks"
import WebSocket from "ws"
import type { SandboxPterodactyl } from "../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { percentile } from "./consoleSocket.ts"
import { type CpuCores, cpuMsOf } from "./cpu.ts"
import type { Target } from "./measures.ts"
import { decodeConsoleGrant, signedDownloadUrl, wingsGrant } from "./gameUpstream.ts"
import { memoryOf, progress } from "./system.ts"

export type Path = "relay" | "direct"

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
export const median = (values: ReadonlyArray<number>) => percentile([...values].sort((a, b) => a - b), 0.5)

/**
 * An open console speaking the Wings event protocol. Each frame is one whole JSON event, so a wait is a test on
 * each frame's raw text as it arrives (no polling, no parsing of the megabytes a burst brings back).
 */
export class GameSocket {
  readonly path: Path
  private readonly ws: WebSocket
  private waiter: { readonly match: (text: string) => boolean; readonly resolve: () => void } | undefined
  /** Bytes of every frame received so far. */
  received = 0
  readonly closed: Promise<void>

  constructor(path: Path, ws: WebSocket) {
    this.path = path
    this.ws = ws
    this.closed = new Promise((resolve) => ws.once("close", () => resolve()))
    ws.on("message", (data: Buffer) => {
      this.received += data.byteLength
      const waiter = this.waiter
      if (waiter !== undefined && waiter.match(data.toString("utf8"))) {
        this.waiter = undefined
        waiter.resolve()
      }
    })
  }

  /** Waits for the first frame from now on whose text satisfies `match`; rejects after `timeoutMs`. */
  until(what: string, match: (text: string) => boolean, timeoutMs = 10_000): Promise<void> {
    if (this.waiter !== undefined) return Promise.reject(new Error("one wait at a time"))
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined
        reject(new Error(`${this.path} console: no ${what} within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiter = { match, resolve: () => {
        clearTimeout(timer)
        resolve()
      } }
    })
  }

  send(event: string, ...args: Array<string>) {
    this.ws.send(JSON.stringify(args.length === 0 ? { event } : { event, args }))
  }

  async close() {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000, "done")
    await Promise.race([this.closed, sleep(5_000)])
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.terminate()
  }
}

const isEvent = (text: string, event: string, arg?: string) => {
  if (!text.includes(event)) return false
  let frame: unknown
  try {
    frame = JSON.parse(text)
  } catch {
    return false
  }
  if (typeof frame !== "object" || frame === null || !("event" in frame) || frame.event !== event) return false
  return arg === undefined || ("args" in frame && Array.isArray(frame.args) && frame.args[0] === arg)
}

const connect = async (path: Path, url: string, headers: Record<string, string>): Promise<GameSocket> => {
  const ws = new WebSocket(url, { headers, handshakeTimeout: 15_000 })
  const socket = new GameSocket(path, ws)
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve())
    ws.once("error", (e) => reject(new Error(`the ${path} console: ${e.message}`)))
    ws.once("unexpected-response", (_request, response) => reject(new Error(`the ${path} console answered ${response.statusCode}`)))
  })
  return socket
}

export interface ConsoleTarget {
  readonly customer: Target
  /** The server's PUBLIC_URL: the only Origin its console accepts. */
  readonly origin: string
  readonly identifier: string
  readonly uuid: string
  readonly panel: SandboxPterodactyl
}

/**
 * Opens and authenticates a console. Relay: our token from `GET /api/client/servers/:identifier/websocket`, then
 * our socket (reached on the address the server listens on: its `socket` names the public origin). Direct: the
 * panel's token and Wings socket, opened with the panel's URL as Origin (reference/pterodactyl.md §3.2).
 */
export const openConsole = async (target: ConsoleTarget, path: Path): Promise<GameSocket> => {
  let socket: GameSocket
  let token: string
  if (path === "relay") {
    const { url, cookie } = target.customer
    const response = await fetch(`${url}/api/client/servers/${target.identifier}/websocket`, {
      headers: { cookie },
      signal: AbortSignal.timeout(10_000)
    })
    const body: unknown = await response.json()
    if (response.status !== 200) throw new Error(`GET /api/client/servers/:id/websocket answered ${response.status}`)
    const { data } = decodeConsoleGrant(body)
    token = data.token
    socket = await connect("relay", `${url.replace(/^http/, "ws")}${new URL(data.socket).pathname}`, { Origin: target.origin, Cookie: cookie })
  } else {
    const grant = await wingsGrant(target.panel, target.uuid)
    token = grant.token
    socket = await connect("direct", grant.socket, { Origin: target.panel.url })
  }
  const authenticated = socket.until("auth success", (text) => isEvent(text, "auth success"))
  socket.send("auth", token)
  await authenticated
  return socket
}

/** Starts the game server through the relay and waits until Wings says it runs. */
export const startGameServer = async (target: ConsoleTarget) => {
  const socket = await openConsole(target, "relay")
  try {
    const running = socket.until("status running", (text) => isEvent(text, "status", "running"), 30_000)
    socket.send("set state", "start")
    await running
  } finally {
    await socket.close()
  }
}

export interface Burst {
  /** Bytes of the frames received from the first command sent to the marker's output. */
  readonly bytes: number
  readonly ms: number
  readonly mibPerSecond: number
  readonly commands: number
}

/**
 * Sends `commands` frames of `say <payload>` at once, then a marker, and waits for the marker's `[Server]` line.
 * Each command brings back two `console output` lines: its echo and the server's `[Server] <payload>`.
 */
const sayBurst = async (s: GameSocket, commands: number, payloadBytes: number): Promise<Burst> => {
  const payload = randomBytes(payloadBytes).toString("base64url").slice(0, payloadBytes)
  // `.` is not in base64url: no payload line can be taken for the marker's.
  const marker = `[Server] END.${randomBytes(6).toString("hex")}`
  const done = s.until(`the burst's marker`, (text) => text.includes(marker), 120_000)
  const before = s.received
  const started = performance.now()
  for (let i = 0; i < commands; i++) s.send("send command", `say ${payload}`)
  s.send("send command", `say ${marker.slice("[Server] ".length)}`)
  await done
  const ms = performance.now() - started
  const bytes = s.received - before
  return { bytes, ms, mibPerSecond: bytes / 2 ** 20 / (ms / 1000), commands: commands + 1 }
}

/** One `say` at a time, timed from the frame sent to its `[Server]` line. */
const roundTrips = async (s: GameSocket, count: number): Promise<Array<number>> => {
  const tag = randomBytes(4).toString("hex")
  const samples: Array<number> = []
  for (let i = 0; i < count; i++) {
    const line = `[Server] rt.${tag}.${i}.`
    const back = s.until(`round trip ${i}`, (text) => text.includes(line))
    const started = performance.now()
    s.send("send command", `say ${line.slice("[Server] ".length)}`)
    await back
    samples.push(performance.now() - started)
  }
  return samples.sort((a, b) => a - b)
}

export interface ConsoleShape {
  readonly commands: number
  readonly payloadBytes: number
  readonly roundTrips: number
}

export interface ConsoleRound {
  readonly path: Path
  readonly burst: Burst
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly cores: CpuCores
}

/**
 * The sandbox copies a server's output to every console attached to it, so a session starts only once no other
 * is open (the relay closes its Wings socket when ours closes; this waits for it, bounded).
 */
const alone = async (target: ConsoleTarget) => {
  const deadline = performance.now() + 10_000
  while (target.panel.control.consoleSockets(target.uuid) > 0) {
    if (performance.now() > deadline) throw new Error("a console socket of the bench server stayed open")
    await sleep(20)
  }
}

const consoleRound = async (target: ConsoleTarget, path: Path, shape: ConsoleShape): Promise<ConsoleRound> => {
  await alone(target)
  const s = await openConsole(target, path)
  try {
    await sayBurst(s, 200, shape.payloadBytes) // warm-up: connections, JIT, buffers
    await roundTrips(s, 20)
    const cpu = await target.customer.openCpuWindow()
    const burst = await sayBurst(s, shape.commands, shape.payloadBytes)
    const samples = await roundTrips(s, shape.roundTrips)
    const { cores } = await cpu.stop()
    return { path, burst, p50Ms: percentile(samples, 0.5), p99Ms: percentile(samples, 0.99), maxMs: samples.at(-1) ?? Number.NaN, cores }
  } finally {
    await s.close()
  }
}

const medianCores = (all: ReadonlyArray<{ readonly cores: CpuCores }>): CpuCores => ({
  server: median(all.map((r) => r.cores.server)),
  database: median(all.map((r) => r.cores.database)),
  bench: median(all.map((r) => r.cores.bench)),
  other: median(all.map((r) => r.cores.other))
})

const consoleSummary = (rounds: ReadonlyArray<ConsoleRound>, path: Path) => {
  const mine = rounds.filter((r) => r.path === path)
  const mid = (pick: (r: ConsoleRound) => number) => median(mine.map(pick))
  return {
    mibPerSecond: mid((r) => r.burst.mibPerSecond),
    burstBytes: mid((r) => r.burst.bytes),
    burstMs: mid((r) => r.burst.ms),
    p50Ms: mid((r) => r.p50Ms),
    p99Ms: mid((r) => r.p99Ms),
    maxMs: Math.max(...mine.map((r) => r.maxMs)),
    cores: medianCores(mine),
    runs: mine.map((r) => ({ mibPerSecond: r.burst.mibPerSecond, ms: r.burst.ms, p50Ms: r.p50Ms, p99Ms: r.p99Ms }))
  }
}

/** Alternates relay and direct rounds, so drift on a shared machine touches both; each figure is the rounds' median. */
export const consoleRelayVersusDirect = async (target: ConsoleTarget, rounds: number, shape: ConsoleShape) => {
  const all: Array<ConsoleRound> = []
  for (let round = 0; round < rounds; round++) {
    for (const path of ["relay", "direct"] as const) {
      progress(`    console round ${round + 1}/${rounds}: ${path}`)
      all.push(await consoleRound(target, path, shape))
    }
  }
  const relay = consoleSummary(all, "relay")
  const direct = consoleSummary(all, "direct")
  return {
    shape,
    rounds,
    relay,
    direct,
    ratio: relay.mibPerSecond / direct.mibPerSecond,
    addedP50Ms: relay.p50Ms - direct.p50Ms,
    addedP99Ms: relay.p99Ms - direct.p99Ms
  }
}

/** Downloads also go through the bench's bare reference relay (bench/bareRelay.ts). */
export type DownloadPath = Path | "bare"

/** The bare relay process, started for (i) and stopped after it. */
interface BareRelay {
  readonly url: string
  readonly pid: number
  stop(): void
}

const startBareRelay = () =>
  new Promise<BareRelay>((resolve, reject) => {
    const child = spawn(process.execPath, [resolvePath(import.meta.dirname, "bareRelay.ts")], { stdio: ["ignore", "pipe", "inherit"] })
    const timer = setTimeout(() => reject(new Error("the bare relay did not start within 10 s")), 10_000)
    child.once("error", reject)
    child.stdout.once("data", (line: Buffer) => {
      clearTimeout(timer)
      resolve({ url: `http://127.0.0.1:${Number(String(line).trim())}`, pid: child.pid ?? 0, stop: () => void child.kill("SIGTERM") })
    })
  })

export interface Download {
  readonly path: DownloadPath
  readonly bytes: number
  readonly ms: number
  readonly mibPerSecond: number
  /** The bytes were those of the sandbox's synthetic file (byte i = i mod 251), checked at each chunk's start. */
  readonly intact: boolean
  readonly status: number
  /** The server's VmRSS before the request, the highest sample during it (every ~50 ms), and just after. */
  readonly rssBeforeMiB: number
  readonly rssPeakMiB: number
  readonly rssAfterMiB: number
  readonly samples: number
  readonly cores: CpuCores
  /** CPU time of the process doing the hop (our server, or the bare relay) per MiB moved; 0 on the direct path. */
  readonly hopCpuMsPerMiB: number
}

/** GETs `url` and counts the body as it arrives, holding none of it (node:http: the leanest client for both paths). */
const drain = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; bytes: number; intact: boolean }>((resolve, reject) => {
    const request = httpGet(url, { headers, timeout: 120_000 }, (response) => {
      let bytes = 0
      let intact = true
      response.on("data", (chunk: Buffer) => {
        if (chunk[0] !== bytes % 251) intact = false
        bytes += chunk.byteLength
      })
      response.once("end", () => resolve({ status: response.statusCode ?? 0, bytes, intact }))
      response.once("error", reject)
    })
    request.once("timeout", () => request.destroy(new Error(`GET ${new URL(url).pathname}: no progress for 120 s`)))
    request.once("error", reject)
    request.end()
  })

const download = async (target: ConsoleTarget, path: DownloadPath, file: string, bare?: BareRelay): Promise<Download> => {
  const { pid } = target.customer
  if (path === "bare" && bare === undefined) throw new Error("the bare path needs the bare relay running")
  const url = path === "relay"
    ? `${target.customer.url}/api/client/servers/${target.identifier}/files/download/stream?file=${encodeURIComponent(file)}`
    : path === "bare"
    ? `${bare?.url}/?to=${encodeURIComponent(await signedDownloadUrl(target.panel, target.uuid, file))}`
    : await signedDownloadUrl(target.panel, target.uuid, file)
  const hopPid = path === "relay" ? pid : path === "bare" ? bare?.pid : undefined
  const hopBefore = hopPid === undefined ? 0 : await cpuMsOf(hopPid)
  const headers: Record<string, string> = path === "relay" ? { cookie: target.customer.cookie } : {}
  const before = await memoryOf(pid)
  let peak = before.rssMiB
  let samples = 0
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      await sleep(50)
      const now = await memoryOf(pid)
      peak = Math.max(peak, now.rssMiB)
      samples++
    }
  })()
  const cpu = await target.customer.openCpuWindow()
  const started = performance.now()
  try {
    const got = await drain(url, headers)
    const ms = performance.now() - started
    const { cores } = await cpu.stop()
    const hopMs = hopPid === undefined ? 0 : (await cpuMsOf(hopPid)) - hopBefore
    sampling = false
    await sampler
    const after = await memoryOf(pid)
    return {
      path,
      ...got,
      ms,
      mibPerSecond: got.bytes / 2 ** 20 / (ms / 1000),
      rssBeforeMiB: before.rssMiB,
      rssPeakMiB: Math.max(peak, after.rssMiB),
      rssAfterMiB: after.rssMiB,
      samples,
      cores,
      hopCpuMsPerMiB: hopMs / (got.bytes / 2 ** 20)
    }
  } finally {
    sampling = false
  }
}

/** The whole file came back: HTTP 200, every byte, the synthetic pattern intact. */
const isWhole = (d: Download, fileBytes: number) => d.status === 200 && d.bytes === fileBytes && d.intact

/** `rounds` downloads per path, alternating; throughput and memory figures are the rounds' medians. */
export const downloadRelayVersusDirect = async (target: ConsoleTarget, file: string, fileBytes: number, rounds: number) => {
  const all: Array<Download> = []
  const warmUp: Array<Download> = []
  const bare = await startBareRelay()
  try {
    // The first round warms every path up (JIT, connection pools); its figures are not counted.
    for (let round = 0; round <= rounds; round++) {
      for (const path of ["relay", "direct", "bare"] as const) {
        progress(`    download ${round === 0 ? "warm-up" : `round ${round}/${rounds}`}: ${path}`)
        const measured = await download(target, path, file, bare)
        ;(round === 0 ? warmUp : all).push(measured)
      }
    }
  } finally {
    bare.stop()
  }
  const of = (path: DownloadPath) => all.filter((d) => d.path === path)
  const relay = of("relay")
  const direct = of("direct")
  const relayMiBps = median(relay.map((d) => d.mibPerSecond))
  const directMiBps = median(direct.map((d) => d.mibPerSecond))
  const bareMiBps = median(of("bare").map((d) => d.mibPerSecond))
  return {
    fileBytes,
    rounds,
    relayMiBps,
    directMiBps,
    bareMiBps,
    ratio: relayMiBps / directMiBps,
    bareRatio: bareMiBps / directMiBps,
    relayCpuMsPerMiB: median(relay.map((d) => d.hopCpuMsPerMiB)),
    bareCpuMsPerMiB: median(of("bare").map((d) => d.hopCpuMsPerMiB)),
    rssBeforeMiB: median(relay.map((d) => d.rssBeforeMiB)),
    rssPeakMiB: median(relay.map((d) => d.rssPeakMiB)),
    rssAfterMiB: median(relay.map((d) => d.rssAfterMiB)),
    /** Peak − before: the median, and the largest, over the relay rounds. */
    growthMiB: median(relay.map((d) => d.rssPeakMiB - d.rssBeforeMiB)),
    worstGrowthMiB: Math.max(...relay.map((d) => d.rssPeakMiB - d.rssBeforeMiB)),
    relayCores: medianCores(relay),
    directCores: medianCores(direct),
    bareCores: medianCores(of("bare")),
    valid: [...warmUp, ...all].every((d) => isWhole(d, fileBytes)),
    runs: all
  }
}

/** One download through the relay alone (a much larger file): does the server's memory grow with the bytes? */
export const relayOnce = async (target: ConsoleTarget, file: string, fileBytes: number) => {
  const got = await download(target, "relay", file)
  return { ...got, valid: isWhole(got, fileBytes), growthMiB: got.rssPeakMiB - got.rssBeforeMiB }
}
