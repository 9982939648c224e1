// The VPS part of `npm run bench`: provisioning overhead, the console relay, and 100 orders at once, against the
// bench's own sandbox Proxmox (registered as cluster `bench`), on the same server process as the account part.
import { availableParallelism } from "node:os"
import { relayVersusDirect } from "./consoleMeasures.ts"
import { fixed, judge, mib, ms, percent, type Section, times } from "./report.ts"
import { progress, type RunningServer } from "./system.ts"
import type { Target } from "./measures.ts"
import { concurrentOrders, provisioningOverhead, seenByPolling } from "./vpsMeasures.ts"
import type { BenchCluster } from "./vpsUpstream.ts"

export interface VpsSettings {
  /** Orders placed one after the other for the overhead. */
  readonly sequential: number
  /** Orders placed at once. */
  readonly concurrent: number
  /** Keystroke round trips per console session; CONSOLE_ROUNDS sessions per path. */
  readonly keystrokes: number
}

const CONSOLE_ROUNDS = 3

const mibps = (n: number) => `${fixed(n, n < 10 ? 2 : 1)} MiB/s`
const seconds = (n: number) => `${fixed(n / 1000, 2)} s`

export const runVpsBench = async (
  server: RunningServer,
  customer: Target,
  cluster: BenchCluster,
  databaseUrl: string,
  settings: VpsSettings
) => {
  progress(`(e) ${settings.sequential} VPS orders one after the other, followed every 10 ms`)
  const { figures: e, running } = await provisioningOverhead(customer, cluster, settings.sequential, 10)
  if (running === undefined) throw new Error("no order completed: nothing to open a console on")

  progress(`(f) console: relay vs direct, ${CONSOLE_ROUNDS} rounds each, ${settings.keystrokes} keystrokes per round`)
  const consoleCpu = await customer.openCpuWindow()
  const f = await relayVersusDirect({
    serverUrl: server.url,
    // bench/system.ts starts the server with PUBLIC_URL http://localhost:<port>.
    origin: `http://localhost:${new URL(server.url).port}`,
    cookie: customer.cookie,
    vpsId: running.vpsId,
    rootPassword: running.rootPassword,
    pveUrl: cluster.sandbox.url,
    login: { username: cluster.username, password: cluster.password },
    vm: running.vm
  }, CONSOLE_ROUNDS, settings.keystrokes)
  const fCores = (await consoleCpu.stop()).cores

  progress(`(g) ${settings.concurrent} VPS orders at once`)
  const g = await concurrentOrders(customer, databaseUrl, settings.concurrent, 500)

  const durations = e.taskTypes.map((t) => `${t} ${cluster.durationOf(t)}`).join(", ")
  const pollingFloorMs = e.taskTypes.reduce((n, t) => n + seenByPolling(cluster.durationOf(t)) - cluster.durationOf(t), 0)
  const noticed = e.taskTypes.map((t) => `${t} ${ms(e.noticedAfterMs[t] ?? Number.NaN)}`).join(", ")
  const sections: Array<Section> = [
    {
      title: `(e) provisioning one VPS (POST /api/orders → completed) vs the upstream's own task time, ${e.count} orders in a row`,
      lines: [
        { label: "wall time per order (median)", value: ms(e.wallMs) },
        { label: "upstream task time, timed on the sandbox", value: ms(e.taskMs) },
        {
          label: "overhead (wall − tasks) ÷ tasks",
          value: percent(e.overhead),
          target: "≤ 10 %",
          verdict: judge(e.overhead <= 0.1, e.valid)
        },
        { label: "  of it: tasks ended, not yet read", value: `${ms(e.pollingMs)} (${percent(e.pollingMs / e.taskMs)})` },
        { label: "  of it: everything else", value: `${ms(e.otherMs)} (${percent(e.otherMs / e.taskMs)})` }
      ],
      notes: [
        `per order: ${e.orders.map((o) => `${percent(o.overhead)} (${fixed(o.wallMs, 0)} − ${fixed(o.taskMs, 0)} ms)`).join(", ")}; ${e.completed}/${e.count} completed`,
        `tasks per order: ${durations} ms configured (Σ ${ms(e.configuredMs)}); ${fixed(e.pveCalls, 0)} calls to Proxmox per order`,
        `from a task's end to the adapter's read that saw it (median): ${noticed}`,
        "the adapter reads a task's status at once, then after pauses of 100 ms doubling to 2 s (reads at 0, 100, 300, 700," +
          ` 1500, 3100 ms …): for these durations that alone costs ≥ ${ms(pollingFloorMs)}, ${percent(pollingFloorMs / e.configuredMs)} of the task time`,
        `everything else includes ${ms(e.beforeFirstTaskMs)} from the POST to the first task (payment, workflow start, placement) and the bench's reads every ${e.pollMs} ms`,
        "timed from this process: the sandbox's tasks and requests seen every 2 ms, the order read every 10 ms"
      ]
    },
    {
      title: "(f) console relay (GET /api/vps/:id/console) vs a direct console WebSocket to the sandbox, same VM",
      lines: [
        { label: "output, 16 KiB echo lines: direct", value: mibps(f.direct.bulk.mibPerSecond) },
        { label: "output, 16 KiB echo lines: relay", value: mibps(f.relay.bulk.mibPerSecond) },
        { label: "ratio relay / direct", value: percent(f.bulkRatio), target: "≥ 80 %", verdict: judge(f.bulkRatio >= 0.8, true) },
        { label: "output, 48-byte echo lines: direct", value: mibps(f.direct.small.mibPerSecond) },
        { label: "output, 48-byte echo lines: relay", value: mibps(f.relay.small.mibPerSecond) },
        { label: "ratio relay / direct", value: percent(f.smallRatio), target: "≥ 80 %", verdict: judge(f.smallRatio >= 0.8, true) },
        { label: "keystroke round trip p99: direct", value: ms(f.direct.keys.p99Ms) },
        { label: "keystroke round trip p99: relay", value: ms(f.relay.keys.p99Ms) },
        { label: "added p99", value: ms(f.addedP99Ms), target: "< 2 ms", verdict: judge(f.addedP99Ms < 2, true) }
      ],
      notes: [
        "the guest has no bulk-output command: output is `echo` lines typed in one burst (each comes back twice, as" +
          ` the keys' echo and as output): ${f.shapes.bulk.commands} × 16 KiB → ${mib(f.relay.bulk.bytes / 2 ** 20)}, ${f.shapes.small.commands} × 48 B → ${mib(f.relay.small.bytes / 2 ** 20)} of output`,
        `throughput: best of ${f.rounds} sessions per path (relay ${f.relay.runs.map((r) => fixed(r.bulkMiBps)).join(" / ")},` +
          ` direct ${f.direct.runs.map((r) => fixed(r.bulkMiBps)).join(" / ")} MiB/s for 16 KiB lines; relay` +
          ` ${f.relay.runs.map((r) => fixed(r.smallMiBps, 2)).join(" / ")}, direct ${f.direct.runs.map((r) => fixed(r.smallMiBps, 2)).join(" / ")} for 48 B)`,
        `keystrokes: one character, timed to its echo, ${f.relay.keys.samples} per path over ${f.rounds} sessions;` +
          ` p50 direct ${ms(f.direct.keys.p50Ms)}, relay ${ms(f.relay.keys.p50Ms)} (added ${ms(f.addedP50Ms)}); max direct ${ms(f.direct.keys.maxMs)}, relay ${ms(f.relay.keys.maxMs)}`,
        `p90 direct ${ms(f.direct.keys.p90Ms)}, relay ${ms(f.relay.keys.p90Ms)}: only the relay's round trip crosses to another process (the server),` +
          ` so it alone waits for a core when the machine is busy — other processes used ${fixed(fCores.other, 2)} of ${availableParallelism()} cores meanwhile`,
        `the sandbox and its terminal run in the bench process, so both paths pay them alike; WebSocket extensions: ${f.relay.extensions}`
      ]
    },
    {
      title: `(g) ${g.count} VPS orders placed at once`,
      lines: [
        { label: "orders accepted (201)", value: `${g.accepted} / ${g.count} in ${seconds(g.acceptMs)}` },
        { label: "wall time until all settled", value: seconds(g.wallMs) },
        { label: "vs one order alone", value: times(g.wallMs / e.wallMs) },
        { label: "completed / failed", value: `${g.completed} / ${g.failed}`, target: "0 failed", verdict: judge(g.failed === 0, g.valid) },
        { label: "per order p50 / p99 (server clock)", value: `${seconds(g.p50Ms)} / ${seconds(g.p99Ms)}` },
        { label: "server VmRSS before / peak / after", value: `${fixed(g.rssBeforeMiB)} / ${fixed(g.rssPeakMiB)} / ${mib(g.rssAfterMiB)}` }
      ],
      notes: [
        `per order: the order's creation to its completion, from the server's timestamps; the slowest ${seconds(g.maxMs)}`,
        `wall time: first POST sent to the last settling seen, each order read every ${g.pollMs} ms (so up to that late)`,
        ...(Object.keys(g.reasons).length === 0 ? [] : [`failures: ${JSON.stringify(g.reasons)}`]),
        `CPU per order: server ${ms(g.serverCpuMsPerOrder)}, Postgres ${ms(g.databaseCpuMsPerOrder)}; cores used over the phase:` +
          ` server ${fixed(g.cores.server, 2)}, Postgres ${fixed(g.cores.database, 2)}, bench with the sandbox ${fixed(g.cores.bench, 2)}, other processes ${fixed(g.cores.other, 2)}`,
        `${fixed(g.transactionsPerOrder, 0)} Postgres transactions per order (with the bench's ${g.orderReads} reads of the orders, ${fixed(g.orderReads / g.count, 0)} per order)`,
        `VmHWM (peak since the server started) ${mib(g.hwmMiB)}; RSS sampled every 250 ms during the phase`
      ]
    }
  ]
  return { json: { provisioning: e, console: f, concurrent: g }, sections }
}
