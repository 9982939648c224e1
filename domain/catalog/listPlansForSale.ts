// The public view of the catalog (`GET /api/plans`): what a customer can order, and nothing about the upstreams —
// no panel URL, egg, image or environment, no cluster or node.
import { Context, Effect, Option } from "effect"
import { Catalog } from "../../ports/Catalog.ts"
import { PlanOffSale } from "../billing/BillingErrors.ts"
import { type Plan, termsOf } from "./Plan.ts"

export interface VpsPlanForSale {
  readonly id: string
  readonly kind: "vps"
  readonly name: string
  readonly priceCents: number
  readonly vcpu: number
  readonly ramMiB: number
  readonly diskGiB: number
  readonly snapshotLimit: number
  /** The OS templates that can be installed now, in the plan's order. */
  readonly templates: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

export interface GamePlanForSale {
  readonly id: string
  readonly kind: "game"
  readonly name: string
  readonly priceCents: number
  readonly memoryMiB: number
  readonly diskMiB: number
  readonly cpuPercent: number
  readonly databases: number
  readonly backups: number
  readonly allocations: number
  readonly userVariables: ReadonlyArray<string>
}

export type PlanForSale = VpsPlanForSale | GamePlanForSale

/**
 * Registered upstreams whose plans are nevertheless not for sale. Outside sandbox mode the wiring names the simulated
 * cluster and panel a former sandbox run left in the catalog: nothing serves them any more, and their plans are demo
 * plans. Nothing by default.
 */
export const UnsoldUpstreams = Context.Reference<{
  readonly clusters: ReadonlyArray<string>
  readonly panels: ReadonlyArray<string>
}>("zh/domain/catalog/UnsoldUpstreams", { defaultValue: () => ({ clusters: [], panels: [] }) })

/** The names of the given templates that have an active copy on an active cluster that sells, by id. */
const saleableTemplates = Effect.fn("saleableTemplates")(function*(ids: ReadonlyArray<string>) {
  const catalog = yield* Catalog
  const unsold = yield* UnsoldUpstreams
  const copies = yield* Effect.forEach(ids, (id) => catalog.templates(id), { concurrency: 4 })
  return new Map(copies.flatMap((rows) => {
    const row = rows.find((r) => !unsold.clusters.includes(r.cluster))
    return row === undefined ? [] : [[row.id, row.name] as const]
  }))
})

/** The names of the active panels that sell. */
const saleablePanels = Effect.gen(function*() {
  const unsold = yield* UnsoldUpstreams
  return new Set((yield* (yield* Catalog).panels).filter((p) => !p.retired && !unsold.panels.includes(p.name)).map((p) => p.name))
})

/**
 * Active plans by price, apart from those an operator took off sale. A VPS plan is offered with the templates that have an active copy on an active cluster,
 * and not at all when none has; a game plan only while its panel is active.
 */
export const listPlansForSale = Effect.gen(function*() {
  const catalog = yield* Catalog
  const offSale = yield* catalog.offSale
  const plans = (yield* catalog.plans).filter((plan) => !offSale.has(plan.id))
  const templateNames = yield* saleableTemplates([...new Set(plans.flatMap((p) => (p.kind === "vps" ? p.templates : [])))])
  const panels = yield* saleablePanels
  return plans.flatMap((plan): Array<PlanForSale> => {
    const { id, name, priceCents } = plan
    if (plan.kind === "game") {
      if (!panels.has(plan.panel)) return []
      const { allocations, backups, cpuPercent, databases, diskMiB, memoryMiB, userVariables } = plan
      return [{ id, kind: "game", name, priceCents, memoryMiB, diskMiB, cpuPercent, databases, backups, allocations, userVariables }]
    }
    const templates = plan.templates.flatMap((t) => {
      const templateName = templateNames.get(t)
      return templateName === undefined ? [] : [{ id: t, name: templateName }]
    })
    if (templates.length === 0) return []
    const { diskGiB, ramMiB, snapshotLimit, vcpu } = plan
    return [{ id, kind: "vps", name, priceCents, vcpu, ramMiB, diskGiB, snapshotLimit, templates }]
  })
})

/**
 * The plan if it is for sale now, by the rules of `listPlansForSale` (so what is listed is what can be ordered);
 * `PlanOffSale` for one an operator took off sale.
 */
export const planForSale = Effect.fn("planForSale")(function*(planId: string) {
  const catalog = yield* Catalog
  const found = yield* catalog.plan(planId)
  if (Option.isNone(found) || found.value.retired) return Option.none<Plan>()
  // Known but taken off sale by an operator: said as such (409), not as a plan that does not exist.
  if ((yield* catalog.offSale).has(planId)) return yield* new PlanOffSale({ planId })
  const plan: Plan = found.value
  const onSale = plan.kind === "game"
    ? (yield* saleablePanels).has(plan.panel)
    : (yield* saleableTemplates(plan.templates)).size > 0
  return onSale ? Option.some(plan) : Option.none<Plan>()
})

/** One product's plans: those of `kind` for sale now, and the terms of any of them (retired ones too, for renewals). */
export const plansOf = <const Kind extends Plan["kind"]>(kind: Kind) => {
  const ofKind = (plan: Plan): plan is Extract<Plan, { readonly kind: Kind }> => plan.kind === kind
  /** Any of them, retired ones included. */
  const any = (planId: string) => Effect.map(Effect.flatMap(Catalog, (catalog) => catalog.plan(planId)), Option.filter(ofKind))
  return {
    forSale: (planId: string) => Effect.map(planForSale(planId), Option.filter(ofKind)),
    any,
    terms: (planId: string) => Effect.map(any(planId), Option.map(termsOf))
  }
}
