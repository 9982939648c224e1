// Placing an order (validate, create it awaiting its payment, open the provider's hosted page), settling it when the
// provider says it is paid (one transaction: the payment, the subscription, the move to provisioning; then the durable
// provisioning), expiring it when it is never paid, and carrying on orders an interrupted process left behind.
import { Clock, Duration, Effect, Option, Redacted } from "effect"
import { SecureRandom } from "effect/crypto"
import { Ledger } from "../../ports/Ledger.ts"
import { Orders } from "../../ports/Orders.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { SecretBox } from "../../ports/SecretBox.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import type { User } from "../account/User.ts"
import { UserId } from "../account/User.ts"
import { recordAudit } from "../audit/record.ts"
import { Notices } from "../notices/CustomerNotice.ts"
import { countPayment } from "../ops/metrics.ts"
import { addMonth, type Order, OrderId, type ServiceKind, SubscriptionId } from "./Billing.ts"
import { OrderNotFound, PlanUnavailable } from "./BillingErrors.ts"
import { HostedServices } from "./HostedService.ts"
import { moveOrder } from "./orderMoves.ts"
import { OrderSettings, orderPageUrl } from "./OrderSettings.ts"
import { billedUser, quotePlanMonth, recordCharge } from "./invoicing/issueDocuments.ts"
import { billingProfileForSale } from "./invoicing/manageBillingProfile.ts"
import { customerOf } from "./paymentCustomer.ts"
import { refundRecordedCharges } from "./refund.ts"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * The plan's product checks the customer's options against it (nothing is created before); a plan no product sells
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

/** The hosted page of an order is made, and found again, under this key: a retried creation is the same page. */
export const checkoutKey = (orderId: string) => `checkout:${orderId}`

/** The key the charge-at-order flow charged orders under (orders placed before the hosted checkout). */
export const legacyOrderChargeKey = (orderId: string) => `order:${orderId}`

/**
 * Placing an order: its options checked, the order created awaiting its payment (it expires unpaid after the payment
 * window), the customer's account at the provider (created once), and the provider's hosted page for the first month
 * under the key `checkout:<order>`. Nothing is provisioned here: only the provider's verified notification that the
 * order is paid starts it (`receivePaymentNotification`), never the customer's browser coming back. A provider that
 * cannot be reached expires the order at once (no page was given to anyone) and answers PaymentUnavailable.
 */
export const placeOrder = Effect.fn("placeOrder")(function*(
  user: User,
  planId: string,
  rawOptions: unknown,
  /** The consumer expressly asked for the service to start before the withdrawal period ends (stored with its time). */
  expressStartRequested = false
) {
  const { at, expiresAt, options, plan, product, quote } = yield* orderTerms(user, planId, rawOptions)
  const orders = yield* Orders
  const orderId = OrderId.make(yield* (yield* SecureRandom.SecureRandom).uuidV4())
  yield* orders.create({
    id: orderId,
    userId: user.id,
    planId,
    kind: product.kind,
    options,
    totalSteps: product.steps.length,
    expiresAt,
    expressStartRequestedAt: expressStartRequested ? at : null,
    now: at
  })
  yield* recordAudit({
    actorId: UserId.make(user.id),
    actorRole: "customer",
    action: "order.placed",
    subjectUserId: UserId.make(user.id),
    target: { type: "order", id: orderId },
    details: { planId, kind: product.kind, amountCents: plan.priceCents }
  })
  // A provider that cannot be reached expires the order at once: no page was given to anyone.
  yield* openCheckout(user, orderId, plan, quote.amounts.totalIncludingVatCents, expiresAt).pipe(
    Effect.tapError(() => moveOrder(orderId, { event: "expired" }, at))
  )
  return Option.getOrThrow(yield* orders.get(orderId))
})

