// The game-server part of `npm run bench`: the console relay and the file download relay, each against the same
// path taken straight to the bench's own sandbox Pterodactyl (registered as panel `bench-panel`), on one game
// server ordered through the HTTP API of the same server process as the other parts.
import { Schema } from "effect"
import { payCheckout } from "./checkout.ts"
import { GameServerView, OrderView } from "../adapters/http/views.ts"
import { consoleRelayVersusDirect, type ConsoleTarget, downloadRelayVersusDirect, relayOnce, startGameServer } from "./gameMeasures.ts"
import { type BenchPanel, GAME_PLAN } from "./gameUpstream.ts"
import type { Target } from "./measures.ts"
import { fixed, judge, mib, ms, percent, type Section } from "./report.ts"
import { progress, type RunningServer } from "./system.ts"
import { followOrder } from "./vpsClient.ts"

export interface GameSettings {
  /** `say` commands in one burst (h). */
  readonly commands: number
  /** Single-command round trips per console round (h). */
  readonly roundTrips: number
  /** Console rounds per path (h). */
  readonly rounds: number
  /** Size of the file downloaded (i), in MiB. */
  readonly fileMiB: number
  /** Measured downloads per path (i), after one warm-up round that is not counted. */
  readonly downloadRounds: number
  /** Size of the one larger file relayed to see whether memory grows with the bytes (i), in MiB. */
  readonly largeFileMiB: number
}

const PAYLOAD_BYTES = 100
const FILE = "/big.bin"
const LARGE_FILE = "/bigger.bin"
/** V8 frees the buffers of socket reads at its next GC, which external allocations trigger about every 64 MiB. */
const FLAT_RSS_MIB = 64

const mibps = (n: number) => `${fixed(n, n < 10 ? 2 : 1)} MiB/s`

const decodePlaced = Schema.decodeUnknownSync(Schema.Struct({ order: OrderView }))
const decodeGameServer = Schema.decodeUnknownSync(Schema.Struct({ gameServer: GameServerView }))

const json = async (response: Response, expected: number, what: string): Promise<unknown> => {
  const text = await response.text()
  if (response.status !== expected) throw new Error(`${what} answered ${response.status}: ${text.slice(0, 300)}`)
  return JSON.parse(text)
}

/** Orders the bench plan over the HTTP API and follows it; returns the game server's identifier. */
const orderGameServer = async (customer: Target) => {
  const placed = decodePlaced(await json(
    await fetch(`${customer.url}/api/orders`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: customer.cookie },
      body: JSON.stringify({ planId: GAME_PLAN, expressStartConsent: true, options: {} }),
      signal: AbortSignal.timeout(30_000)
    }),
    201,
    "POST /api/orders"
  )).order
  await payCheckout(placed.checkoutUrl)
  const { order } = await followOrder(customer, placed.id, 50, 60_000)
  if (order.status !== "completed" || order.serviceId === undefined) {
    throw new Error(`the game order ${order.status}: ${order.failureReason ?? "no game server"}`)
  }
  const response = await fetch(`${customer.url}/api/game-servers/${order.serviceId}`, {
    headers: { cookie: customer.cookie },
    signal: AbortSignal.timeout(10_000)
  })
  return decodeGameServer(await json(response, 200, "GET /api/game-servers/:id")).gameServer
}

