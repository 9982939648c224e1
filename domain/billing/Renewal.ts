// Renewing (charge, extend one month, have the product bring a suspended service back) and cancelling (end at the
// period end).
import { Clock, Effect, Option } from "effect"
import { SecureRandom } from "effect/crypto"
import { Ledger } from "../../ports/Ledger.ts"
import { PaymentCustomers } from "../../ports/PaymentCustomers.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { addMonth } from "./Billing.ts"
import { SubscriptionEnded, SubscriptionNotFound } from "./BillingErrors.ts"
import { HostedServices } from "./HostedService.ts"
import { noticeService, tell } from "./serviceNotices.ts"

const owned = Effect.fn("ownedSubscription")(function*(userId: string, subscriptionId: string) {
  const found = yield* (yield* Subscriptions).get(subscriptionId)
  if (Option.isNone(found) || found.value.userId !== userId) return yield* new SubscriptionNotFound()
  return found.value
})

export const listSubscriptions = (userId: string) => Effect.flatMap(Subscriptions, (s) => s.forUser(userId))

/**
 * The charge's idempotency key names the period being renewed, so a double click (or two tabs) charges once
 * and extends once, and a subscription already paid beyond its next period is not renewed again. A lapsed (suspended) service starts a fresh month from now and is brought back.
 */
export const renewSubscription = Effect.fn("renewSubscription")(function*(userId: string, subscriptionId: string) {
  const subscriptions = yield* Subscriptions
  const subscription = yield* owned(userId, subscriptionId)
  if (subscription.status === "terminated" || subscription.status === "failed") return yield* new SubscriptionEnded()
  const product = yield* (yield* HostedServices).of(subscription.kind)
  const plan = Option.getOrThrow(yield* product.plan(subscription.planId))
  const at = new Date(yield* Clock.currentTimeMillis)
  // A renewal pays for the next period. One already paid beyond it was just renewed (a double click, or two tabs,
  // one finishing before the other read it): answer it as it stands, charging nothing.
  if (subscription.currentPeriodEnd.getTime() > addMonth(at).getTime()) return subscription
  // The card saved at the provider is the customer's there (made with their first order's payment).
  const customer = Option.getOrElse(yield* (yield* PaymentCustomers).get(userId), () => userId)
  const charge = yield* (yield* PaymentGateway).charge({
    customer,
    amountCents: plan.priceCents,
    description: `${plan.name}, renewal`,
    idempotencyKey: `renew:${subscription.id}:${subscription.currentPeriodEnd.toISOString()}`
  })
  const from = subscription.currentPeriodEnd.getTime() > at.getTime() ? subscription.currentPeriodEnd : at
  const extended = yield* subscriptions.extend(subscription.id, subscription.currentPeriodEnd, addMonth(from))
  if (extended) {
    yield* (yield* Ledger).record({
      id: yield* (yield* SecureRandom.SecureRandom).uuidV4(),
      userId,
      subscriptionId: subscription.id,
      orderId: null,
      kind: "charge",
      amountCents: plan.priceCents,
      reference: charge.reference,
      createdAt: at
    })
    yield* subscriptions.setCancelAtPeriodEnd(subscription.id, false)
    // Paid for: a suspended service comes back, durably (even if its upstream is down right now). The product's own
    // record says whether it was suspended: a lapse racing this renewal marks it first (and brings it back itself if
    // the renewal won), so nothing paid for stays suspended.
    yield* (yield* (yield* HostedServices).of(subscription.kind)).resume(subscription.id, subscription.currentPeriodEnd)
  }
  return Option.getOrThrow(yield* subscriptions.get(subscription.id))
})

export const cancelSubscription = Effect.fn("cancelSubscription")(function*(userId: string, subscriptionId: string) {
  const subscription = yield* owned(userId, subscriptionId)
  if (subscription.status === "terminated" || subscription.status === "failed") return yield* new SubscriptionEnded()
  yield* (yield* Subscriptions).setCancelAtPeriodEnd(subscription.id, true)
  const product = yield* (yield* HostedServices).of(subscription.kind)
  // Told when it changes; two clicks at once both may, and the notice's key (the period's end) sends one e-mail.
  if (!subscription.cancelAtPeriodEnd) yield* tell({
    _tag: "CancellationConfirmed",
    userId,
    service: yield* noticeService(subscription, product.plan),
    endsAt: subscription.currentPeriodEnd
  })
  return Option.getOrThrow(yield* (yield* Subscriptions).get(subscription.id))
})
