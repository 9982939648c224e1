// (e) Provisioning overhead against the upstream's own task time, and (g) 100 orders placed at once.
import { performance } from "node:perf_hooks"
import { percentile } from "./consoleSocket.ts"
import type { CpuWindow } from "./cpu.ts"
import { type Customer, followOrder, type Order, placeOrder, serverTimes } from "./vpsClient.ts"
import { type BenchCluster, watchSandbox } from "./vpsUpstream.ts"
import { memoryOf, progress, psql } from "./system.ts"

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)
const median = (values: ReadonlyArray<number>) => percentile([...values].sort((a, b) => a - b), 0.5)

/**
 * When the Proxmox adapter first reads a task stopped, if polling were its only delay: it reads the status at
 * once, then after pauses of 100 ms doubling up to 2 s (adapters/proxmox ProxmoxVirtualization `defaultOptions`,
 * tasks.ts `pollSchedule`), so a task of `ms` is seen at the first of 0, 100, 300, 700, 1500, 3100, … not below it.
 */
export const seenByPolling = (ms: number, initial = 100, max = 2_000) => {
  let at = 0
  let pause = initial
  while (at < ms) {
    at += pause
    pause = Math.min(pause * 2, max)
  }
  return at
}

export interface TimedStep {
  readonly type: string
  /** The task's running time, timed on the sandbox. */
  readonly ms: number
  /** The task stopped → the adapter's last status read of it (the one that saw it stopped). */
  readonly noticedAfterMs: number
  readonly statusReads: number
  readonly exitstatus: string | null
}

export interface ProvisionedOrder {
  readonly orderId: string
  readonly status: Order["status"]
  /** POST sent → first read showing it completed. */
  readonly wallMs: number
  /** Σ of the VM's upstream tasks, timed on the sandbox. */
  readonly taskMs: number
  /** Σ of the configured durations of the same tasks. */
  readonly configuredMs: number
  readonly tasks: ReadonlyArray<TimedStep>
  /** Σ of the tasks' `noticedAfterMs`: time lost to the status polling's pauses. */
  readonly pollingMs: number
  /** Everything else: the API, the database, the workflow engine, the synchronous PVE calls. */
  readonly otherMs: number
  /** POST sent → the first task seen: ordering, payment, workflow start, placement. */
  readonly beforeFirstTaskMs: number
  /** Calls the sandbox received for this order. */
  readonly pveCalls: number
  readonly overhead: number
}

/** A VPS the run left running, for the console measurements; not for the JSON (it holds the root password). */
export interface RunningVps {
  readonly vpsId: string
  readonly rootPassword: string
  readonly vm: { readonly node: string; readonly vmid: number }
}

/**
 * Orders `count` VPSes one after the other, each followed every `pollMs` until it settles; the sandbox is
 * watched meanwhile so each order's time splits into the upstream's tasks, the pauses of the adapter's status
 * polling after each task ended, and the rest.
 */
export const provisioningOverhead = async (customer: Customer, cluster: BenchCluster, count: number, pollMs: number) => {
  const control = cluster.sandbox.control
  const watch = watchSandbox(control, 2)
  const orders: Array<ProvisionedOrder> = []
  let running: RunningVps | undefined
  try {
    for (let i = 0; i < count; i++) {
      const hostname = `bench-seq-${i}`
      const placed = await placeOrder(customer, hostname)
      const { order, settledAt } = await followOrder(customer, placed.id, pollMs, 60_000)
      // Cloned as `vps-<order>`, the VM is renamed after the hostname when configured (step 5).
      const vm = control.state().vms.find((v) => v.name === hostname)
      const requests = watch.requests().filter((r) => r.at >= placed.sentAt && r.at <= settledAt)
      const tasks = watch.tasks().filter((t) => vm !== undefined && t.vmid === vm.vmid && t.stoppedAt !== undefined)
        .sort((a, b) => a.seenAt - b.seenAt)
      const steps = tasks.map((t): TimedStep => {
        const stoppedAt = t.stoppedAt ?? t.seenAt
        const reads = requests.filter((r) => r.method === "GET" && r.path.endsWith(`/tasks/${t.upid}/status`))
        // The read that saw the task stopped may share the watch's 2 ms window with the stop itself.
        const noticedAt = Math.max(stoppedAt, reads.at(-1)?.at ?? stoppedAt)
        return { type: t.type, ms: stoppedAt - t.seenAt, noticedAfterMs: noticedAt - stoppedAt, statusReads: reads.length, exitstatus: t.exitstatus }
      })
      const wallMs = settledAt - placed.sentAt
      const taskMs = sum(steps.map((t) => t.ms))
      const pollingMs = sum(steps.map((t) => t.noticedAfterMs))
      orders.push({
        orderId: placed.id,
        status: order.status,
        wallMs,
        taskMs,
        configuredMs: sum(tasks.map((t) => cluster.durationOf(t.type))),
        tasks: steps,
        pollingMs,
        otherMs: wallMs - taskMs - pollingMs,
        beforeFirstTaskMs: (tasks[0]?.seenAt ?? settledAt) - placed.sentAt,
        pveCalls: requests.length,
        overhead: (wallMs - taskMs) / taskMs
      })
      if (vm !== undefined && order.serviceId !== undefined && order.rootPassword !== undefined) {
        running = { vpsId: order.serviceId, rootPassword: order.rootPassword, vm: { node: vm.node, vmid: vm.vmid } }
      }
      progress(`    order ${i + 1}/${count}: ${order.status} in ${Math.round(wallMs)} ms, upstream tasks ${Math.round(taskMs)} ms`)
    }
  } finally {
    watch.stop()
  }
  const completed = orders.filter((o) => o.status === "completed")
  const med = (pick: (o: ProvisionedOrder) => number) => median(completed.map(pick))
  const types = [...new Set(completed.flatMap((o) => o.tasks.map((t) => t.type)))]
  const figures = {
    count,
    pollMs,
    orders,
    completed: completed.length,
    wallMs: med((o) => o.wallMs),
    taskMs: med((o) => o.taskMs),
    configuredMs: med((o) => o.configuredMs),
    pollingMs: med((o) => o.pollingMs),
    otherMs: med((o) => o.otherMs),
    beforeFirstTaskMs: med((o) => o.beforeFirstTaskMs),
    pveCalls: med((o) => o.pveCalls),
    /** Per task type: the median time from its end to the adapter noticing it. */
    noticedAfterMs: Object.fromEntries(types.map((type) => [
      type,
      median(completed.flatMap((o) => o.tasks.filter((t) => t.type === type).map((t) => t.noticedAfterMs)))
    ])),
    /** Median of the per-order overheads. */
    overhead: med((o) => o.overhead),
    taskTypes: types,
    valid: completed.length === count
  }
  return { figures, running }
}

