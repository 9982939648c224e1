// The public view of the catalog (`GET /api/plans`): what a customer can order, and nothing about the upstreams —
// no panel URL, egg, image or environment, no cluster or node.
import { Effect } from "effect"
import { Catalog } from "../../ports/Catalog.ts"

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
 * Active plans by price. A VPS plan is offered with the templates that have an active copy on an active cluster,
 * and not at all when none has; a game plan only while its panel is active.
 */
export const listPlansForSale = Effect.gen(function*() {
  const catalog = yield* Catalog
  const plans = yield* catalog.plans
  const templateIds = [...new Set(plans.flatMap((p) => (p.kind === "vps" ? p.templates : [])))]
  const copies = yield* Effect.forEach(templateIds, (id) => catalog.templates(id), { concurrency: 4 })
  const templateNames = new Map(copies.flatMap((rows) => (rows[0] === undefined ? [] : [[rows[0].id, rows[0].name] as const])))
  const panels = new Set((yield* catalog.panels).filter((p) => !p.retired).map((p) => p.name))
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
