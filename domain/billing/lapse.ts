// The moment a period lapses, decided against a renewal racing it: one conditional update in the store.
import { Effect, Option } from "effect"
import { Subscriptions } from "../../ports/Subscriptions.ts"

/**
 * Suspends the subscription for the lapse of this very period — atomically, so a renewal that extended it meanwhile
 * wins — and says whether it is (now, or already from an earlier attempt) suspended for it.
 */
export const lapsedFor = (subscriptionId: string, periodEnd: string) =>
  Effect.gen(function*() {
    const subscriptions = yield* Subscriptions
    if (yield* subscriptions.suspendLapsed(subscriptionId, new Date(periodEnd))) return true
    const current = yield* subscriptions.get(subscriptionId)
    return Option.isSome(current) && current.value.status === "suspended" &&
      current.value.currentPeriodEnd.toISOString() === periodEnd
  })