/** Transactions committed or rolled back on `databaseUrl`'s database so far (as its backends last reported). */
const transactions = async (databaseUrl: string) =>
  Number(await psql(databaseUrl, "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"))

/** Samples the server's resident memory every `intervalMs` until stopped; returns the peak and the last. */
const sampleMemory = (pid: number, intervalMs: number) => {
  let peak = 0
  let last = 0
  let running = true
  const loop = (async () => {
    while (running) {
      const m = await memoryOf(pid).catch(() => undefined)
      if (m !== undefined) {
        peak = Math.max(peak, m.rssMiB)
        last = m.rssMiB
      }
      await sleep(intervalMs)
    }
  })()
  return async () => {
    running = false
    await loop
    return { peakMiB: peak, lastMiB: last }
  }
}

/**
 * Places `count` orders at once, then follows each every `pollMs` until all settled. Wall time runs from the first
 * POST to the last settling seen; per-order times come from the server's own timestamps (creation → completion
 * or failure), which are exact where the bench's reads are up to `pollMs` late.
 */
export const concurrentOrders = async (
  customer: Customer & { readonly pid: number; readonly openCpuWindow: () => Promise<CpuWindow> },
  databaseUrl: string,
  count: number,
  pollMs: number
) => {
  const pid = customer.pid
  const before = await memoryOf(pid)
  const stopSampling = sampleMemory(pid, 250)
  const transactionsBefore = await transactions(databaseUrl)
  const cpu = await customer.openCpuWindow()
  const started = performance.now()
  const placing = await Promise.allSettled(
    Array.from({ length: count }, (_, i) => placeOrder(customer, `bench-c-${i}`))
  )
  const acceptedAt = performance.now()
  const placed = placing.flatMap((p) => (p.status === "fulfilled" ? [p.value] : []))
  const refused = placing.flatMap((p) => (p.status === "rejected" ? [String(p.reason)] : []))
  progress(`    ${placed.length} of ${count} orders accepted in ${Math.round(acceptedAt - started)} ms; following them`)
  const followed = await Promise.all(placed.map(async (p, i) => {
    await sleep((i * pollMs) / Math.max(1, placed.length)) // spread the reads over the interval
    return followOrder(customer, p.id, pollMs, 300_000)
  }))
  const wallMs = Math.max(...followed.map((f) => f.settledAt)) - started
  const used = await cpu.stop()
  const memory = await stopSampling()
  await sleep(1_500) // backends report their transaction counts at most once a second
  const transactionsDuring = (await transactions(databaseUrl)) - transactionsBefore
  const after = await memoryOf(pid)
  const times = await serverTimes(databaseUrl, placed.map((p) => p.id))
  const done = [...times.values()]
  const completed = done.filter((t) => t.status === "completed")
  const sorted = completed.map((t) => t.ms).sort((a, b) => a - b)
  const reasons: Record<string, number> = {}
  for (const t of done.filter((t) => t.status !== "completed")) reasons[t.failureReason] = (reasons[t.failureReason] ?? 0) + 1
  for (const r of refused) reasons[r] = (reasons[r] ?? 0) + 1
  return {
    count,
    pollMs,
    accepted: placed.length,
    acceptMs: acceptedAt - started,
    wallMs,
    completed: completed.length,
    failed: count - completed.length,
    reasons,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    /** CPU time per order, in ms, of the server (all threads) and of its Postgres backends. */
    serverCpuMsPerOrder: used.serverMs / count,
    databaseCpuMsPerOrder: used.databaseMs / count,
    /** Transactions on the server's database per order, the bench's reads of the orders included. */
    transactionsPerOrder: transactionsDuring / count,
    orderReads: sum(followed.map((f) => f.reads)),
    /** Cores used on average over the phase; `bench` includes the sandbox Proxmox. */
    cores: used.cores,
    rssBeforeMiB: before.rssMiB,
    rssPeakMiB: Math.max(memory.peakMiB, after.rssMiB),
    rssAfterMiB: after.rssMiB,
    hwmMiB: after.hwmMiB,
    valid: refused.length === 0
  }
}
