// The reconciler: our records against what the upstreams hold. VMs in our VMID range and panel servers with our
// external ids that no live service uses (orphans), live services whose upstream resource is gone or is no longer
// ours, and failed orders whose undo is still being retried. It reports; it never deletes or changes anything.
import { Clock, Effect, Option } from "effect"
import type { PendingCleanup, ServiceKind } from "../billing/Billing.ts"
import type { GameServer } from "../game/GameServer.ts"
import type { Vps } from "../vps/Vps.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { GamePanel, type PanelServer } from "../../ports/GamePanel.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { Orders } from "../../ports/Orders.ts"
import { Virtualization, type VmSummary } from "../../ports/Virtualization.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import { incidentKeys, raise, settle } from "../ops/alerting.ts"

/** A VM in our VMID range that no live VPS uses and no unfinished order is building. */
export interface OrphanVm {
  readonly cluster: string
  readonly node: string
  readonly vmid: number
  readonly name: string
  /** The order its stamp names (a failed or finished one), or null: not stamped by us. */
  readonly stamp: string | null
}

/** A panel server made for one of our orders, with no live game server record. */
export interface OrphanServer {
  readonly panel: string
  readonly id: number
  readonly name: string
  readonly orderId: string
}

/** A live service whose upstream resource is gone, or now carries another owner's mark. */
export interface BrokenService {
  readonly kind: ServiceKind
  readonly serviceId: string
  readonly orderId: string
  /** `cluster/vmid` or `panel/server id`. */
  readonly resource: string
  readonly problem: "missing" | "not ours"
  readonly detail: string
}

export interface ReconcileReport {
  readonly at: Date
  readonly orphanVms: ReadonlyArray<OrphanVm>
  readonly orphanServers: ReadonlyArray<OrphanServer>
  readonly brokenServices: ReadonlyArray<BrokenService>
  readonly pendingCleanups: ReadonlyArray<PendingCleanup>
  /** Upstreams that could not be read: their part of the report is missing. */
  readonly unreachable: ReadonlyArray<{ readonly upstream: string; readonly detail: string }>
}

export const findingsOf = (report: ReconcileReport) =>
  report.orphanVms.length + report.orphanServers.length + report.brokenServices.length + report.pendingCleanups.length +
  report.unreachable.length

/** Whether the order is still being built (its resources are expected to exist without a service yet). */
const inProgress = (orderId: string | null) =>
  orderId === null
    ? Effect.succeed(false)
    : Effect.map(Effect.flatMap(Orders, (orders) => orders.get(orderId)), (order) =>
      Option.isSome(order) && (order.value.status === "awaiting_payment" || order.value.status === "provisioning"))

const vmsOfCluster = (cluster: string, live: ReadonlyArray<Vps>) =>
  Effect.gen(function*() {
    const virtualization = yield* Virtualization
    const vms = (yield* virtualization.listVms(cluster)).filter((vm) => !vm.template)
    const records = live.filter((vps) => vps.cluster === cluster)
    const byVmid = new Map(records.map((vps) => [vps.vmid, vps]))
    /** The listing's stamp, else the VM's own record (a clone not configured yet carries it only there). */
    const stampOf = (vm: VmSummary) =>
      vm.stamp !== null
        ? Effect.succeed(vm.stamp)
        : virtualization.ownerOf(vm).pipe(Effect.map((o) => o.stamp), Effect.catchTag("VmNotFound", () => Effect.succeed(null)))
    const orphans: Array<OrphanVm> = []
    const broken: Array<BrokenService> = []
    for (const vm of vms) {
      const vps = byVmid.get(vm.vmid)
      if (vps !== undefined) {
        const stamp = yield* stampOf(vm)
        if (stamp !== vps.orderId) {
          broken.push({
            kind: "vps",
            serviceId: vps.id,
            orderId: vps.orderId,
            resource: `${cluster}/${vm.vmid}`,
            problem: "not ours",
            detail: stamp === null ? "the VM carries no stamp" : `the VM carries order ${stamp}'s stamp`
          })
        }
        continue
      }
      if (!vm.managed) continue
      const stamp = yield* stampOf(vm)
      if (yield* inProgress(stamp)) continue
      orphans.push({ cluster, node: vm.node, vmid: vm.vmid, name: vm.name, stamp })
    }
    const present = new Set(vms.map((vm) => vm.vmid))
    for (const vps of records) {
      if (present.has(vps.vmid)) continue
      broken.push({
        kind: "vps",
        serviceId: vps.id,
        orderId: vps.orderId,
        resource: `${cluster}/${vps.vmid}`,
        problem: "missing",
        detail: `no VM ${vps.vmid} on cluster ${cluster}`
      })
    }
    return { orphans, broken }
  })

