// Subscriptions: what a customer pays for, month after month, and the state of its service.
import { Context, type Effect, type Option } from "effect"
import type { OrderId, ServiceKind, Subscription, SubscriptionId, SubscriptionStatus } from "../domain/billing/Billing.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class Subscriptions extends Context.Service<Subscriptions, {
  create(subscription: {
    readonly id: SubscriptionId
    readonly userId: string
    readonly planId: string
    readonly kind: ServiceKind
    readonly orderId: OrderId
    readonly currentPeriodEnd: Date
    readonly now: Date
  }): Effect.Effect<Subscription, DatabaseUnavailable>
  get(id: string): Effect.Effect<Option.Option<Subscription>, DatabaseUnavailable>
  forUser(userId: string): Effect.Effect<ReadonlyArray<Subscription>, DatabaseUnavailable>
  attachService(id: string, serviceId: string): Effect.Effect<void, DatabaseUnavailable>
  /**
   * Renewal: moves the period end from `expected` to `next` and makes it active again, only if the period
   * end is still `expected` (two renewals at once extend once) and it is not terminated or failed.
   */
  extend(id: string, expected: Date, next: Date): Effect.Effect<boolean, DatabaseUnavailable>
  setStatus(id: string, status: SubscriptionStatus, from: ReadonlyArray<SubscriptionStatus>): Effect.Effect<boolean, DatabaseUnavailable>
  /**
   * The lapse of the period ending `periodEnd`: active → suspended, only if the period end is still `periodEnd`
   * (a renewal that extended it meanwhile wins: false).
   */
  suspendLapsed(id: string, periodEnd: Date): Effect.Effect<boolean, DatabaseUnavailable>
  setCancelAtPeriodEnd(id: string, cancel: boolean): Effect.Effect<void, DatabaseUnavailable>
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
