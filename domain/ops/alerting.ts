// The operators' alerts by e-mail (issue 14 §3), each sent once per incident. A check pass on its own schedule (one
// runner of the cluster runs it) looks at what can go wrong without anyone noticing: provisioning failures above a
// rate, webhook signature failures above a rate, an IP pool or a panel's free allocations below a threshold, a cron
// late; the reconciler raises its own findings. Each trouble is an incident under a key: opened once (the store lets
// one caller open it), told once, resolved when the check no longer finds it; the same trouble coming back later is
// a new incident, told again.
import { Clock, Context, Cron, Duration, Effect, Metric, Option } from "effect"
import { Catalog } from "../../ports/Catalog.ts"
import { GamePanel } from "../../ports/GamePanel.ts"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import { Mailer } from "../../ports/Mailer.ts"
import { type Incident, OpsRecords } from "../../ports/OpsRecords.ts"
import { Orders } from "../../ports/Orders.ts"
import { escapeHtml } from "../notices/mailLayout.ts"
import { alert } from "./alert.ts"
import { ipPoolFree, panelAllocationsFree } from "./metrics.ts"

/** A count over a sliding window: at least `count` within `within` is an incident. */
export interface RateThreshold {
  readonly count: number
  readonly within: Duration.Duration
}

export class AlertSettings extends Context.Service<AlertSettings, {
  /** The operators' address (ALERT_EMAIL); none: incidents are only logged (the `ALERT` line). */
  readonly to: Option.Option<string>
  readonly provisioningFailures: RateThreshold
  readonly webhookSignatureFailures: RateThreshold
  /** Fewer free addresses than this in a pool (not retired) is an incident. */
  readonly ipPoolMinFree: number
  /** Fewer free allocations than this on a panel's public nodes is an incident. */
  readonly panelMinFreeAllocations: number
  /** A cron whose next run is overdue by more than this is an incident. */
  readonly cronLate: Duration.Duration
  /** The crons watched, on their schedules. */
  readonly crons: ReadonlyArray<{ readonly name: string; readonly cron: Cron.Cron }>
}>()("zh/domain/ops/AlertSettings") {}

/** What the pass reads of the capacity left: every IP pool, and each panel it could reach. */
export class CapacityReadings extends Context.Service<CapacityReadings, {
  readonly ipPools: Effect.Effect<ReadonlyArray<{ readonly id: string; readonly retired: boolean; readonly free: number }>, DatabaseUnavailable>
  /** A panel that does not answer is left out (its incident stays as it was); `free` is null for a retired one. */
  readonly panels: Effect.Effect<ReadonlyArray<{ readonly panel: string; readonly free: number | null }>, DatabaseUnavailable>
}>()("zh/domain/ops/CapacityReadings") {}

type PanelReading = CapacityReadings["Service"]["panels"] extends Effect.Effect<ReadonlyArray<infer A>, infer _E> ? A : never

/** The reading of one panel: one element, or none when the panel does not answer (logged). */
const panelFree = (name: string) =>
  Effect.gen(function*() {
    const panel = yield* GamePanel
    const nodes = yield* panel.nodes(name)
    const free = yield* Effect.forEach(nodes.filter((n) => n.public), (n) => panel.freeAllocations(name, n.id))
    return [{ panel: name, free: free.reduce((sum, list) => sum + list.length, 0) }]
  }).pipe(Effect.catchCause((cause): Effect.Effect<ReadonlyArray<PanelReading>> =>
    Effect.as(Effect.logWarning(`alerts: the free allocations of panel ${name} could not be read`, cause), [])))

/** The readings from the catalog and the panels themselves (their public nodes' free allocations). */
export const liveCapacityReadings = Effect.gen(function*() {
  const catalog = yield* Catalog
  const context = yield* Effect.context<GamePanel>()
  return CapacityReadings.of({
    ipPools: catalog.ipPools,
    panels: Effect.flatMap(catalog.panels, (panels) =>
      Effect.forEach(panels, (entry) => entry.retired ? Effect.succeed([{ panel: entry.name, free: null }]) : panelFree(entry.name), {
        concurrency: 4
      }).pipe(Effect.map((all) => all.flat()), Effect.provideContext(context)))
  })
})

