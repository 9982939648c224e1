// Orders and their provisioning progress.
import { Context, type Effect, type Option } from "effect"
import type { Order, OrderStatus, ServiceKind } from "../domain/billing/Billing.ts"

export class Orders extends Context.Service<Orders, {
  create(order: {
    readonly id: string
    readonly userId: string
    readonly planId: string
    readonly kind: ServiceKind
    readonly options: Record<string, unknown>
    readonly totalSteps: number
    readonly now: Date
  }): Effect.Effect<Order>
  get(id: string): Effect.Effect<Option.Option<Order>>
  /** Moves a pending or provisioning order along; a completed or failed order is left as it is. */
  progress(id: string, update: {
    readonly status: Extract<OrderStatus, "pending" | "provisioning">
    readonly step: number
    readonly stepName: string
    readonly subscriptionId?: string
    readonly now: Date
  }): Effect.Effect<void>
  /** Completes once; the sealed one-time secret (a VPS root password) is kept until its first read. */
  complete(id: string, serviceId: string, oneTimeSecret: string | null, now: Date): Effect.Effect<void>
  /** Fails once, with a reason the customer can read. */
  fail(id: string, reason: string, now: Date): Effect.Effect<void>
  /** Returns the sealed one-time secret and forgets it, atomically: only the first reader gets it. */
  takeOneTimeSecret(id: string): Effect.Effect<Option.Option<string>>
  /** Orders still pending or provisioning (to resume or reconcile after a restart). */
  readonly unfinished: Effect.Effect<ReadonlyArray<Order>>
}>()("zh/ports/Orders") {}
