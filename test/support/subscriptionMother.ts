// A subscription as billing opens it, in the backend under test: its order first (subscriptions reference orders),
// then the subscription of that order, both at `at`.
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { OrderId, PlanId, SubscriptionId } from "../../domain/billing/Billing.ts"
import { Orders } from "../../ports/Orders.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"

export const subscriptionOf = (userId: string, options: {
  readonly at: Date
  readonly periodEnd: Date
  /** Default `vps-s`, of kind `vps` with its six steps. */
  readonly plan?: { readonly id: string; readonly kind: string; readonly steps: number }
}) =>
  Effect.gen(function*() {
    const plan = options.plan ?? { id: "vps-s", kind: "vps", steps: 6 }
    const order = yield* (yield* Orders).create({
      id: OrderId.make(randomUUID()),
      userId,
      planId: plan.id,
      kind: plan.kind,
      options: {},
      totalSteps: plan.steps,
      expiresAt: new Date(options.at.getTime() + 3_600_000),
      now: options.at
    })
    return yield* (yield* Subscriptions).create({
      id: SubscriptionId.make(randomUUID()),
      userId,
      planId: PlanId.make(plan.id),
      kind: plan.kind,
      orderId: order.id,
      currentPeriodEnd: options.periodEnd,
      now: options.at
    })
  })