/**
 * What a new order of `planId` with `rawOptions` is for `user`, checked before anything of it exists: the platform
 * can take payments, the plan's product accepts the options (and has room), the customer has a billing profile; then
 * the first month's price for this customer (including VAT, or excluding it under reverse charge or outside the EU)
 * and the order's payment deadline.
 */
export const orderTerms = Effect.fn("orderTerms")(function*(user: User, planId: string, rawOptions: unknown) {
  yield* (yield* PaymentGateway).ready
  const { options, plan, product } = yield* prepareOrder(planId, rawOptions)
  // Without a billing profile nothing is sold (BillingProfileRequired).
  yield* billingProfileForSale(user)
  const at = yield* now
  const quote = yield* quotePlanMonth(user, plan, { start: at, end: addMonth(at) })
  const expiresAt = new Date(at.getTime() + Duration.toMillis((yield* OrderSettings).paymentWindow))
  return { at, expiresAt, options, plan, product, quote }
})

/**
 * The provider's hosted page for the order's first month (`amountCents`), made under the key `checkout:<order>` (a
 * retried creation is the same page), for the customer's account there (created once); the order keeps awaiting its
 * payment, with the page. It sends the customer back to the order's page, paid or not.
 */
export const openCheckout = Effect.fn("openCheckout")(function*(
  user: User,
  orderId: OrderId,
  plan: { readonly name: string },
  amountCents: number,
  expiresAt: Date
) {
  const page = orderPageUrl((yield* OrderSettings).panelUrl, orderId)
  const customer = yield* customerOf(user)
  const checkout = yield* (yield* PaymentGateway).checkout({
    customer,
    orderId,
    description: `${plan.name}, first month`,
    amountCents,
    successUrl: page,
    cancelUrl: page,
    expiresAt,
    idempotencyKey: checkoutKey(orderId)
  })
  yield* moveOrder(orderId, { event: "checkoutOpened", session: checkout.session, url: checkout.url }, yield* now)
  return page
})

/** What is left to do once a payment is recorded (after the transaction commits). */
type AfterPayment =
  | { readonly _tag: "Provision"; readonly order: Order; readonly amountCents: number; readonly at: Date }
  | { readonly _tag: "Refund"; readonly orderId: string }
  | { readonly _tag: "Nothing" }

const nothing: AfterPayment = { _tag: "Nothing" }

/** An id we could have given an order (a UUID): anything else in a notification names no order of ours. */
const isOrderId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)

/**
 * The order is paid (`payment` at the provider, `amountCents` taken): run INSIDE the caller's transaction, with the
 * notification's own record when a notification says so. An order awaiting its payment moves to provisioning with its
 * subscription and the charge in the ledger; a payment already recorded changes nothing (a redelivery, the expiry and
 * the notification racing); a payment for an order that can no longer be delivered (expired, failed, paid by another
 * payment) is recorded and marked for a refund.
 */
