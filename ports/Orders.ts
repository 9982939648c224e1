// Orders and their provisioning progress.
import { Context, type Effect, type Option } from "effect"
import type { Order, OrderId, OrderStatus, PendingCleanup, ServiceKind, SubscriptionId } from "../domain/billing/Billing.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class Orders extends Context.Service<Orders, {
  create(order: {
    readonly id: OrderId
    readonly userId: string
    /** The plan the customer asked for, which its product accepted (stored as that plan's PlanId). */
    readonly planId: string
    readonly kind: ServiceKind
    readonly options: Record<string, unknown>
    readonly totalSteps: number
    /** Unpaid by then, the order expires. */
    readonly expiresAt: Date
    /** When the consumer expressly asked for the service to start before the withdrawal period ends (absent: never). */
    readonly expressStartRequestedAt?: Date | null
    readonly now: Date
  }): Effect.Effect<Order, DatabaseUnavailable>
  get(id: string): Effect.Effect<Option.Option<Order>, DatabaseUnavailable>
  /** The order's hosted payment page, once the provider made it (only while the order awaits its payment). */
  checkoutOpened(id: string, checkout: { readonly session: string; readonly url: string }, now: Date): Effect.Effect<void, DatabaseUnavailable>
  /** Moves a provisioning order along; an order in any other status is left as it is. */
  progress(id: string, update: {
    readonly status: Extract<OrderStatus, "provisioning">
    readonly step: number
    readonly stepName: string
    readonly subscriptionId?: SubscriptionId
    readonly now: Date
  }): Effect.Effect<void, DatabaseUnavailable>
  /**
   * The payment is recorded: awaiting_payment → provisioning (step 0), only if the order still awaits it. False when
   * it does not (paid already, or expired meanwhile): the caller then writes nothing else for the order.
   */
  startProvisioning(id: string, now: Date): Effect.Effect<boolean, DatabaseUnavailable>
  /** awaiting_payment → expired, only if still unpaid; false otherwise (paid meanwhile, or expired already). */
  expire(id: string, now: Date): Effect.Effect<boolean, DatabaseUnavailable>
  /** Orders awaiting their payment whose deadline is at or before `now`, oldest deadline first. */
  dueForExpiry(now: Date): Effect.Effect<ReadonlyArray<Order>, DatabaseUnavailable>
  /** Completes once; the sealed one-time secret (a VPS root password) is kept until its first read. */
  complete(id: string, serviceId: string, oneTimeSecret: string | null, now: Date): Effect.Effect<void, DatabaseUnavailable>
  /** Fails once (an order awaiting its payment or provisioning), with a reason the customer can read. */
  fail(id: string, reason: string, now: Date): Effect.Effect<void, DatabaseUnavailable>
  /** Returns the sealed one-time secret and forgets it, atomically: only the first reader gets it. */
  takeOneTimeSecret(id: string): Effect.Effect<Option.Option<string>, DatabaseUnavailable>
  /** Orders awaiting their payment or provisioning. */
  readonly unfinished: Effect.Effect<ReadonlyArray<Order>, DatabaseUnavailable>
  /** The order's undo is under way (idempotent: the first time counts as `since`). */
  cleanupPending(id: string, now: Date): Effect.Effect<void, DatabaseUnavailable>
  /** One more failed attempt at the order's undo, and why. */
  cleanupFailed(id: string, error: string): Effect.Effect<void, DatabaseUnavailable>
  /** The undo finished: nothing of the order is left upstream or held. */
  cleanupDone(id: string): Effect.Effect<void, DatabaseUnavailable>
  /** Undos still being retried, oldest first. */
  readonly pendingCleanups: Effect.Effect<ReadonlyArray<PendingCleanup>, DatabaseUnavailable>
}>()("zh/ports/Orders") {}
