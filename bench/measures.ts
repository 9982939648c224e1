// The four measurements of the bench, each against the same running server and signed-in account.
import bcrypt from "bcrypt"
import { availableParallelism } from "node:os"
import { performance } from "node:perf_hooks"
import { blast, closedLoops, type HttpCall, type Latencies, paced, type Throughput } from "./load.ts"
import type { CpuWindow } from "./cpu.ts"
import { type Memory, memoryOf } from "./system.ts"

export interface Target {
  readonly url: string
  readonly pid: number
  /** `zh_token=…`, a remember-me session. */
  readonly cookie: string
  readonly email: string
  readonly password: string
  /** Starts following the CPU used by the server, its Postgres backends, this process and the machine. */
  readonly openCpuWindow: () => Promise<CpuWindow>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const meCall = (t: Target): HttpCall => ({ method: "GET", url: new URL("/api/auth/me", t.url), headers: { cookie: t.cookie } })

const loginCall = (t: Target): HttpCall => {
  const body = JSON.stringify({ email: t.email, password: t.password, rememberMe: true })
  return {
    method: "POST",
    url: new URL("/api/auth/login", t.url),
    headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
    body
  }
}

/**
 * Runs a load and adds the CPU time per successful request, in microseconds, of the server (all its threads)
 * and of the Postgres backends serving it, and who used the cores meanwhile: on a machine this small, the
 * server, Postgres, the load generator and anything else running all take from the same cores.
 */
const withCpu = async <A extends { readonly ok: number }>(t: Target, load: () => Promise<A>) => {
  const window = await t.openCpuWindow()
  const result = await load()
  const used = await window.stop()
  const per = (ms: number) => (1000 * ms) / Math.max(1, result.ok)
  return {
    ...result,
    serverCpuUsPerRequest: per(used.serverMs),
    databaseCpuUsPerRequest: per(used.databaseMs),
    cores: used.cores
  }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] ?? Number.NaN : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/**
 * (d) Resident memory around 10,000 /me requests: nine signed in for one without a cookie (the 401 path).
 * A second round of 10,000 tells steady growth (a leak) from a heap that grew once to its working size.
 */
export const memoryAfterRequests = async (t: Target) => {
  const signedIn = { method: "GET", path: "/api/auth/me", headers: { cookie: t.cookie } }
  const anonymous = { method: "GET", path: "/api/auth/me", headers: {} }
  const round = () =>
    blast({
      url: t.url,
      amount: 10_000,
      connections: 10,
      timeout: 10,
      requests: [...Array.from({ length: 9 }, () => signedIn), anonymous]
    })
  const expected = (r: Throughput) => (r.statusCodes["200"] ?? 0) + (r.statusCodes["401"] ?? 0) === 10_000
  const before: Memory = await memoryOf(t.pid)
  const requests = await round()
  await sleep(1_000)
  const after: Memory = await memoryOf(t.pid)
  const second = await round()
  await sleep(1_000)
  const afterSecond: Memory = await memoryOf(t.pid)
  return {
    before,
    after,
    growthMiB: after.rssMiB - before.rssMiB,
    afterSecond,
    secondGrowthMiB: afterSecond.rssMiB - after.rssMiB,
    requests,
    valid: expected(requests) && expected(second)
  }
}

/** (a) Saturation throughput of the authenticated /me against the unauthenticated liveness route. */
export const meVersusHealth = async (t: Target, seconds: number) => {
  const common = { connections: 50, timeout: 10 }
  const health = { ...common, url: `${t.url}/healthz` }
  const me = { ...common, url: `${t.url}/api/auth/me`, headers: { cookie: t.cookie } }
  await blast({ ...health, duration: 3 })
  await blast({ ...me, duration: 3 })
  const healthz = await withCpu(t, () => blast({ ...health, duration: seconds }))
  const authMe = await withCpu(t, () => blast({ ...me, duration: seconds }))
  return {
    connections: common.connections,
    healthz,
    me: authMe,
    ratio: authMe.rps / healthz.rps,
    /** The throughput ratio to expect where both routes are CPU-bound; steadier than throughput on a shared machine. */
    cpuCostRatio: (healthz.serverCpuUsPerRequest + healthz.databaseCpuUsPerRequest) /
      (authMe.serverCpuUsPerRequest + authMe.databaseCpuUsPerRequest),
    valid: healthz.failed === 0 && authMe.failed === 0
  }
}

/** (b) /me latency at a fixed modest rate, idle and then with 20 sign-ins always in flight. */
export const latencyUnderLogins = async (t: Target, seconds: number) => {
  const rate = 200
  const connections = 10
  const concurrentLogins = 20
  await paced(meCall(t), { rate, seconds: 2, connections })
  const idle: Latencies = await paced(meCall(t), { rate, seconds, connections })
  const logins = closedLoops(loginCall(t), concurrentLogins)
  await sleep(1_500) // every loop has a sign-in in flight before the window opens
  const okBefore = logins.ok()
  const opened = performance.now()
  const loaded = await withCpu(t, () => paced(meCall(t), { rate, seconds, connections }))
  const loginRps = (logins.ok() - okBefore) / ((performance.now() - opened) / 1000)
  const loginStatuses = await logins.stop()
  const loginFailures = Object.entries(loginStatuses).filter(([s]) => s !== "200").reduce((n, [, c]) => n + c, 0)
  return {
    rate,
    connections,
    concurrentLogins,
    idle,
    loaded,
    loginRps,
    loginStatuses,
    ratio: loaded.p99Ms / idle.p99Ms,
    /**
     * Skipped requests are the slowest ones never timed: a few in the idle phase (a stall of the machine) only
     * make the ratio stricter; in the loaded phase they mean the server did not hold the rate, which no p99 of
     * the requests it did answer can make up for.
     */
    heldRate: loaded.skipped <= loaded.scheduled / 100,
    valid: idle.failed === 0 && idle.skipped <= idle.scheduled / 100 && loaded.failed === 0 && loginFailures === 0
  }
}

/**
 * (c) Sign-in throughput against the bcrypt limit: this machine's cores divided by one compare's time at the
 * server's cost, timed here in the bench process (15 in a row) while the server is idle.
 */
export const loginVersusBcrypt = async (t: Target, cost: number, seconds: number) => {
  const hash = await bcrypt.hash(t.password, cost)
  await bcrypt.compare(t.password, hash)
  const compareTimes: Array<number> = []
  const cpuBefore = process.cpuUsage()
  for (let i = 0; i < 15; i++) {
    const started = performance.now()
    await bcrypt.compare(t.password, hash)
    compareTimes.push(performance.now() - started)
  }
  const cpuUsed = process.cpuUsage(cpuBefore)
  const compareMs = median(compareTimes)
  // The limit takes the hash's CPU time: the same as its wall time on an idle machine, but it does not grow
  // (and flatter the ratio) when other processes take the cores while it is timed.
  const compareCpuMs = (cpuUsed.user + cpuUsed.system) / 1000 / compareTimes.length
  const cores = availableParallelism()
  const limitRps = cores / (Math.min(compareMs, compareCpuMs) / 1000)

  // For reference: what this process reaches with `cores` compares always in flight and nothing else running.
  const perWorker = 8
  const started = performance.now()
  await Promise.all(Array.from({ length: cores }, async () => {
    for (let i = 0; i < perWorker; i++) await bcrypt.compare(t.password, hash)
  }))
  const bareParallelRps = (cores * perWorker) / ((performance.now() - started) / 1000)

  const call = loginCall(t)
  const options = {
    url: call.url.href,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: call.body ?? "",
    connections: 8,
    timeout: 10
  }
  await blast({ ...options, duration: 2 })
  const logins = await withCpu(t, () => blast({ ...options, duration: seconds }))
  return {
    cost,
    cores,
    compareMs,
    compareCpuMs,
    limitRps,
    bareParallelRps,
    connections: options.connections,
    logins,
    ratio: logins.rps / limitRps,
    /** How much of the server's CPU per sign-in is the hash itself (the rest is overhead around it). */
    hashShareOfServerCpu: (compareCpuMs * 1000) / logins.serverCpuUsPerRequest,
    valid: logins.failed === 0
  }
}
