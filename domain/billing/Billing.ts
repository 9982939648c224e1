// Orders, subscriptions and the payment ledger: the shapes every kind of service we sell shares.
import { Schema } from "effect"

/**
 * awaiting_payment → provisioning (the provider's verified notification says paid) → completed | failed; an order never
 * paid ends expired. (Before the hosted checkout, an order was "pending" while its card was charged; migration 10 moved
 * those to failed, refunded if a charge turns up.)
 */
export const OrderStatus = Schema.Literals(["awaiting_payment", "provisioning", "completed", "failed", "expired"])
export type OrderStatus = typeof OrderStatus.Type

/** What a service is ("vps", "game", …): the kind its product registered under (HostedService.ts). */
export const ServiceKind = Schema.String.check(Schema.isPattern(/^[a-z][a-z0-9-]{0,31}$/))
export type ServiceKind = typeof ServiceKind.Type

/** An order's id (a UUID). */
export const OrderId = Schema.String.pipe(Schema.brand("OrderId"))
export type OrderId = typeof OrderId.Type

/** A plan's id (the catalog's, e.g. `vps-m`): what an order buys and a subscription renews. */
export const PlanId = Schema.String.pipe(Schema.brand("PlanId"))
export type PlanId = typeof PlanId.Type

/** A subscription's id (a UUID). */
export const SubscriptionId = Schema.String.pipe(Schema.brand("SubscriptionId"))
export type SubscriptionId = typeof SubscriptionId.Type

export class Order extends Schema.Class<Order>("Order")({
  id: OrderId,
  userId: Schema.String,
  planId: PlanId,
  kind: ServiceKind,
  /** The customer's choices, as the product checked and stored them (HostedService.prepareOrder). */
  options: Schema.Record(Schema.String, Schema.Unknown),
  status: OrderStatus,
  step: Schema.Int,
  totalSteps: Schema.Int,
  stepName: Schema.String,
  failureReason: Schema.NullOr(Schema.String),
  subscriptionId: Schema.NullOr(SubscriptionId),
  serviceId: Schema.NullOr(Schema.String),
  /** The provider's hosted payment page of the order (its session id, and where the customer pays). */
  checkoutSession: Schema.NullOr(Schema.String),
  checkoutUrl: Schema.NullOr(Schema.String),
  /** An order still unpaid then expires (null: an order placed before the hosted checkout). */
  expiresAt: Schema.NullOr(Schema.Date),
  /**
   * When a consumer expressly asked, at order, for the service to start before the 14-day withdrawal period ends
   * (withdrawal.ts); null for a professional account, which has no withdrawal right to waive.
   */
  expressStartRequestedAt: Schema.NullOr(Schema.Date),
  /** The failed order an admin retried as this one (domain/backoffice/orderRetry.ts); null for a customer's order. */
  retryOf: Schema.NullOr(OrderId),
  /** The order this failed one was retried as (at most one); null while it is not. */
  retriedAs: Schema.NullOr(OrderId),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
}) {}

/** A failed order whose undo (the upstream resources it made, the holds it took) is still being retried. */
export interface PendingCleanup {
  readonly orderId: string
  readonly kind: ServiceKind
  readonly since: Date
  readonly attempts: number
  readonly lastError: string | null
}

export const SubscriptionStatus = Schema.Literals([
  /** Paid for; the service is provisioning or running. */
  "active",
  /** The period ended without renewal: the service is stopped or suspended (renewal brings it back). */
  "suspended",
  /** The service is gone for good. */
  "terminated",
  /** Provisioning failed; the charge was refunded. */
  "failed"
])
export type SubscriptionStatus = typeof SubscriptionStatus.Type

export class Subscription extends Schema.Class<Subscription>("Subscription")({
  id: SubscriptionId,
  userId: Schema.String,
  planId: PlanId,
  kind: ServiceKind,
  orderId: OrderId,
  status: SubscriptionStatus,
  currentPeriodEnd: Schema.Date,
  /** Cancelled by the customer: it ends at the period end and is not renewed. */
  cancelAtPeriodEnd: Schema.Boolean,
  serviceId: Schema.NullOr(Schema.String),
  /** The consumer withdrew from the contract then (withdrawal.ts): terminated at once, refunded pro rata. */
  withdrawnAt: Schema.NullOr(Schema.Date),
  /** The contract's conclusion: its first payment (the order settled). */
  createdAt: Schema.Date
}) {}

export interface LedgerEntry {
  readonly id: string
  readonly userId: string
  readonly subscriptionId: string | null
  readonly orderId: string | null
  readonly kind: "charge" | "refund"
  readonly amountCents: number
  readonly reference: string
  readonly createdAt: Date
}

/** The same day next month, clamped to the month's last day (Jan 31 → Feb 28/29). */
export const addMonth = (from: Date): Date => {
  const d = new Date(from.getTime())
  const day = d.getUTCDate()
  d.setUTCDate(1)
  d.setUTCMonth(d.getUTCMonth() + 1)
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate()
  d.setUTCDate(Math.min(day, lastDay))
  return d
}