export type Summary = Incident["summary"]

/** Opens the incident `key` (logged with the `ALERT` prefix by the one caller that opens it); told by the next pass. */
export const raise = (key: string, summary: Summary) =>
  Effect.gen(function*() {
    const at = new Date(yield* Clock.currentTimeMillis)
    if (yield* (yield* OpsRecords).open(key, summary, at)) yield* alert(summary.en, { incident: key })
  })

/** Resolves the incident `key`, if open: the same trouble later is a new incident. */
export const settle = (key: string) =>
  Effect.gen(function*() {
    const at = new Date(yield* Clock.currentTimeMillis)
    if (yield* (yield* OpsRecords).resolve(key, at)) yield* Effect.logInfo(`alert resolved: ${key}`)
  })

/** Raises `key` with `summary` when it is given, resolves it otherwise. */
const judge = (key: string, summary: Summary | null) => summary === null ? settle(key) : raise(key, summary)

/** Counts one occurrence of `kind` for a rate alert (see SIGNALS). */
export const countSignal = (kind: Signal) =>
  Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.flatMap(OpsRecords, (ops) => ops.signal(kind, new Date(at))))

export type Signal = "webhook_signature_failure"

/** The incident keys (stable: the mail and the log name them). */
export const incidentKeys = {
  provisioningFailures: "provisioning-failures",
  webhookSignatureFailures: "webhook-signature-failures",
  ipPool: (id: string) => `ip-pool-low:${id}`,
  panel: (name: string) => `panel-allocations-low:${name}`,
  cronLate: (name: string) => `cron-late:${name}`,
  reconciler: "reconciler-findings"
} as const

const minutes = (d: Duration.Duration) => Math.round(Duration.toMillis(d) / 60_000)

const checkRates = Effect.gen(function*() {
  const settings = yield* AlertSettings
  const now = yield* Clock.currentTimeMillis
  const since = (t: RateThreshold) => new Date(now - Duration.toMillis(t.within))
  const failed = yield* (yield* Orders).failedSince(since(settings.provisioningFailures))
  yield* judge(
    incidentKeys.provisioningFailures,
    failed < settings.provisioningFailures.count ? null : {
      en: `${failed} orders failed in the last ${minutes(settings.provisioningFailures.within)} minutes (alert from ${settings.provisioningFailures.count}).`,
      fr: `${failed} commandes ont échoué ces ${minutes(settings.provisioningFailures.within)} dernières minutes (alerte à partir de ${settings.provisioningFailures.count}).`
    }
  )
  const ops = yield* OpsRecords
  const refused = yield* ops.signalsSince("webhook_signature_failure", since(settings.webhookSignatureFailures))
  yield* judge(
    incidentKeys.webhookSignatureFailures,
    refused < settings.webhookSignatureFailures.count ? null : {
      en: `${refused} payment webhooks were refused for a bad signature in the last ${minutes(settings.webhookSignatureFailures.within)} minutes (alert from ${settings.webhookSignatureFailures.count}).`,
      fr: `${refused} notifications de paiement ont été refusées pour une signature invalide ces ${minutes(settings.webhookSignatureFailures.within)} dernières minutes (alerte à partir de ${settings.webhookSignatureFailures.count}).`
    }
  )
  // No window reaches further back than the longest one.
  const longest = Math.max(Duration.toMillis(settings.webhookSignatureFailures.within), Duration.toMillis(settings.provisioningFailures.within))
  yield* ops.pruneSignals(new Date(now - longest))
})

const checkCapacity = Effect.gen(function*() {
  const settings = yield* AlertSettings
  const readings = yield* CapacityReadings
  for (const pool of yield* readings.ipPools) {
    if (!pool.retired) yield* Metric.update(ipPoolFree({ pool: pool.id }), pool.free)
    yield* judge(
      incidentKeys.ipPool(pool.id),
      pool.retired || pool.free >= settings.ipPoolMinFree ? null : {
        en: `IP pool ${pool.id} has ${pool.free} free addresses left (alert below ${settings.ipPoolMinFree}).`,
        fr: `Le pool d'adresses IP ${pool.id} n'a plus que ${pool.free} adresses libres (alerte en dessous de ${settings.ipPoolMinFree}).`
      }
    )
  }
  for (const { free, panel } of yield* readings.panels) {
    if (free !== null) yield* Metric.update(panelAllocationsFree({ panel }), free)
    yield* judge(
      incidentKeys.panel(panel),
      free === null || free >= settings.panelMinFreeAllocations ? null : {
        en: `Panel ${panel} has ${free} free allocations left on its public nodes (alert below ${settings.panelMinFreeAllocations}).`,
        fr: `Le panel ${panel} n'a plus que ${free} allocations libres sur ses nœuds publics (alerte en dessous de ${settings.panelMinFreeAllocations}).`
      }
    )
  }
})

