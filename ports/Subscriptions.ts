// Subscriptions: what a customer pays for, month after month, and the state of its service.
import { Context, type Effect, type Option } from "effect"
import type { ServiceKind, Subscription, SubscriptionStatus } from "../domain/billing/Billing.ts"

export class Subscriptions extends Context.Service<Subscriptions, {
  create(subscription: {
    readonly id: string
    readonly userId: string
    readonly planId: string
    readonly kind: ServiceKind
    readonly orderId: string
    readonly currentPeriodEnd: Date
    readonly now: Date
  }): Effect.Effect<Subscription>
  get(id: string): Effect.Effect<Option.Option<Subscription>>
  forUser(userId: string): Effect.Effect<ReadonlyArray<Subscription>>
  attachService(id: string, serviceId: string): Effect.Effect<void>
  /**
   * Renewal: moves the period end from `expected` to `next` and makes it active again, only if the period
   * end is still `expected` (two renewals at once extend once) and it is not terminated or failed.
   */
  extend(id: string, expected: Date, next: Date): Effect.Effect<boolean>
  setStatus(id: string, status: SubscriptionStatus, from: ReadonlyArray<SubscriptionStatus>): Effect.Effect<boolean>
  /**
   * The lapse of the period ending `periodEnd`: active → suspended, only if the period end is still `periodEnd`
   * (a renewal that extended it meanwhile wins: false).
   */
  suspendLapsed(id: string, periodEnd: Date): Effect.Effect<boolean>
  setCancelAtPeriodEnd(id: string, cancel: boolean): Effect.Effect<void>
  /** Active subscriptions whose period has ended at `now`. */
  due(now: Date): Effect.Effect<ReadonlyArray<Subscription>>
  /** Suspended subscriptions, for the lifecycle sweeper. */
  readonly suspended: Effect.Effect<ReadonlyArray<Subscription>>
}>()("zh/ports/Subscriptions") {}
