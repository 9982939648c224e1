// Placing an order (validate, charge, record the payment with the subscription, start the durable provisioning) and
// carrying on orders an interrupted process left behind.
import { Clock, Duration, Effect, Option, Redacted } from "effect"
import { SecureRandom } from "effect/crypto"
import { Ledger } from "../../ports/Ledger.ts"
import { Orders } from "../../ports/Orders.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { SecretBox } from "../../ports/SecretBox.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { refundOrder } from "./refund.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { addMonth, type Order, OrderId, type ServiceKind, SubscriptionId } from "./Billing.ts"
import { OrderNotFound, PlanUnavailable } from "./BillingErrors.ts"
import { HostedServices } from "./HostedService.ts"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * The plan's product checks the customer's options against it (nothing is charged before); a plan no product sells
 * now is unavailable.
 */
const prepareOrder = Effect.fn("prepareOrder")(function*(planId: string, rawOptions: unknown) {
  const products = yield* (yield* HostedServices).all
  const prepared = yield* Effect.forEach(
    products,
    (product) => Effect.map(product.prepareOrder(planId, rawOptions), Option.map((order) => ({ ...order, product }))),
    { concurrency: "unbounded" }
  )
  const found = prepared.find(Option.isSome)
  if (found === undefined) return yield* new PlanUnavailable({ planId })
  return found.value
})

/** The charge of an order is made, and found again, under this key: a replayed charge is the same charge. */
export const orderChargeKey = (orderId: string) => `order:${orderId}`

/**
 * Placing an order, in steps that each leave it recoverable (a process may die between any two):
 * (a) the order row, pending: one write, and its own "needs attention" marker;
 * (b) the charge, replayable by its key `order:<id>` (it cannot share a database transaction);
 * (c) one transaction: the charge in the ledger, the subscription, the order moving to provisioning;
 * (d) the durable provisioning, idempotent by order id.
 * Any instance's `recoverOrders` carries on an order stuck before (c) or (d). A declined payment leaves a failed
 * order and nothing else; a gateway that cannot be reached leaves it pending, for the recovery to settle.
 */
export const placeOrder = Effect.fn("placeOrder")(function*(userId: string, planId: string, rawOptions: unknown) {
  // A platform that cannot take payments refuses the order before anything of it exists.
  yield* (yield* PaymentGateway).ready
  const { options, plan, product } = yield* prepareOrder(planId, rawOptions)
  const totalSteps = product.steps.length

  const orders = yield* Orders
  const orderId = OrderId.make(yield* (yield* SecureRandom.SecureRandom).uuidV4())
  const at = yield* now
  const order = yield* orders.create({ id: orderId, userId, planId, kind: product.kind, options, totalSteps, now: at })

  const charge = yield* (yield* PaymentGateway).charge({
    customer: userId,
    amountCents: plan.priceCents,
    description: `${plan.name}, first month`,
    idempotencyKey: orderChargeKey(orderId)
  }).pipe(Effect.tapError((e) => e._tag === "PaymentUnavailable" ? Effect.void : orders.fail(orderId, e.message, at)))

  yield* recordPayment(order, { reference: charge.reference, amountCents: plan.priceCents })
  return Option.getOrThrow(yield* orders.get(orderId))
})

/**
 * Steps (c) and (d): the payment recorded with the subscription and the order's move to provisioning in one
 * transaction, then the provisioning started. Only a pending order moves: when another instance carried it on
 * first, nothing more is written; when it failed meanwhile (settled as unpaid while this charge was under way), the
 * charge is recorded and refunded, so no charge is ever kept for a failed order.
 */
const recordPayment = (order: Order, charge: { readonly reference: string; readonly amountCents: number }) =>
  Effect.gen(function*() {
    const random = yield* SecureRandom.SecureRandom
    const orders = yield* Orders
    const ledger = yield* Ledger
    const at = yield* now
    const subscriptionId = SubscriptionId.make(yield* random.uuidV4())
    const entry = (subscription: string | null) =>
      Effect.flatMap(random.uuidV4(), (id) =>
        ledger.record({
          id,
          userId: order.userId,
          subscriptionId: subscription,
          orderId: order.id,
          kind: "charge",
          amountCents: charge.amountCents,
          reference: charge.reference,
          createdAt: at
        }))
    const recorded = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
      if (!(yield* orders.startProvisioning(order.id, at))) return false
      yield* (yield* Subscriptions).create({
        id: subscriptionId,
        userId: order.userId,
        planId: order.planId,
        kind: order.kind,
        orderId: order.id,
        currentPeriodEnd: addMonth(at),
        now: at
      })
      yield* entry(subscriptionId)
      yield* orders.progress(order.id, { status: "provisioning", step: 0, stepName: "Queued", subscriptionId, now: at })
      return true
    }))
    if (recorded) return yield* provision(order.kind, order.id)
    const current = yield* orders.get(order.id)
    if (Option.isSome(current) && current.value.status === "failed") {
      yield* entry(null)
      yield* refundOrder(order.id, unpaidReason)
      yield* orders.cleanupDone(order.id)
    }
  })

