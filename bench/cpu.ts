// Who used the machine's CPU during a measured window: the server (all its threads), the Postgres backends of
// its database, this process (the load generator), and everything else. Linux /proc; Postgres on this machine.
import { readFile } from "node:fs/promises"
import { performance } from "node:perf_hooks"
import { psql } from "./system.ts"

/** CPU time a process has used so far (all its threads, user + system), in milliseconds. */
export const cpuMsOf = async (pid: number): Promise<number> => {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8")
  // Fields after the parenthesised command name start at field 3 (state); utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const ticks = Number(fields[11]) + Number(fields[12])
  if (!Number.isFinite(ticks)) throw new Error(`cannot read CPU time of process ${pid}`)
  return ticks * 10 // USER_HZ is 100 on Linux
}

/** Every process of the machine: /proc/stat's busy time (all but idle and iowait), in milliseconds. */
const machineBusyMs = async (): Promise<number> => {
  const line = (await readFile("/proc/stat", "utf8")).split("\n")[0] ?? ""
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number)
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 10
}

export interface CpuSubject {
  readonly serverPid: number
  /** The postmaster, parent of every backend; undefined when Postgres runs elsewhere (its CPU is then n/a). */
  readonly postmasterPid: number | undefined
  readonly database: string
}

/** Finds the postmaster from one backend of `database` (the server keeps at least one connection open). */
export const cpuSubject = async (adminUrl: string, database: string, serverPid: number): Promise<CpuSubject> => {
  const backend = (await psql(adminUrl, `SELECT pid FROM pg_stat_activity WHERE datname = '${database}' LIMIT 1`)).trim()
  const status = backend === "" ? "" : await readFile(`/proc/${backend}/status`, "utf8").catch(() => "")
  const parent = /^PPid:\s+(\d+)$/m.exec(status)?.[1]
  return { serverPid, postmasterPid: parent === undefined ? undefined : Number(parent), database }
}

/** The backends serving `database`: children of the postmaster whose process title names it. */
const backendsOf = async (subject: CpuSubject): Promise<ReadonlyArray<number>> => {
  const { postmasterPid: pm } = subject
  if (pm === undefined) return []
  const children = (await readFile(`/proc/${pm}/task/${pm}/children`, "utf8")).trim().split(" ").filter((s) => s !== "")
  const ours: Array<number> = []
  for (const child of children) {
    const title = await readFile(`/proc/${child}/cmdline`, "utf8").catch(() => "")
    if (title.includes(` ${subject.database} `)) ours.push(Number(child))
  }
  return ours
}

export interface CpuCores {
  readonly server: number
  readonly database: number
  readonly bench: number
  readonly other: number
}

export interface CpuUse {
  readonly serverMs: number
  readonly databaseMs: number
  /** CPU time over wall time: how many cores each took on average. */
  readonly cores: CpuCores
}

export interface CpuWindow {
  readonly stop: () => Promise<CpuUse>
}

/**
 * Opens a window. Backends come and go (the pool replaces a connection whose query was interrupted), so they
 * are polled: one that ends is counted up to its last reading, one that starts is counted from zero.
 */
export const openCpuWindow = async (subject: CpuSubject): Promise<CpuWindow> => {
  const baseline = new Map<number, number>()
  const latest = new Map<number, number>()
  const poll = async (opening: boolean) => {
    for (const backend of await backendsOf(subject)) {
      const ms = await cpuMsOf(backend).catch(() => undefined)
      if (ms === undefined) continue
      if (!baseline.has(backend)) baseline.set(backend, opening ? ms : 0)
      latest.set(backend, ms)
    }
  }
  await poll(true)
  const benchAt = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000
  const start = {
    at: performance.now(),
    serverMs: await cpuMsOf(subject.serverPid),
    benchMs: benchAt(process.cpuUsage()),
    machineMs: await machineBusyMs()
  }
  let polling = Promise.resolve()
  const timer = setInterval(() => {
    polling = polling.then(() => poll(false)).catch(() => undefined)
  }, 250)
  return {
    stop: async () => {
      clearInterval(timer)
      await polling
      await poll(false)
      const wallMs = Math.max(1, performance.now() - start.at)
      const serverMs = (await cpuMsOf(subject.serverPid)) - start.serverMs
      const benchMs = benchAt(process.cpuUsage()) - start.benchMs
      const machineMs = (await machineBusyMs()) - start.machineMs
      let backendsMs = 0
      for (const [backend, ms] of latest) backendsMs += ms - (baseline.get(backend) ?? 0)
      const otherMs = Math.max(0, machineMs - serverMs - backendsMs - benchMs)
      const databaseMs = subject.postmasterPid === undefined ? Number.NaN : backendsMs
      return {
        serverMs,
        databaseMs,
        cores: { server: serverMs / wallMs, database: databaseMs / wallMs, bench: benchMs / wallMs, other: otherMs / wallMs }
      }
    }
  }
}