export const runGameBench = async (server: RunningServer, customer: Target, panel: BenchPanel, settings: GameSettings) => {
  progress("ordering a game server")
  const gameServer = await orderGameServer(customer)
  const uuid = panel.sandbox.control.servers().find((s) => s.identifier === gameServer.identifier)?.uuid
  if (uuid === undefined) throw new Error(`the sandbox panel has no server ${gameServer.identifier}`)
  const target: ConsoleTarget = {
    customer,
    // bench/system.ts starts the server with PUBLIC_URL http://localhost:<port>.
    origin: `http://localhost:${new URL(server.url).port}`,
    identifier: gameServer.identifier,
    uuid,
    panel: panel.sandbox
  }
  await startGameServer(target)

  const shape = { commands: settings.commands, payloadBytes: PAYLOAD_BYTES, roundTrips: settings.roundTrips }
  progress(`(h) game console: relay vs direct, ${settings.rounds} rounds each, ${shape.commands} commands and ${shape.roundTrips} round trips per round`)
  const h = await consoleRelayVersusDirect(target, settings.rounds, shape)

  const fileBytes = settings.fileMiB * 2 ** 20
  panel.sandbox.control.putFile(uuid, FILE, { syntheticBytes: fileBytes })
  progress(`(i) ${settings.fileMiB} MiB download: relay vs direct vs a bare relay, ${settings.downloadRounds} rounds each after a warm-up round`)
  const i = await downloadRelayVersusDirect(target, FILE, fileBytes, settings.downloadRounds)
  const largeBytes = settings.largeFileMiB * 2 ** 20
  panel.sandbox.control.putFile(uuid, LARGE_FILE, { syntheticBytes: largeBytes })
  progress(`(i) ${settings.largeFileMiB} MiB download through the relay, once`)
  const large = await relayOnce(target, LARGE_FILE, largeBytes)

  const cores = (c: { server: number; database: number; bench: number; other: number }) =>
    `server ${fixed(c.server, 2)}, Postgres ${fixed(c.database, 2)}, bench with the sandbox ${fixed(c.bench, 2)}, other processes ${fixed(c.other, 2)}`
  const sections: Array<Section> = [
    {
      title: "(h) game console relay (/api/client/servers/:id/ws) vs a direct Wings console, same game server",
      lines: [
        { label: `output, ${shape.commands} × say ${PAYLOAD_BYTES} B: direct`, value: mibps(h.direct.mibPerSecond) },
        { label: `output, ${shape.commands} × say ${PAYLOAD_BYTES} B: relay`, value: mibps(h.relay.mibPerSecond) },
        { label: "ratio relay / direct", value: percent(h.ratio), target: "≥ 80 %", verdict: judge(h.ratio >= 0.8, true) },
        { label: "command round trip p50: direct / relay", value: `${ms(h.direct.p50Ms)} / ${ms(h.relay.p50Ms)}` },
        { label: "command round trip p99: direct", value: ms(h.direct.p99Ms) },
        { label: "command round trip p99: relay", value: ms(h.relay.p99Ms) },
        { label: "added p99", value: ms(h.addedP99Ms), target: "< 2 ms", verdict: judge(h.addedP99Ms < 2, true) }
      ],
      notes: [
        `each \`say\` brings back two \`console output\` frames (its echo and the [Server] line): ${mib(h.relay.burstBytes / 2 ** 20)} of frames per burst,` +
          ` timed from its first frame sent to the marker's line: ${ms(h.direct.burstMs)} direct, ${ms(h.relay.burstMs)} relay (medians)`,
        `medians of ${h.rounds} rounds per path, alternated, one console open at a time: burst relay ${h.relay.runs.map((r) => fixed(r.mibPerSecond, 2)).join(" / ")},` +
          ` direct ${h.direct.runs.map((r) => fixed(r.mibPerSecond, 2)).join(" / ")} MiB/s`,
        `round trips: send → its [Server] line, ${shape.roundTrips} per round; p99 per round relay ${h.relay.runs.map((r) => fixed(r.p99Ms, 2)).join(" / ")},` +
          ` direct ${h.direct.runs.map((r) => fixed(r.p99Ms, 2)).join(" / ")} ms; max relay ${ms(h.relay.maxMs)}, direct ${ms(h.direct.maxMs)}`,
        `cores used (median of rounds), relay: ${cores(h.relay.cores)}`,
        `cores used (median of rounds), direct: ${cores(h.direct.cores)}`,
        "the sandbox panel and Wings run in the bench process, so both paths pay them alike; the targets are those of the VPS console (f)"
      ]
    },
    {
      title: `(i) ${settings.fileMiB} MiB file download: relay (…/files/download/stream) vs the node's signed URL`,
      lines: [
        { label: "download: direct", value: mibps(i.directMiBps) },
        { label: "download: relay", value: mibps(i.relayMiBps) },
        { label: "ratio relay / direct", value: percent(i.ratio), target: "≥ 80 %", verdict: judge(i.ratio >= 0.8, i.valid) },
        { label: "download: bare node:http relay (reference)", value: mibps(i.bareMiBps) },
        { label: "ratio bare relay / direct (this machine's ceiling)", value: percent(i.bareRatio) },
        { label: "ratio relay / bare relay", value: percent(i.relayMiBps / i.bareMiBps) },
        { label: "CPU per MiB moved: server / bare relay", value: `${ms(i.relayCpuMsPerMiB)} / ${ms(i.bareCpuMsPerMiB)}` },
        { label: "server VmRSS before / peak / after", value: `${fixed(i.rssBeforeMiB)} / ${fixed(i.rssPeakMiB)} / ${mib(i.rssAfterMiB)}` },
        { label: `RSS growth during a ${settings.fileMiB} MiB relay (peak − before, median)`, value: mib(i.growthMiB) },
        {
          label: `RSS growth during one ${settings.largeFileMiB} MiB relay`,
          value: mib(large.growthMiB),
          target: `< ${FLAT_RSS_MIB} MiB`,
          verdict: judge(large.growthMiB < FLAT_RSS_MIB, large.valid)
        },
        { label: `download: relay of ${settings.largeFileMiB} MiB`, value: mibps(large.mibPerSecond) }
      ],
      notes: [
        `medians of ${i.rounds} rounds per path, alternated: relay ${i.runs.filter((r) => r.path === "relay").map((r) => fixed(r.mibPerSecond)).join(" / ")},` +
          ` direct ${i.runs.filter((r) => r.path === "direct").map((r) => fixed(r.mibPerSecond)).join(" / ")},` +
          ` bare ${i.runs.filter((r) => r.path === "bare").map((r) => fixed(r.mibPerSecond)).join(" / ")} MiB/s`,
        "bare relay: bench/bareRelay.ts, one node:http process that GETs the signed URL and pipes the answer (no session," +
          " ownership check or panel call): what one extra hop costs on this machine, whatever the relay",
        `RSS: the server's VmRSS read every ~50 ms during each relay download; medians of the rounds; growth per round` +
          ` ${i.runs.filter((r) => r.path === "relay").map((r) => fixed(r.rssPeakMiB - r.rssBeforeMiB)).join(" / ")} MiB (worst ${mib(i.worstGrowthMiB)});` +
          ` memory that grew with the bytes would show about ${fixed(settings.largeFileMiB / settings.fileMiB, 0)} times as much on the larger file;` +
          ` target: below ${FLAT_RSS_MIB} MiB, the external memory after which V8 collects (the read buffers wait for it)`,
        `cores used (median of rounds), relay: ${cores(i.relayCores)}`,
        `cores used (median of rounds), direct: ${cores(i.directCores)}`,
        `cores used (median of rounds), bare relay (counted in "other processes"): ${cores(i.bareCores)}`,
        `every body checked: ${i.fileBytes} bytes, HTTP 200, the synthetic pattern at each chunk's start — ${i.valid ? "all intact" : "NOT intact (INVALID)"};` +
          ` the ${settings.largeFileMiB} MiB one ${large.valid ? "intact" : "NOT intact (INVALID)"}`,
        "the bench reads each body with node:http, counting it and keeping none; the node (sandbox Wings) generates the bytes as it sends them"
      ]
    }
  ]
  return { json: { gameServer: { identifier: gameServer.identifier }, console: h, download: i, largeDownload: large }, sections }
}
