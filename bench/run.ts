// `npm run bench`: one production server process on a fresh, migrated Postgres database, measured in one run
// against the targets of the session issue; prints a table and writes the same figures to bench/results/latest.json.
//
// Settings (environment): BENCH_DATABASE_URL (admin connection, default postgres://postgres@127.0.0.1:5432/postgres),
// BENCH_BCRYPT_COST (default 10), BENCH_SECONDS (length of each measured phase, default 10),
// BENCH_SERVER_NODE_OPTIONS (NODE_OPTIONS of the server only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
// BENCH_ONLY (`accounts`, `vps`, `game`, `webhooks` or `scale`: run one part; all but `scale` by default; `npm run
// bench -- scale` is BENCH_ONLY=scale), BENCH_SCALE_SAMPLES (calls per measured kind of the scale part, default 500), BENCH_SCALE_DIVISOR (divides its
// counts for a quick run, default 1),
// BENCH_WEBHOOK_CONCURRENCY
// (webhook deliveries in flight at once, default 16), BENCH_VPS_CONCURRENT (orders placed at
// once, default 100), BENCH_VPS_SEQUENTIAL (orders one after the other, default 5), BENCH_VPS_KEYSTROKES (per console
// session, three sessions per path; default 500), BENCH_GAME_COMMANDS (`say` commands in one console burst, default
// 2000), BENCH_GAME_ROUND_TRIPS (single-command round trips per console round, default 500), BENCH_GAME_ROUNDS
// (console rounds per path, default 5), BENCH_GAME_FILE_MIB (size of the downloaded file, default 100),
// BENCH_GAME_DOWNLOAD_ROUNDS (measured downloads per path after one warm-up round, default 7), BENCH_GAME_LARGE_FILE_MIB
// (the file relayed once to see whether memory grows with the bytes, default 1024).
import { randomBytes } from "node:crypto"
import { availableParallelism, cpus, loadavg } from "node:os"
import { resolve } from "node:path"
import { cpuSubject, openCpuWindow } from "./cpu.ts"
import { latencyUnderLogins, loginVersusBcrypt, memoryAfterRequests, meVersusHealth, type Target } from "./measures.ts"
import { fixed, judge, mib, ms, percent, renderTable, rps, type Section, times, writeJson } from "./report.ts"
import { runGameBench } from "./gameBench.ts"
import { type BenchPanel, startBenchPanel } from "./gameUpstream.ts"
import { runVpsBench } from "./vpsBench.ts"
import { runScaleBench } from "./scaleBench.ts"
import { runWebhookBench } from "./webhookBench.ts"
import { type BenchCluster, startBenchCluster } from "./vpsUpstream.ts"
import {
  Cleanup,
  createDatabase,
  memoryOf,
  postgresVersion,
  progress,
  runProgram,
  type RunningServer,
  startServer
} from "./system.ts"

