// Subscriptions: what a customer pays for, month after month, and the state of its service.
import { Context, type Effect, type Option } from "effect"
import type { OrderId, PlanId, ServiceKind, Subscription, SubscriptionId, SubscriptionStatus } from "../domain/billing/Billing.ts"
import type { Keyset } from "../domain/billing/keyset.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export interface SubscriptionMove {
  readonly from: SubscriptionStatus
  readonly to: SubscriptionStatus
  readonly periodEnd?: Date
  readonly nextPeriodEnd?: Date
}

export class Subscriptions extends Context.Service<Subscriptions, {
  create(subscription: {
    readonly id: SubscriptionId
    readonly userId: string
    readonly planId: PlanId
    readonly kind: ServiceKind
    readonly orderId: OrderId
    readonly currentPeriodEnd: Date
    readonly now: Date
  }): Effect.Effect<Subscription, DatabaseUnavailable>
  get(id: string): Effect.Effect<Option.Option<Subscription>, DatabaseUnavailable>
  forUser(userId: string): Effect.Effect<ReadonlyArray<Subscription>, DatabaseUnavailable>
  /** A page of the customer's subscriptions, oldest first (by creation, then id), after `after` (the page before's last). */
  pageForUser(userId: string, after: Keyset | null, limit: number): Effect.Effect<ReadonlyArray<Subscription>, DatabaseUnavailable>
  attachService(id: string, serviceId: string): Effect.Effect<void, DatabaseUnavailable>
  /**
   * One move of the subscription (domain/billing/transitions.ts decides which exist), as a compare-and-set: applied
   * only while its status is still `from` and, with `periodEnd`, its period still ends then (`nextPeriodEnd` moves
   * it). False when it is not (another move won, or the period moved on) or there is no such subscription.
   */
  transition(id: string, move: SubscriptionMove): Effect.Effect<boolean, DatabaseUnavailable>
  /**
   * Renewal: the `renewed` move (subscriptionMoves.ts) with the period end moved from `expected` to `next`, so two
   * renewals at once extend once and a terminated or failed subscription is never extended.
   */
  extend(id: string, expected: Date, next: Date): Effect.Effect<boolean, DatabaseUnavailable>
  setCancelAtPeriodEnd(id: string, cancel: boolean): Effect.Effect<void, DatabaseUnavailable>
  /**
   * The consumer's withdrawal: the `withdrawn` move (transitions.ts) with `withdrawnAt` recorded, as one compare-and-set,
   * so of two withdrawals at once exactly one applies. False when it did not (withdrawn already, or not active).
   */
  withdraw(id: string, at: Date): Effect.Effect<boolean, DatabaseUnavailable>
  /** The withdrawal's refund and credit note are recorded: the sweep no longer finishes it. */
  withdrawalSettled(id: string, at: Date): Effect.Effect<void, DatabaseUnavailable>
  /** Withdrawn subscriptions whose refund is not recorded yet (a process stopped on the way), oldest first. */
  readonly unsettledWithdrawals: Effect.Effect<ReadonlyArray<Subscription>, DatabaseUnavailable>
  /** Active subscriptions whose period has ended at `now`. */
  due(now: Date): Effect.Effect<ReadonlyArray<Subscription>, DatabaseUnavailable>
  /**
   * Subscriptions the automatic renewal looks after: active or suspended (a lapsed one is still charged inside its
   * grace window), not cancelled, whose period ends by `until`.
   */
  renewable(until: Date): Effect.Effect<ReadonlyArray<Subscription>, DatabaseUnavailable>
  /** Suspended subscriptions, for the lifecycle sweeper. */
  readonly suspended: Effect.Effect<ReadonlyArray<Subscription>, DatabaseUnavailable>
}>()("zh/ports/Subscriptions") {}
