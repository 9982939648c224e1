// A third product, for tests only: a DNS zone on an in-memory name server. It proves the seam between billing and
// what it sells — a product is its own folder of code plus one registration, and billing runs it untouched.
import { Clock, Context, Duration, Effect, Layer, Option, Ref, Schema } from "effect"
import { Workflow } from "effect/workflow"
import { registerProduct } from "../../domain/billing/registerProduct.ts"
import { PlanId } from "../../domain/billing/Billing.ts"
import type { PlanTerms } from "../../domain/billing/HostedService.ts"
import { InvalidOrderOption } from "../../domain/billing/BillingErrors.ts"
import { periodWorkflow, terminationWorkflow } from "../../domain/billing/lapse.ts"
import { moveOrder } from "../../domain/billing/orderMoves.ts"
import {
  orderWithOptions,
  provisioned,
  provisioningStep,
  provisioningWorkflow,
  reportStep,
  StepFailed,
  undoing
} from "../../domain/billing/provisioning.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { dieOnDatabaseOutage } from "../../domain/ops/dieOnDatabaseOutage.ts"

/** The name server: zones by name, each stamped with the order that made it. */
export interface Zone {
  readonly name: string
  readonly orderId: string
  readonly serving: boolean
}

export class NameServer extends Context.Service<NameServer, {
  readonly zones: Ref.Ref<ReadonlyMap<string, Zone>>
  /** Names refused from now on, as an upstream that rejects a zone would. */
  readonly refused: Ref.Ref<ReadonlySet<string>>
  /** How many zones it holds at most. */
  readonly capacity: Ref.Ref<number>
}>()("test/NameServer") {
  static readonly layer = Layer.effect(
    NameServer,
    Effect.all({
      zones: Ref.make<ReadonlyMap<string, Zone>>(new Map()),
      refused: Ref.make<ReadonlySet<string>>(new Set()),
      capacity: Ref.make(Number.POSITIVE_INFINITY)
    })
  )
}

/** Where every zone we sell is served from. */
export const NAME_SERVER = "ns1.zh.invalid"

const withZone = (name: string, update: (zone: Zone | undefined) => Zone | undefined) =>
  Effect.flatMap(NameServer, (server) =>
    Ref.update(server.zones, (zones) => {
      const next = new Map(zones)
      const zone = update(zones.get(name))
      if (zone === undefined) next.delete(name)
      else next.set(name, zone)
      return next
    }))

/** Our record of a zone we sell, per subscription. */
export interface ZoneRecord {
  readonly id: string
  readonly subscriptionId: string
  readonly orderId: string
  readonly zone: string
  readonly status: "active" | "suspended" | "deleted"
  readonly graceUntil: Date | null
}

export class ZoneRecords extends Context.Service<ZoneRecords, Ref.Ref<ReadonlyMap<string, ZoneRecord>>>()("test/ZoneRecords") {
  static readonly layer = Layer.effect(ZoneRecords, Ref.make<ReadonlyMap<string, ZoneRecord>>(new Map()))
}

const recordOf = (subscriptionId: string) =>
  Effect.map(Effect.flatMap(ZoneRecords, Ref.get), (records) => Option.fromNullishOr(records.get(subscriptionId)))

const setRecord = (subscriptionId: string, update: (record: ZoneRecord) => ZoneRecord) =>
  Effect.flatMap(ZoneRecords, (records) =>
    Ref.update(records, (all) => {
      const record = all.get(subscriptionId)
      return record === undefined ? all : new Map(all).set(subscriptionId, update(record))
    }))

export const dnsPlan: PlanTerms = { id: PlanId.make("dns-zone"), name: "DNS zone", priceCents: 100 }

const ZoneOptions = Schema.Struct({ zone: Schema.String.check(Schema.isPattern(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/)) })

export const DNS_STEPS = ["Creating the zone", "Publishing the zone"] as const

const gracePeriod = Duration.days(7)

export const ProvisionDnsZone = provisioningWorkflow("ProvisionDnsZone")
const SuspendDnsZone = periodWorkflow("SuspendDnsZone")
const RestoreDnsZone = periodWorkflow("RestoreDnsZone")
const TerminateDnsZone = terminationWorkflow("TerminateDnsZone")

const progress = reportStep(DNS_STEPS)

const ProvisionDnsZoneLive = ProvisionDnsZone.toLayer(Effect.fn(function*({ orderId }) {
  const build = Effect.gen(function*() {
    const zone = yield* provisioningStep({
      name: "create",
      success: Schema.String,
      execute: dieOnDatabaseOutage(Effect.gen(function*() {
        yield* progress(orderId, 1)
        const { options } = yield* orderWithOptions(orderId, ZoneOptions)
        yield* withZone(options.zone, () => ({ name: options.zone, orderId, serving: false }))
        return options.zone
      }))
    })
    return yield* provisioningStep({
      name: "publish",
      success: Schema.String,
      execute: dieOnDatabaseOutage(Effect.gen(function*() {
        yield* progress(orderId, 2)
        if ((yield* Ref.get((yield* NameServer).refused)).has(zone)) {
          return yield* new StepFailed({ step: 2, reason: "The zone could not be published.", detail: "refused" })
        }
        yield* withZone(zone, (z) => z === undefined ? z : { ...z, serving: true })
        const { order } = yield* orderWithOptions(orderId, ZoneOptions)
        const subscriptionId = order.subscriptionId ?? ""
        const id = `zone-${orderId}`
        yield* Effect.flatMap(ZoneRecords, (records) =>
          Ref.update(records, (all) =>
            new Map(all).set(subscriptionId, { id, subscriptionId, orderId, zone, status: "active", graceUntil: null })))
        yield* (yield* Subscriptions).attachService(subscriptionId, id)
        yield* moveOrder(orderId, { event: "provisioned", serviceId: id, oneTimeSecret: null }, new Date(yield* Clock.currentTimeMillis))
        return id
      }))
    })
  })
  return yield* provisioned(
    orderId,
    build,
    () => UndoDnsZone.execute({ orderId }, { discard: true, detached: true }),
    // A zone is reached by its name.
    (id) => Effect.map(Effect.flatMap(ZoneRecords, Ref.get), (records) => [...records.values()].find((r) => r.id === id)?.zone ?? "")
  )
}))