const intEnv = (name: string, fallback: number, min: number, max: number): number => {
  const text = process.env[name]
  if (text === undefined || text === "") return fallback
  const n = Number(text)
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer in ${min}..${max}`)
  return n
}

const only = (() => {
  const text = process.argv[2] === "scale" ? "scale" : process.env["BENCH_ONLY"] ?? ""
  if (text !== "" && text !== "accounts" && text !== "vps" && text !== "game" && text !== "webhooks" && text !== "scale") {
    throw new Error("BENCH_ONLY must be accounts, vps, game, webhooks or scale")
  }
  return text === "" ? undefined : text
})()

const settings = {
  adminUrl: process.env["BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres",
  bcryptCost: intEnv("BENCH_BCRYPT_COST", 10, 4, 15),
  seconds: intEnv("BENCH_SECONDS", 10, 2, 60),
  serverNodeOptions: process.env["BENCH_SERVER_NODE_OPTIONS"],
  accounts: only === undefined || only === "accounts",
  vps: only === undefined || only === "vps",
  game: only === undefined || only === "game",
  webhooks: only === undefined || only === "webhooks",
  webhookConcurrency: intEnv("BENCH_WEBHOOK_CONCURRENCY", 16, 1, 256),
  scaleSamples: intEnv("BENCH_SCALE_SAMPLES", 500, 100, 100_000),
  scaleDivisor: intEnv("BENCH_SCALE_DIVISOR", 1, 1, 100),
  vpsSettings: {
    sequential: intEnv("BENCH_VPS_SEQUENTIAL", 5, 1, 50),
    concurrent: intEnv("BENCH_VPS_CONCURRENT", 100, 1, 400),
    keystrokes: intEnv("BENCH_VPS_KEYSTROKES", 500, 10, 5_000)
  },
  gameSettings: {
    commands: intEnv("BENCH_GAME_COMMANDS", 2_000, 10, 50_000),
    roundTrips: intEnv("BENCH_GAME_ROUND_TRIPS", 500, 10, 10_000),
    rounds: intEnv("BENCH_GAME_ROUNDS", 5, 1, 20),
    fileMiB: intEnv("BENCH_GAME_FILE_MIB", 100, 1, 2_048),
    downloadRounds: intEnv("BENCH_GAME_DOWNLOAD_ROUNDS", 7, 1, 50),
    largeFileMiB: intEnv("BENCH_GAME_LARGE_FILE_MIB", 1_024, 1, 8_192)
  }
}
const RESULTS = resolve(import.meta.dirname, "results", "latest.json")
/** The scale part's own file: it runs alone, and the other parts' figures stay in latest.json. */
const SCALE_RESULTS = resolve(import.meta.dirname, "results", "scale.json")
const HARD_LIMIT_MS = only === "scale"
  ? 30 * 60_000
  : ((settings.accounts ? 6 : 0) + (settings.vps ? 6 : 0) + (settings.game ? 5 : 0) + (settings.webhooks ? 2 : 0)) * 60_000

/** Who used the machine's cores during a phase. */
const coresUsed = (c: { server: number; database: number; bench: number; other: number }) =>
  `cores used: server ${fixed(c.server, 2)}, Postgres ${fixed(c.database, 2)}, load generator ${fixed(c.bench, 2)}, other processes ${fixed(c.other, 2)}`

const postJson = (url: string, body: unknown) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000)
  })

/** A French consumer's billing details: the bench's orders are charged 20 % VAT. */
const BILLING_PROFILE = { name: "Bench Mark", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }

/** Registers a personal account, signs in with "remember me" and saves billing details; returns the session cookie. */
const signUp = async (server: RunningServer, database: string): Promise<Target> => {
  const email = `bench-${Date.now()}@example.com`
  const password = randomBytes(18).toString("base64url")
  const registered = await postJson(`${server.url}/api/auth/register`, {
    email,
    password,
    accountType: "personal",
    firstName: "Bench",
    lastName: "Mark"
  })
  if (registered.status !== 201) throw new Error(`register answered ${registered.status}: ${await registered.text()}`)
  const loggedIn = await postJson(`${server.url}/api/auth/login`, { email, password, rememberMe: true })
  if (loggedIn.status !== 200) throw new Error(`login answered ${loggedIn.status}: ${await loggedIn.text()}`)
  const cookie = loggedIn.headers.getSetCookie().map((c) => c.split(";")[0] ?? "").find((c) => c.startsWith("zh_token="))
  if (cookie === undefined) throw new Error("login set no zh_token cookie")
  const me = await fetch(`${server.url}/api/auth/me`, { headers: { cookie }, signal: AbortSignal.timeout(10_000) })
  if (me.status !== 200) throw new Error(`/api/auth/me with the new session answered ${me.status}`)
  // Billing details before the first order (POST /api/orders answers 422 BILLING_PROFILE_REQUIRED without them).
  const profile = await fetch(`${server.url}/api/billing-profile`, {
    method: "PUT",
    headers: { cookie, "content-type": "application/json" },
    body: JSON.stringify(BILLING_PROFILE),
    signal: AbortSignal.timeout(10_000)
  })
  if (profile.status !== 200) throw new Error(`PUT /api/billing-profile answered ${profile.status}: ${await profile.text()}`)
  const subject = await cpuSubject(settings.adminUrl, database, server.pid)
  return { url: server.url, pid: server.pid, cookie, email, password, openCpuWindow: () => openCpuWindow(subject) }
}

/** The account part: (a)–(d) on the signed-in bench account. */
const runAccounts = async (target: Target) => {
  progress("(d) memory around 10,000 /me requests")
  const d = await memoryAfterRequests(target)
  progress(`(a) /healthz then /me, 50 connections, ${settings.seconds} s each after 3 s warm-ups`)
  const a = await meVersusHealth(target, settings.seconds)
  progress(`(b) /me latency at 200 req/s, idle then under 20 concurrent logins, ${settings.seconds} s each`)
  const b = await latencyUnderLogins(target, settings.seconds)
  progress(`(c) bcrypt compare timing, then logins with 8 connections for ${settings.seconds} s`)
  const c = await loginVersusBcrypt(target, settings.bcryptCost, settings.seconds)
  const end = await memoryOf(target.pid)
  const sections: Array<Section> = [
    {
      title: "(a) throughput of authenticated GET /api/auth/me vs unauthenticated GET /healthz",
      lines: [
        { label: "GET /healthz", value: rps(a.healthz.rps) },
        { label: "GET /api/auth/me (cookie)", value: rps(a.me.rps) },
        { label: "ratio me / healthz", value: percent(a.ratio), target: "≥ 60 %", verdict: judge(a.ratio >= 0.6, a.valid) }
      ],
      notes: [
        `autocannon, ${a.connections} connections, ${settings.seconds} s each; failed requests: healthz ${a.healthz.failed}, me ${a.me.failed}`,
        "every /me carries the one sign-up session cookie: a server cache keyed by token hits on each request here," +
          " while a browser moves to the re-issued token every second",
        `p99 under saturation: healthz ${ms(a.healthz.p99Ms)}, me ${ms(a.me.p99Ms)}`,
        `CPU per request, server (all threads) + Postgres: healthz ${fixed(a.healthz.serverCpuUsPerRequest, 0)} + ${fixed(a.healthz.databaseCpuUsPerRequest, 0)} µs, me ${fixed(a.me.serverCpuUsPerRequest, 0)} + ${fixed(a.me.databaseCpuUsPerRequest, 0)} µs`,
        `CPU cost ratio healthz ÷ me: ${percent(a.cpuCostRatio)} (the throughput ratio to expect where both are CPU-bound)`,
        `healthz ${coresUsed(a.healthz.cores)}`,
        `me ${coresUsed(a.me.cores)}`
      ]
    },
    {
      title: "(b) p99 of GET /api/auth/me at 200 req/s while 20 logins run concurrently vs idle",
      lines: [
        { label: "idle p99", value: ms(b.idle.p99Ms) },
        { label: "p99 with 20 logins in flight", value: ms(b.loaded.p99Ms) },
        { label: "ratio loaded / idle", value: times(b.ratio), target: "≤ 3 ×", verdict: judge(b.ratio <= 3 && b.heldRate, b.valid) }
      ],
      notes: [
        `p50 idle ${ms(b.idle.p50Ms)} → loaded ${ms(b.loaded.p50Ms)}; max idle ${ms(b.idle.maxMs)} → loaded ${ms(b.loaded.maxMs)}`,
        `paced at ${b.rate} req/s on ${b.connections} keep-alive connections; a due request is skipped while all are waiting` +
          (b.heldRate ? "" : " — the loaded server did not hold the rate: a MISS whatever the ratio"),
        `answered idle ${rps(b.idle.achievedRps)} (${b.idle.skipped} skipped, ${b.idle.failed} failed), loaded ${rps(b.loaded.achievedRps)}` +
          ` (${b.loaded.skipped} of ${b.loaded.scheduled} skipped, ${b.loaded.failed} failed)`,
        `logins during the window: ${rps(b.loginRps)}; statuses ${JSON.stringify(b.loginStatuses)}`,
        `bench process event-loop delay p99: idle ${ms(b.idle.clientLoopDelayP99Ms)}, loaded ${ms(b.loaded.clientLoopDelayP99Ms)}`,
        `loaded ${coresUsed(b.loaded.cores)}`
      ]
    },
    {
      title: `(c) login throughput vs the bcrypt limit (cost ${c.cost})`,
      lines: [
        { label: "one bcrypt compare: CPU time", value: ms(c.compareCpuMs) },
        { label: "one bcrypt compare: wall time (median of 15)", value: ms(c.compareMs) },
        { label: `bcrypt limit (${c.cores} cores ÷ the shorter)`, value: rps(c.limitRps) },
        { label: "POST /api/auth/login", value: rps(c.logins.rps) },
        { label: "ratio login / limit", value: percent(c.ratio), target: "≥ 90 %", verdict: judge(c.ratio >= 0.9, c.valid) }
      ],
      notes: [
        `autocannon, ${c.connections} connections, ${settings.seconds} s; failed ${c.logins.failed}; statuses ${JSON.stringify(c.logins.statusCodes)}`,
        `CPU per login: server ${ms(c.logins.serverCpuUsPerRequest / 1000)}, Postgres ${ms(c.logins.databaseCpuUsPerRequest / 1000)};` +
          ` the hash is ${percent(c.hashShareOfServerCpu)} of the server's`,
        coresUsed(c.logins.cores),
        `reference: ${c.cores} parallel compares in the idle bench process reach ${rps(c.bareParallelRps)}`,
        `the server hashes on ${c.cores + 1} worker threads of its own (cores + 1) at nice 19: they take only CPU that requests leave idle`
      ]
    },
    {
      title: "(d) server memory around 10,000 GET /api/auth/me (9 signed in : 1 without cookie)",
      lines: [
        { label: "VmRSS before", value: mib(d.before.rssMiB) },
        { label: "VmRSS after", value: mib(d.after.rssMiB) },
        { label: "growth", value: mib(d.growthMiB) },
        { label: "VmHWM (peak) after", value: mib(d.after.hwmMiB) },
        { label: "growth over a second 10,000", value: mib(d.secondGrowthMiB) },
        { label: "VmRSS / VmHWM at the end of this part", value: `${mib(end.rssMiB)} / ${mib(end.hwmMiB)}` }
      ],
      notes: [`statuses ${JSON.stringify(d.requests.statusCodes)}${d.valid ? "" : " (unexpected: INVALID)"}`]
    }
  ]
  return { json: { a, b, c, d }, sections }
}