export const settleOrderPayment = (payment: { readonly orderId: string; readonly payment: string; readonly amountCents: number }) =>
  Effect.gen(function*() {
    if (!isOrderId(payment.orderId)) return nothing
    const orders = yield* Orders
    const random = yield* SecureRandom.SecureRandom
    const at = yield* now
    const found = yield* orders.get(payment.orderId)
    if (Option.isNone(found)) return nothing
    const order = found.value
    const product = yield* Effect.flatMap(HostedServices, (products) => products.of(order.kind))
    const plan = yield* product.plan(order.planId).pipe(Effect.orElseSucceed(() => Option.none()))
    const planName = Option.match(plan, { onNone: () => order.planId, onSome: (p) => p.name })
    // The month as the customer was quoted it at the order (no VIES inside the transaction); the invoice states what was
    // taken, under this VAT, should the two differ (a plan no longer known is priced at what was paid).
    const quote = yield* quotePlanMonth(
      yield* billedUser(order.userId),
      { name: planName, priceCents: Option.match(plan, { onNone: () => payment.amountCents, onSome: (p) => p.priceCents }) },
      { start: at, end: addMonth(at) },
      { agreed: true, recheckVat: false }
    )
    // The payment in the ledger and its invoice, together.
    const charge = (subscriptionId: SubscriptionId | null) =>
      Effect.flatMap(random.uuidV4(), (id) =>
        recordCharge({
          id,
          userId: order.userId,
          subscriptionId,
          orderId: order.id,
          kind: "charge",
          amountCents: payment.amountCents,
          reference: payment.payment,
          createdAt: at
        }, quote))
    if (yield* moveOrder(order.id, { event: "paid" }, at)) {
      const subscriptionId = SubscriptionId.make(yield* random.uuidV4())
      yield* (yield* Subscriptions).create({
        id: subscriptionId,
        userId: order.userId,
        planId: order.planId,
        kind: order.kind,
        orderId: order.id,
        currentPeriodEnd: addMonth(at),
        now: at
      })
      const invoice = yield* charge(subscriptionId)
      yield* moveOrder(order.id, { event: "progressed", step: 0, stepName: "Queued", subscriptionId }, at)
      yield* recordAudit({
        actorId: null,
        actorRole: "system",
        action: "payment.succeeded",
        subjectUserId: UserId.make(order.userId),
        target: { type: "order", id: order.id },
        details: { kind: "order", payment: payment.payment, amountCents: payment.amountCents }
      })
      // The receipt is told in the payment's transaction: recorded with it (never without it), e-mailed once it commits,
      // and before the provisioning starts, so it always comes before "your service is ready".
      yield* (yield* Notices).send({
        _tag: "OrderPaid",
        userId: order.userId,
        orderId: order.id,
        planName,
        amountCents: payment.amountCents,
        paidAt: at,
        invoiceId: Option.match(invoice, { onNone: () => null, onSome: (i) => i.id })
      })
      // The consumer's express request to start now, confirmed on a durable medium once the contract is concluded.
      if (order.expressStartRequestedAt !== null) {
        yield* (yield* Notices).send({
          _tag: "ExpressStartConfirmed",
          userId: order.userId,
          orderId: order.id,
          planName: Option.match(plan, { onNone: () => order.planId, onSome: (p) => p.name }),
          requestedAt: order.expressStartRequestedAt,
          paidAt: at
        })
      }
      return { _tag: "Provision", order, amountCents: payment.amountCents, at } satisfies AfterPayment
    }
    const recorded = (yield* (yield* Ledger).forOrder(order.id)).some((e) => e.kind === "charge" && e.reference === payment.payment)
    if (recorded) return nothing
    yield* Effect.logWarning(`order ${order.id} (${order.status}) was paid by ${payment.payment} it cannot use: refunding it`)
    yield* charge(null)
    // Marked in the same transaction: a process dying before the refund leaves it to the order recovery.
    yield* orders.cleanupPending(order.id, at)
    return { _tag: "Refund", orderId: order.id } satisfies AfterPayment
  })

/** Starts (or joins: idempotent by order id) the durable provisioning by the order's product. */
export const provision = (kind: ServiceKind, orderId: string) =>
  Effect.flatMap(Effect.flatMap(HostedServices, (products) => products.of(kind)), (product) => product.provision(orderId))

/**
 * Refunds the payments an order could not use (recorded without a subscription: the one that paid it keeps its own),
 * then clears its pending cleanup.
 */
const refundUnusable = (orderId: string) =>
  Effect.andThen(
    refundRecordedCharges(orderId, (charge) => charge.subscriptionId === null),
    Effect.flatMap(Orders, (orders) => orders.cleanupDone(orderId))
  )

/**
 * After the payment's transaction committed (which told the receipt): the provisioning started, or the refund made. The
 * refund is not waited for (a provider that is down would hold the notification's answer): the order's pending cleanup
 * makes the order recovery finish it if this process stops first.
 */
