// The catalog as operators see it (plans, templates, pools, clusters, panels as the catalog file made them, with
// which plans are off sale), and putting a plan on or off sale: persisted apart from the catalog file, audited with
// the state before and after in the same transaction. Off sale, a plan is neither listed nor orderable; subscriptions
// on it go on and renew.
import { Effect, Option, Schema } from "effect"
import { Catalog } from "../../ports/Catalog.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { recordAudit } from "../audit/record.ts"
import type { Operator } from "./customers.ts"

export class PlanNotFound extends Schema.TaggedError<PlanNotFound>()("PlanNotFound", { planId: Schema.String }) {
  override get message() { return `There is no plan "${this.planId}".` }
}

/** Everything the catalog holds, retired entries included, read at once. */
export const catalogOverview = Effect.gen(function*() {
  const catalog = yield* Catalog
  const [plans, offSale, templates, pools, clusters, panels] = yield* Effect.all(
    [catalog.allPlans, catalog.offSale, catalog.allTemplates, catalog.ipPools, catalog.clusters, catalog.panels],
    { concurrency: "unbounded" }
  )
  return { plans: plans.map((plan) => ({ ...plan, onSale: !offSale.has(plan.id) })), templates, pools, clusters, panels }
}).pipe(Effect.withSpan("catalogOverview"))

/** Puts the plan on sale or takes it off; a call that changes nothing is still recorded (who tried, and when). */
export const setPlanOnSale = Effect.fn("setPlanOnSale")(function*(operator: Operator, planId: string, onSale: boolean) {
  const catalog = yield* Catalog
  return yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    const before = yield* catalog.setOnSale(planId, onSale)
    if (Option.isNone(before)) return yield* new PlanNotFound({ planId })
    yield* recordAudit({
      actorId: operator.id,
      actorRole: operator.role,
      action: "catalog.plan_sale_changed",
      subjectUserId: null,
      target: { type: "plan", id: planId },
      address: operator.address,
      before: { onSale: before.value },
      after: { onSale }
    })
    return { id: planId, onSale }
  }))
})