/** BENCH_ONLY=webhooks: the webhook part alone, on a server of its own. */
const webhooksOnly = async (cleanup: Cleanup) => {
  const webhooks = await runWebhookBench({ ...webhookSettings(), concurrency: settings.webhookConcurrency }, cleanup)
  await writeJson(RESULTS, { webhooks: webhooks.json, table: webhooks.sections })
  process.stdout.write(renderTable([`ZH bench — webhooks, ${new Date().toISOString()}`], webhooks.sections))
  process.stdout.write(`results written to ${RESULTS}\n`)
}

/** What every results file says of its run: when, which code, on what. */
const runMeta = (started: Date, revision: string, postgres: string) => ({
  startedAt: started.toISOString(),
  durationSeconds: Math.round((Date.now() - started.getTime()) / 1000),
  revision,
  node: process.version,
  postgres,
  cores: availableParallelism(),
  cpu: cpus()[0]?.model ?? "unknown"
})

/** `npm run bench -- scale`: the scale part alone, on a database of its own (bench/scaleBench.ts). */
const scaleOnly = async (cleanup: Cleanup) => {
  const started = new Date()
  const loadBefore = loadavg()[0] ?? 0
  const pgVersion = await postgresVersion(settings.adminUrl)
  const revision = await runProgram("git", ["describe", "--always", "--dirty"], { timeoutMs: 10_000 }).catch(() => "unknown")
  const scale = await runScaleBench({ adminUrl: settings.adminUrl, samples: settings.scaleSamples, divisor: settings.scaleDivisor }, cleanup)
  const meta = { ...runMeta(started, revision, pgVersion), loadAverageBefore: loadBefore, loadAverageAfter: loadavg()[0] ?? 0 }
  await writeJson(SCALE_RESULTS, { meta, ...scale.json, table: scale.sections })
  process.stdout.write(renderTable([
    `ZH bench — scale, ${meta.startedAt}, revision ${revision}`,
    `Node ${meta.node}, PostgreSQL ${meta.postgres}, ${meta.cores} cores (${meta.cpu})`,
    `1-minute load average ${fixed(meta.loadAverageBefore, 2)} at start, ${fixed(meta.loadAverageAfter, 2)} at the end` +
    (meta.loadAverageBefore > meta.cores / 2 ? " — other work on this machine: figures are noisy" : "")
  ], scale.sections))
  process.stdout.write(`results written to ${SCALE_RESULTS}\n`)
}