export const afterPayment = (next: AfterPayment) =>
  Effect.gen(function*() {
    switch (next._tag) {
      case "Nothing":
        return
      case "Refund":
        yield* Effect.forkDetach(refundUnusable(next.orderId))
        return
      case "Provision": {
        yield* countPayment("order", "succeeded")
        yield* provision(next.order.kind, next.order.id)
      }
    }
  })

/** The provider says the order's page expired unpaid: inside the notification's transaction. */
export const checkoutExpired = (orderId: string) =>
  Effect.gen(function*() {
    if (!isOrderId(orderId)) return
    if (yield* moveOrder(orderId, { event: "expired" }, yield* now)) yield* Effect.logInfo(`order ${orderId} expired unpaid`)
  })

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
 * An unpaid order past its deadline: its page is closed at the provider FIRST (so it can no longer be paid), then the
 * order expires; a page that turns out paid meanwhile settles the order as paid (the customer paid: deliver); one
 * whose payment is still under way is asked again at the next run. An order whose page was never opened just expires.
 */
const expireUnpaid = (order: Order) =>
  Effect.gen(function*() {
    if (order.checkoutSession !== null) {
      const outcome = yield* (yield* PaymentGateway).expireCheckout(order.checkoutSession)
      if (outcome._tag === "Processing") return
      if (outcome._tag === "Paid") {
        yield* Effect.logInfo(`order ${order.id} was paid as it expired: settling it as paid`)
        const next = yield* (yield* UnitOfWork).transaction(settleOrderPayment({ orderId: order.id, ...outcome }))
        return yield* afterPayment(next)
      }
    }
    yield* checkoutExpired(order.id)
  })

/**
 * A pending cleanup of an order that never reached provisioning (no subscription): a payment it got after it could no
 * longer be delivered is refunded (the ledger says which). An order failed by the charge-at-order flow (no deadline)
 * is also asked whether the provider took its charge late, for an hour.
 */
const refundLate = (orderId: string, since: Date, at: Date) =>
  Effect.gen(function*() {
    const orders = yield* Orders
    const order = yield* orders.get(orderId)
    if (Option.isNone(order) || order.value.subscriptionId !== null) return
    if (order.value.status !== "failed" && order.value.status !== "expired") return
    if (order.value.expiresAt !== null) return yield* refundUnusable(orderId)
    const charge = yield* (yield* PaymentGateway).findCharge(legacyOrderChargeKey(orderId))
    if (Option.isSome(charge)) {
      yield* Effect.logWarning(`order ${orderId} was charged after it failed unpaid: refunding the charge`)
      const next = yield* (yield* UnitOfWork).transaction(settleOrderPayment({ orderId, payment: charge.value.reference, amountCents: charge.value.amountCents }))
      if (next._tag === "Refund") return yield* refundUnusable(orderId)
    }
    if (at.getTime() - since.getTime() >= Duration.toMillis(lateChargeWatch)) yield* orders.cleanupDone(orderId)
  })

/** How long an order failed by the charge-at-order flow is watched for a charge the provider takes late. */
const lateChargeWatch = Duration.hours(1)

/**
 * Carries on every order an interrupted process left behind, from any instance (a cluster-wide cron runs it): an order
 * untouched for `after` that reached provisioning has its workflow started again (idempotent: a running or finished
 * one is joined); an order unpaid past its deadline expires (its page closed at the provider first); a refund a
 * process did not finish is made. One order's trouble (the provider unreachable) does not hold back the others; it is
 * tried again at the next run.
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
      if (order.status !== "provisioning" || at.getTime() - order.updatedAt.getTime() < Duration.toMillis(after)) continue
      yield* provision(order.kind, order.id).pipe(isolated(order.id))
    }
    for (const order of yield* orders.dueForExpiry(at)) yield* expireUnpaid(order).pipe(isolated(order.id))
    for (const watched of yield* orders.pendingCleanups) {
      if (at.getTime() - watched.since.getTime() < Duration.toMillis(after)) continue
      yield* refundLate(watched.orderId, watched.since, at).pipe(isolated(watched.orderId))
    }
  })
