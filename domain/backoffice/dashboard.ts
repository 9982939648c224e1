// The back-office's dashboard: money (MRR), services, today's orders (the French day), failed payments awaiting a
// retry, open refunds, the fill of IP pools and panel allocations, and node capacity (committed from our records and
// plans against what each node offers upstream, times the overcommit the placement allows). Each figure says whether
// it is past its threshold (DashboardSettings), which the page shows in red.
import { Context, Duration, Effect, Option } from "effect"
import { BackOfficeFigures } from "../../ports/BackOfficeFigures.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { GamePanel } from "../../ports/GamePanel.ts"
import { Virtualization } from "../../ports/Virtualization.ts"
import { parisDay, parisMidnight } from "../billing/invoicing/accountantExport.ts"

export interface DashboardSettings {
  /** A pool (or a panel's allocations) is red when its free share falls below this percentage. */
  readonly poolFreeMinPercent: number
  readonly allocationsFreeMinPercent: number
  /** A node is red when its committed CPU, memory or storage reaches this percentage of what it offers. */
  readonly nodeCommitMaxPercent: number
  /** Today's failed orders, failed payments and open refunds are red above these counts. */
  readonly failedOrdersMax: number
  readonly failedPaymentsMax: number
  readonly openRefundsMax: number
  /** What the placement allows (VPS settings): committed vCPUs up to cores × this, memory up to RAM × this. */
  readonly cpuOvercommit: number
  readonly memoryOvercommit: number
  /** The Proxmox storage new disks go to. */
  readonly storage: string
  /** How long one upstream (a cluster, a panel) may take to answer before its figures show as unavailable. */
  readonly upstreamTimeout: Duration.Duration
}

export const DashboardSettings = Context.Reference<DashboardSettings>("zh/domain/backoffice/DashboardSettings", {
  defaultValue: () => ({
    poolFreeMinPercent: 10,
    allocationsFreeMinPercent: 10,
    nodeCommitMaxPercent: 90,
    failedOrdersMax: 0,
    failedPaymentsMax: 0,
    openRefundsMax: 0,
    cpuOvercommit: 4,
    memoryOvercommit: 1,
    storage: "local-lvm",
    upstreamTimeout: Duration.seconds(5)
  })
})

const MIB = 1024 * 1024
const GIB = 1024 * MIB

/** [start, end) of the French calendar day holding `now`. */
export const parisDayOf = (now: Date): { readonly start: Date; readonly end: Date } => {
  const start = parisMidnight(parisDay(now))
  // The next French day starts at most 25 hours later (the autumn change); its midnight is found from its date.
  const end = parisMidnight(parisDay(new Date(start.getTime() + 26 * 3_600_000)))
  return { start, end }
}

/** An upstream's answer within the timeout, or none (unreachable, failing, slow): the page says "unavailable". */
const within = <A, E, R>(timeout: Duration.Duration, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.timeoutOption(timeout), Effect.catchCause(() => Effect.succeed(Option.none<A>())))

const share = (part: number, whole: number) => whole <= 0 ? 0 : part / whole

interface Resources {
  readonly vcpus: number
  readonly memoryMiB: number
  readonly diskGiB: number
}

/** One node: what our VPS commit on it, what it offers (null when its cluster did not answer), red or not. */
export interface NodeFigure {
  readonly cluster: string
  readonly node: string
  /** Null when its cluster did not answer. */
  readonly online: boolean | null
  readonly committed: Resources
  readonly available: Resources | null
  readonly alert: boolean
}