const webhookSettings = () => ({ adminUrl: settings.adminUrl, bcryptCost: settings.bcryptCost, seconds: settings.seconds })

const main = async (cleanup: Cleanup) => {
  if (only === "webhooks") return webhooksOnly(cleanup)
  if (only === "scale") return scaleOnly(cleanup)
  const started = new Date()
  const cores = availableParallelism()
  const loadBefore = loadavg()[0] ?? 0
  const pgVersion = await postgresVersion(settings.adminUrl)
  const revision = await runProgram("git", ["describe", "--always", "--dirty"], { timeoutMs: 10_000 }).catch(() => "unknown")
  const database = await createDatabase(settings.adminUrl, cleanup)
  // Started before the server, which then finds cluster `bench` in its catalog and starts no sandbox of its own.
  const cluster: BenchCluster | undefined = settings.vps ? await startBenchCluster(cleanup) : undefined
  if (cluster !== undefined) progress(`sandbox Proxmox on ${cluster.sandbox.url} (realistic task durations)`)
  // Likewise panel `bench-panel`; its preload comes after the cluster's and adds to the same catalog file.
  const panel: BenchPanel | undefined = settings.game ? await startBenchPanel(cleanup) : undefined
  if (panel !== undefined) progress(`sandbox Pterodactyl on ${panel.sandbox.url}, Wings on ${panel.sandbox.nodeUrl}`)
  progress(`created database ${database.name}; migrating and starting the server`)
  const nodeOptions = [settings.serverNodeOptions, cluster?.serverNodeOptions, panel?.serverNodeOptions]
    .filter((o) => o !== undefined && o !== "")
  const server = await startServer(
    { databaseUrl: database.url, bcryptCost: settings.bcryptCost, nodeOptions: nodeOptions.length === 0 ? undefined : nodeOptions.join(" ") },
    cleanup
  )
  const target = await signUp(server, database.name)
  progress(`server pid ${server.pid} on ${server.url}, signed in`)

  const accounts = settings.accounts ? await runAccounts(target) : undefined
  const vps = cluster === undefined
    ? undefined
    : await runVpsBench(server, target, cluster, database.url, settings.vpsSettings)
  const game = panel === undefined ? undefined : await runGameBench(server, target, panel, settings.gameSettings)
  const end = await memoryOf(server.pid)
  const webhooks = settings.webhooks
    ? await runWebhookBench({ ...webhookSettings(), concurrency: settings.webhookConcurrency }, cleanup)
    : undefined

  const meta = {
    ...runMeta(started, revision, pgVersion),
    bcryptCost: settings.bcryptCost,
    phaseSeconds: settings.seconds,
    serverThreadpoolSize: 4,
    loadAverageBefore: loadBefore,
    loadAverageAfter: loadavg()[0] ?? 0,
    parts: [...(accounts === undefined ? [] : ["accounts"]), ...(vps === undefined ? [] : ["vps"]), ...(game === undefined ? [] : ["game"])],
    note: "server, Postgres and the load generator share the same cores" +
      (vps === undefined ? "" : "; the sandbox Proxmox runs in the load generator's process") +
      (game === undefined ? "" : "; the sandbox Pterodactyl and its Wings run in the load generator's process")
  }
  const sections: Array<Section> = [
    ...(accounts?.sections ?? []),
    ...(vps?.sections ?? []),
    ...(game?.sections ?? []),
    ...(webhooks?.sections ?? [])
  ]
  const heading = [
    `ZH bench — ${meta.startedAt}, revision ${revision}`,
    `Node ${meta.node}, PostgreSQL ${meta.postgres}, ${cores} cores (${meta.cpu}), bcrypt cost ${meta.bcryptCost}`,
    "one server process (NODE_ENV=production, real Postgres); server, Postgres and load generator share the cores",
    `1-minute load average ${fixed(meta.loadAverageBefore, 2)} at start (the bench's own load not yet in it)` +
    (meta.loadAverageBefore > cores / 2 ? " — other work on this machine: figures are noisy" : "")
  ]
  await writeJson(RESULTS, {
    meta,
    ...accounts?.json,
    ...(vps === undefined ? {} : { vps: vps.json }),
    ...(game === undefined ? {} : { game: game.json }),
    ...(webhooks === undefined ? {} : { webhooks: webhooks.json }),
    end,
    table: sections
  })
  process.stdout.write(renderTable(heading, sections))
  process.stdout.write(`results written to ${RESULTS}\n`)
}

const cleanup = new Cleanup()
const abort = (reason: string, code: number) => {
  progress(reason)
  void cleanup.run().finally(() => process.exit(code))
}
process.once("SIGINT", () => abort("interrupted; cleaning up", 130))
process.once("SIGTERM", () => abort("terminated; cleaning up", 143))
setTimeout(() => abort(`still running after ${HARD_LIMIT_MS / 60_000} minutes; giving up`, 1), HARD_LIMIT_MS).unref()

try {
  await main(cleanup)
} catch (e) {
  process.exitCode = 1
  progress(`failed: ${e instanceof Error ? e.message : String(e)}`)
} finally {
  await cleanup.run()
}
