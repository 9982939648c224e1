// The durable workflows of a subscription's periods (a lapse, a return, an end), and the moment a period lapses,
// decided against a renewal racing it: one compare-and-set in the store.
import { Clock, Effect, Option, Schema } from "effect"
import { Workflow } from "effect/workflow"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { moveSubscription } from "./subscriptionMoves.ts"

/**
 * What happens to a service for one period of its subscription (its lapse, or its return after the renewal of that
 * period): keyed by both, so sweeping or renewing twice does it once.
 */
export const periodWorkflow = <const Name extends string>(name: Name) =>
  Workflow.make(name, {
    payload: { subscriptionId: Schema.String, periodEnd: Schema.String },
    idempotencyKey: ({ periodEnd, subscriptionId }) => `${subscriptionId}@${periodEnd}`
  })

/** Keyed by the grace end too: after a renewal and a later lapse, the new grace gets its own termination. */
export const terminationWorkflow = <const Name extends string>(name: Name) =>
  Workflow.make(name, {
    payload: { subscriptionId: Schema.String, graceUntil: Schema.String },
    idempotencyKey: ({ graceUntil, subscriptionId }) => `${subscriptionId}@${graceUntil}`
  })

export type PeriodWorkflow = ReturnType<typeof periodWorkflow<string>>
export type TerminationWorkflow = ReturnType<typeof terminationWorkflow<string>>

/** Still lapsed? A renewal that won the race leaves the subscription active with a later period end. */
export const stillDue = (subscriptionId: string, periodEnd: string) =>
  Effect.gen(function*() {
    const subscription = yield* (yield* Subscriptions).get(subscriptionId)
    return Option.isSome(subscription) &&
      subscription.value.status === "active" &&
      subscription.value.currentPeriodEnd.toISOString() === periodEnd &&
      subscription.value.currentPeriodEnd.getTime() <= (yield* Clock.currentTimeMillis)
  })

/**
 * Suspends the subscription for the lapse of this very period — atomically, so a renewal that extended it meanwhile
 * wins — and says whether it is (now, or already from an earlier attempt) suspended for it.
 */
export const lapsedFor = (subscriptionId: string, periodEnd: string) =>
  Effect.gen(function*() {
    if (yield* moveSubscription(subscriptionId, "lapsed", { periodEnd: new Date(periodEnd) })) return true
    const current = yield* (yield* Subscriptions).get(subscriptionId)
    return Option.isSome(current) && current.value.status === "suspended" &&
      current.value.currentPeriodEnd.toISOString() === periodEnd
  })