const checkCrons = Effect.gen(function*() {
  const settings = yield* AlertSettings
  const now = yield* Clock.currentTimeMillis
  const runs = new Map((yield* (yield* OpsRecords).cronRuns).map((r) => [r.name, r.lastStartedAt]))
  for (const { cron, name } of settings.crons) {
    // A cron that never ran (a new database) is not judged: there is no run to be late after.
    const last = runs.get(name)
    if (last === undefined) continue
    const due = Cron.next(cron, last).getTime()
    const late = now - due
    yield* judge(
      incidentKeys.cronLate(name),
      late <= Duration.toMillis(settings.cronLate) ? null : {
        en: `The cron ${name} has not run since ${last.toISOString()}: its run due at ${new Date(due).toISOString()} is ${Math.round(late / 60_000)} minutes late.`,
        fr: `La tâche planifiée ${name} ne s'est pas exécutée depuis le ${last.toISOString()} : l'exécution prévue le ${new Date(due).toISOString()} a ${Math.round(late / 60_000)} minutes de retard.`
      }
    )
  }
})

/** The e-mail of one incident, in English then in French (operators read either). */
export const alertMail = (to: string, incident: Incident) => {
  const opened = incident.openedAt.toISOString()
  const en = [
    `Incident ${incident.key}, opened at ${opened}:`,
    incident.summary.en,
    "This alert is sent once per incident; it is resolved when the check no longer finds the trouble, and a recurrence is a new incident."
  ]
  const fr = [
    `Incident ${incident.key}, ouvert le ${opened} :`,
    incident.summary.fr,
    "Cette alerte n'est envoyée qu'une fois par incident ; il est clos quand la vérification ne constate plus le problème, et s'il revient c'est un nouvel incident."
  ]
  return {
    to,
    subject: `[ALERT] ${incident.summary.en} / [ALERTE] ${incident.summary.fr}`,
    text: [...en, "", "—", "", ...fr].join("\n"),
    html: [...en.map((p) => `<p>${escapeHtml(p)}</p>`), "<hr>", ...fr.map((p) => `<p lang="fr">${escapeHtml(p)}</p>`)].join("\n")
  }
}

/** Tells the operators of each incident not told yet; a mail server that refuses leaves it for the next pass. */
export const tellIncidents = Effect.gen(function*() {
  const settings = yield* AlertSettings
  const ops = yield* OpsRecords
  const mailer = yield* Mailer
  const untold = yield* ops.claimUntold(new Date(yield* Clock.currentTimeMillis))
  if (Option.isNone(settings.to)) return
  const to = settings.to.value
  for (const incident of untold) {
    yield* mailer.send(alertMail(to, incident)).pipe(
      Effect.catchTag("MailNotSent", (e) =>
        Effect.andThen(
          Effect.logWarning(`alert ${incident.key} not e-mailed (${e.detail}): tried again at the next pass`),
          ops.untold(incident.id)
        ))
    )
  }
})

/**
 * One check pass: every rule judged (a rule whose reading fails is logged and leaves its incidents as they were),
 * then the incidents opened since the last pass e-mailed.
 */
export const checkAlerts = Effect.gen(function*() {
  const guarded = <R>(name: string, check: Effect.Effect<void, DatabaseUnavailable, R>) =>
    check.pipe(Effect.catchCause((cause) => Effect.logError(`alerts: the ${name} check failed`, cause)))
  yield* guarded("rates", checkRates)
  yield* guarded("capacity", checkCapacity)
  yield* guarded("crons", checkCrons)
  yield* tellIncidents
})