const serversOfPanel = (panel: string, live: ReadonlyArray<GameServer>) =>
  Effect.gen(function*() {
    const servers = yield* (yield* GamePanel).servers(panel)
    const records = live.filter((s) => s.panel === panel)
    const byId = new Map(records.map((s) => [s.panelServerId, s]))
    const orphans: Array<OrphanServer> = []
    const broken: Array<BrokenService> = []
    const ours = (server: PanelServer) =>
      server.orderId === null
        ? Effect.succeed(false)
        : Effect.map(Effect.flatMap(Orders, (orders) => orders.get(server.orderId ?? "")), Option.isSome)
    for (const server of servers) {
      const record = byId.get(server.id)
      if (record !== undefined) {
        if (server.orderId !== record.orderId) {
          broken.push({
            kind: "game",
            serviceId: record.id,
            orderId: record.orderId,
            resource: `${panel}/${server.id}`,
            problem: "not ours",
            detail: `the server's external id is ${server.orderId ?? "empty"}`
          })
        }
        continue
      }
      // Servers made for something else than our orders (or for nothing) are not ours to report.
      if (server.orderId === null || !(yield* ours(server)) || (yield* inProgress(server.orderId))) continue
      orphans.push({ panel, id: server.id, name: server.name, orderId: server.orderId })
    }
    const present = new Set(servers.map((s) => s.id))
    for (const record of records) {
      if (present.has(record.panelServerId)) continue
      broken.push({
        kind: "game",
        serviceId: record.id,
        orderId: record.orderId,
        resource: `${panel}/${record.panelServerId}`,
        problem: "missing",
        detail: `no server ${record.panelServerId} on panel ${panel}`
      })
    }
    return { orphans, broken }
  })

/** One pass over every cluster and panel of the catalog (retired ones too: their services may still run). */
export const reconcile = Effect.gen(function*() {
  const catalog = yield* Catalog
  const [clusters, panels, liveVps, liveGames, pendingCleanups] = yield* Effect.all([
    catalog.clusters,
    catalog.panels,
    Effect.flatMap(VpsRecords, (r) => r.live),
    Effect.flatMap(GameServerRecords, (r) => r.live),
    Effect.flatMap(Orders, (o) => o.pendingCleanups)
  ])
  const unreachable: Array<{ upstream: string; detail: string }> = []
  const orphanVms: Array<OrphanVm> = []
  const orphanServers: Array<OrphanServer> = []
  const brokenServices: Array<BrokenService> = []
  for (const cluster of clusters) {
    const found = yield* Effect.result(vmsOfCluster(cluster.name, liveVps))
    if (found._tag === "Failure") unreachable.push({ upstream: `cluster ${cluster.name}`, detail: found.failure.message })
    else {
      orphanVms.push(...found.success.orphans)
      brokenServices.push(...found.success.broken)
    }
  }
  for (const panel of panels) {
    const found = yield* Effect.result(serversOfPanel(panel.name, liveGames))
    if (found._tag === "Failure") unreachable.push({ upstream: `panel ${panel.name}`, detail: found.failure.message })
    else {
      orphanServers.push(...found.success.orphans)
      brokenServices.push(...found.success.broken)
    }
  }
  return {
    at: new Date(yield* Clock.currentTimeMillis),
    orphanVms,
    orphanServers,
    brokenServices,
    pendingCleanups,
    unreachable
  } satisfies ReconcileReport
})

/** The report for people: one line per finding under a heading per kind. */
export const formatReport = (report: ReconcileReport): ReadonlyArray<string> => {
  const section = (title: string, lines: ReadonlyArray<string>) => lines.length === 0 ? [] : [title, ...lines.map((l) => `  ${l}`)]
  const lines = [
    ...section("Orphan VMs (in our VMID range, no live VPS):", report.orphanVms.map((vm) =>
      `${vm.cluster}/${vm.node} vmid ${vm.vmid} "${vm.name}"  ${vm.stamp === null ? "no stamp" : `stamp: order ${vm.stamp}`}`)),
    ...section("Orphan panel servers (our external id, no live game server):", report.orphanServers.map((s) =>
      `${s.panel} server ${s.id} "${s.name}"  order ${s.orderId}`)),
    ...section("Live services whose upstream resource is gone or not ours:", report.brokenServices.map((b) =>
      `${b.kind} ${b.serviceId} (order ${b.orderId}) at ${b.resource}: ${b.problem} (${b.detail})`)),
    ...section("Cleanups still pending (failed orders whose undo is being retried, or watched for a late charge):", report.pendingCleanups.map((c) =>
      `${c.kind} order ${c.orderId} since ${c.since.toISOString()}, ${c.attempts} failed attempt(s)${
        c.lastError === null ? "" : `, last: ${c.lastError}`
      }`)),
    ...section("Not reachable (not reconciled):", report.unreachable.map((u) => `${u.upstream}: ${u.detail}`))
  ]
  const total = findingsOf(report)
  return [
    `Reconciled at ${report.at.toISOString()}: ${total === 0 ? "nothing to report" : `${total} finding(s)`}.`,
    ...lines
  ]
}

/**
 * The hourly run: the report in the log (a warning per finding; nothing is changed), and the findings an incident for
 * the operators (opened by a run that finds something, resolved by one that finds nothing).
 */
export const reconcileAndLog = Effect.gen(function*() {
  const report = yield* reconcile
  const [summary, ...details] = formatReport(report)
  const findings = findingsOf(report)
  if (findings === 0) {
    yield* Effect.logInfo(`reconcile: ${summary}`)
    return yield* settle(incidentKeys.reconciler)
  }
  yield* Effect.logWarning(`reconcile: ${summary}`)
  for (const line of details) yield* Effect.logWarning(`reconcile: ${line.trim()}`)
  yield* raise(incidentKeys.reconciler, {
    en: `The reconciler found ${findings} difference(s) between our records and the upstreams (npm run admin -- reconcile).`,
    fr: `La réconciliation a trouvé ${findings} écart(s) entre nos enregistrements et les services en amont (npm run admin -- reconcile).`
  })
})
