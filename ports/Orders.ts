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
    readonly now: Date
  }): Effect.Effect<Order, DatabaseUnavailable>
  get(id: string): Effect.Effect<Option.Option<Order>, DatabaseUnavailable>
  /** Moves a pending or provisioning order along; a completed or failed order is left as it is. */
  progress(id: string, update: {
    readonly status: Extract<OrderStatus, "pending" | "provisioning">
    readonly step: number
    readonly stepName: string
    readonly subscriptionId?: SubscriptionId
    readonly now: Date
  }): Effect.Effect<void, DatabaseUnavailable>
  /**
   * The payment is recorded: pending → provisioning (step 0), only if the order is still pending. False when it is
   * not (another instance carried it on, or it failed meanwhile): the caller then writes nothing else.
   */
  startProvisioning(id: string, now: Date): Effect.Effect<boolean, DatabaseUnavailable>
  /** Completes once; the sealed one-time secret (a VPS root password) is kept until its first read. */
  complete(id: string, serviceId: string, oneTimeSecret: string | null, now: Date): Effect.Effect<void, DatabaseUnavailable>
  /** Fails once, with a reason the customer can read. */
  fail(id: string, reason: string, now: Date): Effect.Effect<void, DatabaseUnavailable>
  /** Returns the sealed one-time secret and forgets it, atomically: only the first reader gets it. */
  takeOneTimeSecret(id: string): Effect.Effect<Option.Option<string>, DatabaseUnavailable>
  /** Orders still pending or provisioning (to carry on or settle when interrupted). */
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
