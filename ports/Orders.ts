// Orders and their provisioning progress.
import { Context, type Effect, type Option } from "effect"
import type { Keyset } from "../domain/billing/keyset.ts"
import type { Order, OrderId, OrderStatus, PendingCleanup, ServiceKind, SubscriptionId } from "../domain/billing/Billing.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

/** What a move records besides the status (absent: left as it is). */
export interface OrderRecorded {
  readonly step?: number
  readonly stepName?: string
  readonly subscriptionId?: SubscriptionId
  readonly serviceId?: string
  /** The sealed one-time secret (a VPS root password), kept until its first read. */
  readonly oneTimeSecret?: string | null
  readonly failureReason?: string
  readonly checkoutSession?: string
  readonly checkoutUrl?: string
}

/** One move of an order: from one status to another, at `now`, recording `recorded`. */
export interface OrderMove {
  readonly from: OrderStatus
  readonly to: OrderStatus
  readonly now: Date
  readonly recorded: OrderRecorded
}

/** A new order, as `create` takes it. */
export interface NewOrder {
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
}

export class Orders extends Context.Service<Orders, {
  create(order: NewOrder): Effect.Effect<Order, DatabaseUnavailable>
  /**
   * A new order retrying the failed order `retryOf`, unless that one was retried already: at most one retry per
   * failed order, however many are asked for at once (`created` false: `order` is the retry made before).
   */
  createRetry(order: NewOrder & { readonly retryOf: OrderId }): Effect.Effect<{ readonly created: boolean; readonly order: Order }, DatabaseUnavailable>
  get(id: string): Effect.Effect<Option.Option<Order>, DatabaseUnavailable>
  /** The customer's orders, newest first (created_at, then id), `limit` of them after `after` (none: from the newest). */
  ofCustomer(userId: string, after: Keyset | null, limit: number): Effect.Effect<ReadonlyArray<Order>, DatabaseUnavailable>
  /**
   * One move of the order (domain/billing/orderMoves.ts decides which exist and what each records), as a
   * compare-and-set: applied only while its status is still `from`. False when it is not (another move won the race,
   * the order is finished) or there is no such order.
   */
  transition(id: string, move: OrderMove): Effect.Effect<boolean, DatabaseUnavailable>
  /** Orders awaiting their payment whose deadline is at or before `now`, oldest deadline first. */
  dueForExpiry(now: Date): Effect.Effect<ReadonlyArray<Order>, DatabaseUnavailable>
  /** How many orders failed at or after `since` (the provisioning failures' alert counts them over a window). */
  failedSince(since: Date): Effect.Effect<number, DatabaseUnavailable>
  /** Returns the sealed one-time secret and forgets it, atomically: only the first reader gets it. */
  takeOneTimeSecret(id: string): Effect.Effect<Option.Option<string>, DatabaseUnavailable>
  /** Orders awaiting their payment or provisioning. */
  readonly unfinished: Effect.Effect<ReadonlyArray<Order>, DatabaseUnavailable>
  /** The latest failed orders (an operator's list), most recently failed first. */
  failed(limit: number): Effect.Effect<ReadonlyArray<Order>, DatabaseUnavailable>
  /** The order's undo is under way (idempotent: the first time counts as `since`). */
  cleanupPending(id: string, now: Date): Effect.Effect<void, DatabaseUnavailable>
  /** One more failed attempt at the order's undo, and why. */
  cleanupFailed(id: string, error: string): Effect.Effect<void, DatabaseUnavailable>
  /** The undo finished: nothing of the order is left upstream or held. */
  cleanupDone(id: string): Effect.Effect<void, DatabaseUnavailable>
  /** Undos still being retried, oldest first. */
  readonly pendingCleanups: Effect.Effect<ReadonlyArray<PendingCleanup>, DatabaseUnavailable>
}>()("zh/ports/Orders") {}