const UndoDnsZone = Workflow.make("UndoProvisionDnsZone", {
  payload: { orderId: Schema.String },
  idempotencyKey: ({ orderId }) => orderId
})

const UndoDnsZoneLive = UndoDnsZone.toLayer(Effect.fn(function*({ orderId }) {
  yield* undoing(
    orderId,
    Effect.flatMap(orderWithOptions(orderId, ZoneOptions), ({ options }) => withZone(options.zone, () => undefined))
  )
}))

const suspendZone = (subscriptionId: string, periodEnd: Date) =>
  Effect.gen(function*() {
    const record = yield* recordOf(subscriptionId)
    if (Option.isNone(record) || record.value.status === "deleted") return
    yield* withZone(record.value.zone, (z) => z === undefined ? z : { ...z, serving: false })
    const graceUntil = new Date(periodEnd.getTime() + Duration.toMillis(gracePeriod))
    yield* setRecord(subscriptionId, (r) => ({ ...r, status: "suspended", graceUntil }))
  })

const restoreZone = (subscriptionId: string) =>
  Effect.gen(function*() {
    const record = yield* recordOf(subscriptionId)
    if (Option.isNone(record) || record.value.status === "deleted") return
    yield* withZone(record.value.zone, (z) => z === undefined ? z : { ...z, serving: true })
    yield* setRecord(subscriptionId, (r) => ({ ...r, status: "active", graceUntil: null }))
  })

const removeZone = (subscriptionId: string) =>
  Effect.gen(function*() {
    const record = yield* recordOf(subscriptionId)
    if (Option.isSome(record)) yield* withZone(record.value.zone, () => undefined)
    return true
  })

const releaseZone = (subscriptionId: string) => setRecord(subscriptionId, (r) => ({ ...r, status: "deleted", graceUntil: null }))

/** The product's registration: the one line a test environment (or app/) adds to sell it. */
export const DnsZoneHosting = Layer.mergeAll(
  registerProduct({
    kind: "dns-zone",
    steps: DNS_STEPS,
    forSale: (planId) => Effect.succeed(planId === dnsPlan.id ? Option.some(dnsPlan) : Option.none()),
    plan: (planId) => Effect.succeed(planId === dnsPlan.id ? Option.some(dnsPlan) : Option.none()),
    termsOf: (plan) => plan,
    hasRoom: () =>
      Effect.flatMap(NameServer, (server) =>
        Effect.map(Effect.all([Ref.get(server.zones), Ref.get(server.capacity)]), ([zones, capacity]) => zones.size < capacity)),
    summary: (subscriptionId) =>
      Effect.map(recordOf(subscriptionId), Option.map((r) => ({
        name: r.zone,
        address: r.status === "deleted" ? "" : NAME_SERVER,
        state: r.status
      }))),
    // The name server is in memory: it always answers; what it serves is compared with our record.
    inspect: (subscriptionId) =>
      Effect.gen(function*() {
        const record = yield* recordOf(subscriptionId)
        if (Option.isNone(record)) return Option.none()
        const served = (yield* Ref.get((yield* NameServer).zones)).get(record.value.zone)
        return Option.some({
          reachable: true as const,
          upstream: "name-server",
          state: served === undefined ? "missing" : served.serving ? "serving" : "stopped",
          ownership: served === undefined ? "gone" as const : served.orderId === record.value.orderId ? "ours" as const : "foreign" as const,
          facts: [["zone", record.value.zone] as const]
        })
      }),
    checkOptions: (_plan, raw) =>
      Schema.decodeUnknownEffect(ZoneOptions)(raw).pipe(
        Effect.mapError(() => new InvalidOrderOption({ field: "options.zone", problem: "must be a domain name" }))
      ),
    standing: (subscriptionId) =>
      Effect.map(recordOf(subscriptionId), Option.map((r) => ({ suspended: r.status === "suspended", graceUntil: r.graceUntil }))),
    suspend: suspendZone,
    bringBack: restoreZone,
    remove: removeZone,
    release: releaseZone,
    transient: () => false,
    provisioning: ProvisionDnsZone,
    lapse: SuspendDnsZone,
    restore: RestoreDnsZone,
    termination: TerminateDnsZone
  }),
  ProvisionDnsZoneLive,
  UndoDnsZoneLive
).pipe(Layer.provideMerge(Layer.mergeAll(NameServer.layer, ZoneRecords.layer)))
