// Renewing (charge, extend one month, have the product bring a suspended service back) and cancelling (end at the
// period end).
import { Effect, Option } from "effect"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { payNow } from "./autoRenewal.ts"
import { SubscriptionEnded, SubscriptionNotFound } from "./BillingErrors.ts"
import { HostedServices } from "./HostedService.ts"
import { noticeService, tell } from "./serviceNotices.ts"
import { UserId } from "../account/User.ts"
import { recordAudit } from "../audit/record.ts"

const owned = Effect.fn("ownedSubscription")(function*(userId: string, subscriptionId: string) {
  const found = yield* (yield* Subscriptions).get(subscriptionId)
  if (Option.isNone(found) || found.value.userId !== userId) return yield* new SubscriptionNotFound()
  return found.value
})

/**
 * Renews from the panel: the saved card is charged for the next period with that period's key — the key the automatic
 * renewal uses for the same attempt — so a click and the renewal pass at once charge once and extend once; a
 * subscription already paid beyond its next period is answered as it stands. A lapsed (suspended) service starts a
 * fresh month from now and is brought back. A refusal is answered as such (the billing page's "pay" offers a hosted
 * page instead: payRenewal).
 */
export const renewSubscription = Effect.fn("renewSubscription")(function*(userId: string, subscriptionId: string) {
  const subscription = yield* owned(userId, subscriptionId)
  if (subscription.status === "terminated" || subscription.status === "failed") return yield* new SubscriptionEnded()
  const paid = yield* payNow(subscription, { page: false })
  return paid._tag === "Paid" ? paid.subscription : Option.getOrThrow(yield* (yield* Subscriptions).get(subscription.id))
})

/**
 * Pays the next period now from the billing page (a lapsed service is brought back): the saved card when it goes
 * through, else the URL of a hosted page where the customer pays (authenticating, or with another card).
 */
export const payRenewal = Effect.fn("payRenewal")(function*(userId: string, subscriptionId: string) {
  const subscription = yield* owned(userId, subscriptionId)
  if (subscription.status === "terminated" || subscription.status === "failed") return yield* new SubscriptionEnded()
  return yield* payNow(subscription, { page: true })
})

/** Ends at the period's end: not charged again; the customer is told once (a second click changes nothing). */
export const cancelSubscription = Effect.fn("cancelSubscription")(function*(userId: string, subscriptionId: string) {
  const subscription = yield* owned(userId, subscriptionId)
  if (subscription.status === "terminated" || subscription.status === "failed") return yield* new SubscriptionEnded()
  if (subscription.cancelAtPeriodEnd) return subscription
  yield* (yield* Subscriptions).setCancelAtPeriodEnd(subscription.id, true)
  yield* recordAudit({
    actorId: UserId.make(userId),
    actorRole: "customer",
    action: "subscription.cancelled",
    subjectUserId: UserId.make(userId),
    target: { type: "subscription", id: subscription.id },
    details: { endsAt: subscription.currentPeriodEnd.toISOString() }
  })
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