export const dashboard = Effect.gen(function*() {
  const settings = yield* DashboardSettings
  const catalog = yield* Catalog
  const virtualization = yield* Virtualization
  const panels = yield* GamePanel
  const day = parisDayOf(new Date(yield* Effect.clockWith((clock) => clock.currentTimeMillis)))
  const [recorded, pools, clusters, panelEntries] = yield* Effect.all(
    [(yield* BackOfficeFigures).recorded(day), catalog.ipPools, catalog.clusters, catalog.panels],
    { concurrency: "unbounded" }
  )
  // Each upstream is asked once, all at the same time; one that does not answer leaves only its own figures out.
  const [capacities, panelFree] = yield* Effect.all([
    Effect.forEach(clusters.filter((c) => !c.retired), (c) =>
      Effect.map(within(settings.upstreamTimeout, virtualization.nodeCapacity(c.name, settings.storage)), (nodes) => ({ cluster: c.name, nodes })),
      { concurrency: "unbounded" }),
    Effect.forEach(panelEntries.filter((p) => !p.retired), (p) =>
      Effect.map(
        within(settings.upstreamTimeout, Effect.flatMap(panels.nodes(p.name), (nodes) =>
          Effect.map(Effect.forEach(nodes, (n) => panels.freeAllocations(p.name, n.id), { concurrency: 4 }), (free) =>
            free.reduce((sum, list) => sum + list.length, 0)))),
        (free) => ({ panel: p.name, free })
      ),
      { concurrency: "unbounded" })
  ], { concurrency: "unbounded" })

  const nodes = capacities.flatMap(({ cluster, nodes }): Array<NodeFigure> => {
    const ours = recorded.committed.filter((c) => c.cluster === cluster)
    // A cluster that does not answer: what we commit there is known, not what it offers (red: nobody can tell).
    if (Option.isNone(nodes)) {
      return ours.map((c) => ({
        cluster, node: c.node, online: null, committed: { vcpus: c.vcpus, memoryMiB: c.memoryMiB, diskGiB: c.diskGiB }, available: null, alert: true
      }))
    }
    const names = [...new Set([...nodes.value.map((n) => n.node), ...ours.map((c) => c.node)])].sort()
    return names.map((node) => {
      const committed = ours.find((c) => c.node === node) ?? { vcpus: 0, memoryMiB: 0, diskGiB: 0 }
      const upstream = nodes.value.find((n) => n.node === node)
      const available = upstream === undefined ? null : {
        vcpus: Math.floor(upstream.cpus * settings.cpuOvercommit),
        memoryMiB: Math.floor(upstream.memoryBytes * settings.memoryOvercommit / MIB),
        diskGiB: upstream.storage === null ? 0 : Math.floor(upstream.storage.totalBytes / GIB)
      }
      const limit = settings.nodeCommitMaxPercent / 100
      const alert = available === null || upstream?.online === false || share(committed.vcpus, available.vcpus) >= limit ||
        share(committed.memoryMiB, available.memoryMiB) >= limit || share(committed.diskGiB, available.diskGiB) >= limit
      return {
        cluster,
        node,
        online: upstream?.online ?? false,
        committed: { vcpus: committed.vcpus, memoryMiB: committed.memoryMiB, diskGiB: committed.diskGiB },
        available,
        alert
      }
    })
  })

  return {
    day: { start: day.start, end: day.end },
    mrr: recorded.mrr,
    services: recorded.services,
    orders: { ...recorded.orders, alert: recorded.orders.failed > settings.failedOrdersMax },
    failedPayments: {
      ...recorded.failedPayments,
      alert: recorded.failedPayments.retrying + recorded.failedPayments.awaitingAuthentication > settings.failedPaymentsMax
    },
    openRefunds: { ...recorded.openRefunds, alert: recorded.openRefunds.requests + recorded.openRefunds.orders > settings.openRefundsMax },
    pools: pools.filter((p) => !p.retired).map((p) => ({
      id: p.id,
      cluster: p.cluster,
      free: p.free,
      assigned: p.assigned,
      alert: share(p.free, p.free + p.assigned) * 100 < settings.poolFreeMinPercent
    })),
    allocations: panelFree.map(({ panel, free }) => {
      const held = recorded.allocationsHeld.find((a) => a.panel === panel)?.held ?? 0
      return {
        panel,
        held,
        free: Option.getOrNull(free),
        alert: Option.match(free, { onNone: () => true, onSome: (f) => share(f, f + held) * 100 < settings.allocationsFreeMinPercent })
      }
    }),
    nodes,
    thresholds: {
      poolFreeMinPercent: settings.poolFreeMinPercent,
      allocationsFreeMinPercent: settings.allocationsFreeMinPercent,
      nodeCommitMaxPercent: settings.nodeCommitMaxPercent,
      failedOrdersMax: settings.failedOrdersMax,
      failedPaymentsMax: settings.failedPaymentsMax,
      openRefundsMax: settings.openRefundsMax
    }
  }
}).pipe(Effect.withSpan("dashboard"))
