// The legal moves of billing's aggregates, as pure functions: what an event does to a subscription or an order in
// each status (undefined: the event is not legal there). The repositories only guard a move with a compare-and-set on
// the status it leaves (subscriptionMoves.ts, orderMoves.ts); which moves exist is decided here, once.
import type { OrderStatus, SubscriptionStatus } from "./Billing.ts"

/** What happens to a subscription. */
export type SubscriptionEvent =
  /** Its period ended unpaid: the service is stopped, kept for the grace window. */
  | "lapsed"
  /** A renewal was paid: a suspended service comes back. */
  | "renewed"
  /** The grace window of a suspended service ended: the service is gone for good. */
  | "ended"
  /** The first provisioning failed (the charge was refunded). */
  | "provisioningFailed"
  /** The consumer withdrew from the contract within the withdrawal period (withdrawal.ts): it ends at once. */
  | "withdrawn"
  /** An admin ended a service held by an operator (domain/backoffice/serviceHolds.ts): gone for good, now. */
  | "endedByOperator"

export const subscriptionEvents: ReadonlyArray<SubscriptionEvent> = [
  "lapsed",
  "renewed",
  "ended",
  "provisioningFailed",
  "withdrawn",
  "endedByOperator"
]

/**
 * Per event, the statuses it may leave and where each leads, in the order a racing move leads through them: a renewal
 * tries `active` before `suspended`, since the only move between them a renewal can race is the lapse (active →
 * suspended).
 */
const subscriptionMoves: { readonly [E in SubscriptionEvent]: ReadonlyArray<readonly [SubscriptionStatus, SubscriptionStatus]> } = {
  lapsed: [["active", "suspended"]],
  renewed: [["active", "active"], ["suspended", "active"]],
  ended: [["suspended", "terminated"]],
  provisioningFailed: [["active", "failed"]],
  withdrawn: [["active", "terminated"]],
  endedByOperator: [["active", "terminated"], ["suspended", "terminated"]]
}

/** The status `event` leads a subscription in status `from` to; undefined when it is not legal there. */
export const subscriptionAfter = (from: SubscriptionStatus, event: SubscriptionEvent): SubscriptionStatus | undefined =>
  subscriptionMoves[event].find(([source]) => source === from)?.[1]

/** The statuses `event` may leave, with where each leads, in the order to try them. */
export const subscriptionSources = (event: SubscriptionEvent) => subscriptionMoves[event]

/**
 * An order's statuses (issue 12 §2): `awaiting_payment` until the payment is confirmed, `expired` when it never is.
 */
export type OrderLifeStatus = OrderStatus

export const orderStatuses: ReadonlyArray<OrderLifeStatus> = [
  "awaiting_payment",
  "provisioning",
  "completed",
  "failed",
  "expired"
]

/** What happens to an order. */
export type OrderEvent =
  /** The payment provider made its hosted payment page: the order keeps awaiting its payment, with the page. */
  | "checkoutOpened"
  /** Its payment is recorded: the provisioning starts. */
  | "paid"
  /** The provisioning reports its next step. */
  | "progressed"
  /** The service is built. */
  | "provisioned"
  /** Its charge was declined, it was never paid, or its provisioning failed (refunded). */
  | "failed"
  /** Its checkout ran out unpaid. */
  | "expired"

export const orderEvents: ReadonlyArray<OrderEvent> = ["checkoutOpened", "paid", "progressed", "provisioned", "failed", "expired"]

const orderMoves: { readonly [E in OrderEvent]: ReadonlyArray<readonly [OrderLifeStatus, OrderLifeStatus]> } = {
  checkoutOpened: [["awaiting_payment", "awaiting_payment"]],
  paid: [["awaiting_payment", "provisioning"]],
  progressed: [["provisioning", "provisioning"]],
  provisioned: [["provisioning", "completed"]],
  failed: [["awaiting_payment", "failed"], ["provisioning", "failed"]],
  expired: [["awaiting_payment", "expired"]]
}

/** The status `event` leads an order in status `from` to; undefined when it is not legal there. */
export const orderAfter = (from: OrderLifeStatus, event: OrderEvent): OrderLifeStatus | undefined =>
  orderMoves[event].find(([source]) => source === from)?.[1]

/** The statuses `event` may leave, with where each leads. */
export const orderSources = (event: OrderEvent) => orderMoves[event]
