// A service as an operator reads it: the subscription, what its product records and what its upstream holds now (the
// product inspects it), the provisioning's steps as its order recorded them, and its holds; the reconciler's checks
// for this one service; and resuming its provisioning when it is stuck.
import { Clock, Effect, Option, Schema } from "effect"
import { Orders } from "../../ports/Orders.ts"
import { ServiceHolds } from "../../ports/ServiceHolds.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { UserId } from "../account/User.ts"
import { recordAudit } from "../audit/record.ts"
import type { Order } from "../billing/Billing.ts"
import { HostedServices, type ServiceInspection } from "../billing/HostedService.ts"
import { provision } from "../billing/Ordering.ts"
import type { Operator } from "./customers.ts"
import { ServiceNotFound } from "./serviceHolds.ts"

export class OrderNotResumable extends Schema.TaggedError<OrderNotResumable>()("OrderNotResumable", { status: Schema.String }) {
  override get message() {
    return this.status === "failed"
      ? "This order failed and its payment was refunded: nothing is left to resume; retry it instead (the customer pays again)."
      : `This order is ${this.status}: only an order still provisioning can be resumed.`
  }
}

/** Where each of the provisioning's steps stands, from the order's own progress record. */
export type StepState = "done" | "current" | "failed" | "pending"

export const stepsOf = (order: Order, names: ReadonlyArray<string>): ReadonlyArray<{ readonly name: string; readonly state: StepState }> =>
  names.map((name, index) => {
    const step = index + 1
    const state: StepState = order.status === "completed" || step < order.step
      ? "done"
      : step === order.step
      ? order.status === "failed" ? "failed" : order.status === "provisioning" ? "current" : "done"
      : order.status === "failed" && order.step === 0 && step === 1
      ? "failed"
      : "pending"
    return { name, state }
  })

/** What the reconciler would report of this one service, from its upstream's live state and its order. */
export interface Finding {
  readonly problem: "missing" | "not ours" | "unreachable" | "cleanup pending"
  readonly detail: string
}

const findingsOf = (inspection: Option.Option<ServiceInspection>, order: Option.Option<Order>, cleanups: ReadonlyArray<{ readonly orderId: string; readonly lastError: string | null; readonly attempts: number }>) => {
  const findings: Array<Finding> = []
  if (Option.isSome(inspection)) {
    const live = inspection.value
    if (!live.reachable) findings.push({ problem: "unreachable", detail: `${live.upstream}: ${live.detail}` })
    else if (live.ownership === "gone" && live.state === "missing") findings.push({ problem: "missing", detail: `${live.upstream} holds nothing for it` })
    else if (live.ownership === "foreign") findings.push({ problem: "not ours", detail: `${live.upstream} holds something else there` })
  }
  for (const cleanup of cleanups) {
    if (Option.isSome(order) && cleanup.orderId === order.value.id) {
      findings.push({ problem: "cleanup pending", detail: `${cleanup.attempts} attempts${cleanup.lastError === null ? "" : `, last: ${cleanup.lastError}`}` })
    }
  }
  return findings
}

export const servicePage = Effect.fn("servicePage")(function*(subscriptionId: string) {
  const subscription = yield* (yield* Subscriptions).get(subscriptionId)
  if (Option.isNone(subscription)) return yield* new ServiceNotFound()
  const product = yield* (yield* HostedServices).of(subscription.value.kind)
  const orders = yield* Orders
  const [holds, service, upstream, order] = yield* Effect.all([
    (yield* ServiceHolds).history(subscriptionId),
    product.summary(subscriptionId),
    product.inspect(subscriptionId),
    orders.get(subscription.value.orderId)
  ], { concurrency: "unbounded" })
  return {
    subscription: subscription.value,
    service,
    upstream,
    order: Option.map(order, (o) => ({ order: o, steps: stepsOf(o, product.steps) })),
    hold: Option.fromNullishOr(holds.find((h) => h.liftedAt === null)),
    holds
  }
})

/** The reconciler's checks for one service: its upstream's live state against our record, and its order's undo. */
export const reconcileService = Effect.fn("reconcileService")(function*(subscriptionId: string) {
  const subscription = yield* (yield* Subscriptions).get(subscriptionId)
  if (Option.isNone(subscription)) return yield* new ServiceNotFound()
  const product = yield* (yield* HostedServices).of(subscription.value.kind)
  const orders = yield* Orders
  const [inspection, order, cleanups] = yield* Effect.all([
    product.inspect(subscriptionId),
    orders.get(subscription.value.orderId),
    orders.pendingCleanups
  ], { concurrency: "unbounded" })
  return { at: new Date(yield* Clock.currentTimeMillis), findings: findingsOf(inspection, order, cleanups) }
})

/**
 * A provisioning that stopped moving (its process died, an upstream held it) is started again from where its durable
 * workflow stands — the steps it finished are not done twice — now, rather than at the recovery cron's next pass.
 */
export const resumeProvisioning = Effect.fn("resumeProvisioning")(function*(operator: Operator, subscriptionId: string) {
  const subscription = yield* (yield* Subscriptions).get(subscriptionId)
  if (Option.isNone(subscription)) return yield* new ServiceNotFound()
  const order = yield* (yield* Orders).get(subscription.value.orderId)
  if (Option.isNone(order)) return yield* new ServiceNotFound()
  if (order.value.status !== "provisioning") return yield* new OrderNotResumable({ status: order.value.status })
  yield* recordAudit({
    actorId: operator.id,
    actorRole: operator.role,
    action: "staff.provisioning_resumed",
    subjectUserId: UserId.make(subscription.value.userId),
    target: { type: "order", id: order.value.id },
    address: operator.address,
    details: { step: order.value.step, stepName: order.value.stepName }
  })
  yield* provision(order.value.kind, order.value.id)
  return order.value
})
