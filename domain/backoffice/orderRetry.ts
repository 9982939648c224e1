// An admin retries a failed order once its cause is fixed. The customer was refunded when it failed and keeps that
// refund; the retry is a new order (the durable provisioning is keyed by order id, and the failed one's outcome is
// stored) for the same customer, plan and options, awaiting the customer's own payment on its page: nothing is
// charged without them. The customer is told by e-mail, with the link to that page. At most one retry per failed
// order, which the store guarantees however many are asked for at once.
import { Effect, Option, Schema } from "effect"
import { SecureRandom } from "effect/crypto"
import { Orders } from "../../ports/Orders.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { UserId } from "../account/User.ts"
import { recordAudit } from "../audit/record.ts"
import { type Order, OrderId } from "../billing/Billing.ts"
import { OrderNotFound, PlanOffSale } from "../billing/BillingErrors.ts"
import { openCheckout, orderTerms } from "../billing/Ordering.ts"
import { tell } from "../billing/serviceNotices.ts"
import type { Operator } from "./customers.ts"

/**
 * Only a failed order is retried, or a retry the customer let expire unpaid (its failed order is offered again): one
 * paid and delivered, under way, awaiting its payment, or a customer's own order that expired is not.
 */
export class OrderNotRetryable extends Schema.TaggedError<OrderNotRetryable>()("OrderNotRetryable", { status: Schema.String }) {
  override get message() {
    return `This order is ${this.status.replace("_", " ")}: only a failed order, or a retry that expired unpaid, can be retried.`
  }
}

/** Whether `order` may be retried (if it was not already). */
export const retryable = (order: Pick<Order, "status" | "retryOf">) =>
  order.status === "failed" || (order.status === "expired" && order.retryOf !== null)

/** The failed order at the root of a chain of retries that expired unpaid: the one the customer knows as failed. */
const failedRoot = (order: Order) =>
  Effect.gen(function*() {
    const orders = yield* Orders
    let current = order
    while (current.status !== "failed" && current.retryOf !== null) {
      const before = yield* orders.get(current.retryOf)
      if (Option.isNone(before)) break
      current = before.value
    }
    return current
  })

/** The failed order was retried already (once is all): the retry is that order. */
export class OrderAlreadyRetried extends Schema.TaggedError<OrderAlreadyRetried>()("OrderAlreadyRetried", { retriedAs: Schema.String }) {
  override get message() {
    return `This order was already retried as order ${this.retriedAs}.`
  }
}

/**
 * Retries the failed order `orderId` (or a retry of it that expired unpaid) as a new order awaiting its payment: the plan still on sale (PlanOffSale
 * otherwise, a retired plan included) with room for it (SoldOut), the options checked again by the product, the
 * consumer's express-start request carried with its time; audited as `staff.order_retried`; the provider's page for the
 * first month made, and the customer told with the link to the new order's page.
 */
export const retryOrder = Effect.fn("retryOrder")(function*(operator: Operator, orderId: string) {
  const orders = yield* Orders
  const found = yield* orders.get(orderId)
  if (Option.isNone(found)) return yield* new OrderNotFound()
  const failed = found.value
  if (!retryable(failed)) return yield* new OrderNotRetryable({ status: failed.status })
  if (failed.retriedAs !== null) return yield* new OrderAlreadyRetried({ retriedAs: failed.retriedAs })
  const user = yield* (yield* Users).findById(UserId.make(failed.userId))
  if (Option.isNone(user)) return yield* new OrderNotFound()
  const { at, expiresAt, options, plan, product, quote } = yield* orderTerms(user.value, failed.planId, failed.options).pipe(
    Effect.catchTag("PlanUnavailable", () => Effect.fail(new PlanOffSale({ planId: failed.planId })))
  )
  // One transaction: the new order, its audit, its page at the provider and the customer's notice, or none of them. A
  // provider that cannot be reached leaves nothing behind (503): the failed order can be retried again. Concurrent
  // retries wait for this one's commit at the unique index, then find its order.
  const retry = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    const made = yield* orders.createRetry({
      id: OrderId.make(yield* (yield* SecureRandom.SecureRandom).uuidV4()),
      userId: failed.userId,
      planId: failed.planId,
      kind: product.kind,
      options,
      totalSteps: product.steps.length,
      expiresAt,
      expressStartRequestedAt: failed.expressStartRequestedAt,
      retryOf: failed.id,
      now: at
    })
    // Another retry of the same order won the race: this one made nothing.
    if (!made.created) return yield* new OrderAlreadyRetried({ retriedAs: made.order.id })
    const amountCents = quote.amounts.totalIncludingVatCents
    yield* recordAudit({
      actorId: operator.id,
      actorRole: operator.role,
      action: "staff.order_retried",
      subjectUserId: UserId.make(failed.userId),
      target: { type: "order", id: failed.id },
      address: operator.address,
      before: { status: failed.status, retriedAs: null },
      after: { retriedAs: made.order.id, status: made.order.status, planId: failed.planId, amountCents }
    })
    yield* openCheckout(user.value, made.order.id, plan, amountCents, expiresAt)
    yield* tell({
      _tag: "OrderRetryOffered",
      userId: failed.userId,
      orderId: made.order.id,
      failedOrderId: (yield* failedRoot(failed)).id,
      planName: plan.name,
      amountCents,
      payBy: expiresAt
    })
    return made.order
  }))
  return Option.getOrThrow(yield* orders.get(retry.id))
})