/** Told to the customer of an order failed before its payment was confirmed (a late one is refunded). */
const unpaidReason = "The order was interrupted before its payment was confirmed. Nothing is kept from it: a payment " +
  "that still goes through is refunded."

/** How long an order failed as unpaid is watched for a charge the provider takes late. */
const lateChargeWatch = Duration.hours(1)

/** Starts (or joins: idempotent by order id) the durable provisioning by the order's product. */
const provision = (kind: ServiceKind, orderId: string) =>
  Effect.flatMap(Effect.flatMap(HostedServices, (products) => products.of(kind)), (product) => product.provision(orderId))

export interface OrderView {
  readonly order: Order
  /** The VPS root password, on the owner's first read of a completed order only. */
  readonly rootPassword?: string
}

/** The owner's view of an order; anyone else gets OrderNotFound, as if it did not exist. */
export const viewOrder = Effect.fn("viewOrder")(function*(userId: string, orderId: string) {
  const orders = yield* Orders
  const found = yield* orders.get(orderId)
  if (Option.isNone(found) || found.value.userId !== userId) return yield* new OrderNotFound()
  const order = found.value
  if (order.status !== "completed") return { order } satisfies OrderView
  const secret = yield* orders.takeOneTimeSecret(orderId)
  if (Option.isNone(secret)) return { order } satisfies OrderView
  const password = yield* (yield* SecretBox).open(secret.value, `order:${orderId}:root-password`).pipe(Effect.orDie)
  return { order, rootPassword: Redacted.value(password) } satisfies OrderView
})

/**
 * Carries on every order an interrupted process left behind, from any instance (a cluster-wide cron runs it):
 * an order untouched for `after` that reached provisioning has its workflow started again (idempotent: a running or
 * finished one is joined); one still pending asks the gateway whether its charge was taken: taken → recorded and
 * provisioned (the customer paid: deliver); not taken → failed, and watched for an hour (as a pending cleanup) in case
 * the provider takes the charge late: such a charge is recorded and refunded. One order's trouble (the gateway
 * unreachable) does not hold back the others; it is tried again at the next run.
 */
export const recoverOrders = (after: Duration.Duration) =>
  Effect.gen(function*() {
    const orders = yield* Orders
    const at = yield* now
    const isolated = (orderId: string) => <E, R>(effect: Effect.Effect<void, E, R>) =>
      effect.pipe(
        Effect.catchCause((cause) => Effect.logWarning(`recovering order ${orderId} failed; retried at the next run`, cause))
      )
    for (const order of yield* orders.unfinished) {
      if (at.getTime() - order.updatedAt.getTime() < Duration.toMillis(after)) continue
      yield* recoverOrder(order, at).pipe(isolated(order.id))
    }
    for (const watched of yield* orders.pendingCleanups) {
      if (at.getTime() - watched.since.getTime() < Duration.toMillis(after)) continue
      yield* lateCharge(watched.orderId, watched.since, at).pipe(isolated(watched.orderId))
    }
  })

/**
 * A pending cleanup of a failed order that never reached provisioning (no subscription: it was failed as unpaid; the
 * other pending cleanups are provisioning undos, which their workflows run): a charge found now is recorded and
 * refunded; after the watch, none is expected any more.
 */
const lateCharge = (orderId: string, since: Date, at: Date) =>
  Effect.gen(function*() {
    const orders = yield* Orders
    const order = yield* orders.get(orderId)
    if (Option.isNone(order) || order.value.status !== "failed" || order.value.subscriptionId !== null) return
    const charge = yield* (yield* PaymentGateway).findCharge(orderChargeKey(orderId))
    if (Option.isSome(charge)) {
      yield* Effect.logWarning(`order ${orderId} was charged after it failed unpaid: refunding the charge`)
      return yield* recordPayment(order.value, charge.value)
    }
    if (at.getTime() - since.getTime() >= Duration.toMillis(lateChargeWatch)) yield* orders.cleanupDone(orderId)
  })

const recoverOrder = (order: Order, at: Date) =>
  Effect.gen(function*() {
    if (order.status === "provisioning") return yield* provision(order.kind, order.id)
    const charge = yield* (yield* PaymentGateway).findCharge(orderChargeKey(order.id))
    if (Option.isSome(charge)) {
      yield* Effect.logInfo(`order ${order.id} was interrupted after its payment: recording it and provisioning`)
      return yield* recordPayment(order, charge.value)
    }
    yield* Effect.logInfo(`order ${order.id} was interrupted before its payment: failing it (nothing was charged)`)
    // Marked first: a charge the provider takes late is still found and refunded.
    yield* (yield* Orders).cleanupPending(order.id, at)
    yield* (yield* Orders).fail(order.id, unpaidReason, at)
  })
