// Worker tasks (reference/proxmox.md §2.3): each async call returns a UPID at once; the work runs after its simulated
// duration while the task is `running`, then the task stops with an exit status that is its log's last line.
import { randomInt } from "node:crypto"
import type { Cluster } from "./Cluster.ts"
import { flockTimeout, PveError, TaskError } from "./PveError.ts"
import type { SimClock } from "./SimClock.ts"

export type Log = (line: string) => void

export interface TaskRecord {
  readonly upid: string
  readonly node: string
  readonly pid: number
  readonly pstart: number
  readonly starttime: number
  readonly type: string
  readonly id: string
  readonly user: string
  status: "running" | "stopped"
  exitstatus: string | undefined
  readonly log: Array<string>
}

/** What a worker does once it runs: `finish` after the task's duration, `abort` to undo when a fault fails it. */
export interface TaskWork {
  finish(log: Log): void
  abort?(): void
}

export interface TaskRequest {
  readonly node: string
  readonly type: string
  readonly id: string
  readonly user: string
  /** The VM whose config flock the worker holds from `begin` to the end. */
  readonly flockVmid?: number
  /** Runs once the worker holds its flock; throwing fails the task (checks that PVE makes inside the worker). */
  begin(log: Log): TaskWork
  /** An exit status forced by an injected `taskFailure` fault. */
  readonly injectedFailure?: string
  /** Lines an injected failure writes to the log before its last line. */
  readonly injectedLog?: ReadonlyArray<string>
}

export const defaultTaskDurations: Readonly<Record<string, number>> = {
  qmclone: 1500,
  qmconfig: 200,
  resize: 300,
  qmstart: 500,
  qmstop: 300,
  qmshutdown: 500,
  qmreset: 200,
  qmreboot: 500,
  qmsnapshot: 400,
  qmdelsnapshot: 300,
  qmdestroy: 400,
  default: 250
}

const FLOCK_WAIT_MS = 10_000

const hex8 = (n: number) => n.toString(16).toUpperCase().padStart(8, "0")

const messageOf = (e: unknown): string => {
  if (e instanceof TaskError || e instanceof PveError) return e.message.replace(/\n+$/, "")
  if (e instanceof Error) return `unexpected error: ${e.message}`
  return String(e)
}

export class Tasks {
  private readonly tasks = new Map<string, TaskRecord>()
  private nextPid = 0x3a000 + randomInt(0x10000)
  private nextPstart = 0x1b2c3d4

  private readonly clock: SimClock
  private readonly cluster: Cluster
  private readonly durations: Readonly<Partial<Record<string, number>>>
  private readonly settled: () => void

  constructor(
    clock: SimClock,
    cluster: Cluster,
    durations: Readonly<Partial<Record<string, number>>>,
    /** Called when a task stops: its work is done or undone. */
    settled: () => void = () => undefined
  ) {
    this.clock = clock
    this.cluster = cluster
    this.durations = durations
    this.settled = settled
  }

  get(upid: string): TaskRecord | undefined {
    return this.tasks.get(upid)
  }

  all(): ReadonlyArray<TaskRecord> {
    return [...this.tasks.values()]
  }

  durationOf(type: string): number {
    return this.durations[type] ?? this.durations["default"] ?? defaultTaskDurations[type] ??
      defaultTaskDurations["default"] ?? 0
  }

  private create(node: string, type: string, id: string, user: string): TaskRecord {
    const pid = this.nextPid++
    const pstart = this.nextPstart++
    const starttime = this.clock.nowSeconds()
    const upid = `UPID:${node}:${hex8(pid)}:${hex8(pstart)}:${hex8(starttime)}:${type}:${id}:${user}:`
    const record: TaskRecord = {
      upid, node, pid, pstart, starttime, type, id, user, status: "running", exitstatus: undefined, log: []
    }
    this.tasks.set(upid, record)
    return record
  }

  private stop(record: TaskRecord, exitstatus: string): void {
    if (record.status === "stopped") return
    if (exitstatus !== "OK" && !/^WARNINGS: \d+$/.test(exitstatus)) {
      for (const line of exitstatus.split("\n")) record.log.push(line)
      record.log.push(`TASK ERROR: ${exitstatus}`)
    } else {
      record.log.push(`TASK ${exitstatus}`)
    }
    record.status = "stopped"
    record.exitstatus = exitstatus
    this.settled()
  }

  /** Forks the worker: the UPID exists at once; with a zero duration and a free flock it has already stopped. */
  start(request: TaskRequest): TaskRecord {
    const record = this.create(request.node, request.type, request.id, request.user)
    const log: Log = (line) => record.log.push(line)
    const flock = request.flockVmid === undefined ? undefined : this.cluster.flock(request.flockVmid)
    const end = (exitstatus: string) => {
      flock?.release()
      this.stop(record, exitstatus)
    }
    const run = () => {
      let work: TaskWork
      try {
        work = request.begin(log)
      } catch (e) {
        end(messageOf(e))
        return
      }
      const complete = () => {
        const injected = request.injectedFailure
        const warning = injected !== undefined && /^WARNINGS: \d+$/.test(injected)
        if (injected !== undefined && injected !== "OK" && !warning) {
          work.abort?.()
          for (const line of request.injectedLog ?? []) log(line)
          end(injected)
          return
        }
        try {
          work.finish(log)
          end(warning ? injected : "OK")
        } catch (e) {
          work.abort?.()
          end(messageOf(e))
        }
      }
      const duration = this.durationOf(request.type)
      if (duration <= 0) complete()
      else this.clock.later(duration, complete)
    }
    if (flock === undefined || flock.tryAcquire()) run()
    else {
      flock.request(FLOCK_WAIT_MS, this.clock, (held) => {
        if (held) run()
        else this.stop(record, flockTimeout(request.flockVmid ?? 0))
      })
    }
    return record
  }

  /** A task that runs until its owner ends it (termproxy's `vncproxy` worker lives as long as its console). */
  startOpen(node: string, type: string, id: string, user: string): { readonly record: TaskRecord; end(exitstatus: string): void } {
    const record = this.create(node, type, id, user)
    return { record, end: (exitstatus) => this.stop(record, exitstatus) }
  }
}
