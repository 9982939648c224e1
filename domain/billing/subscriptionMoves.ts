// A subscription's moves, persisted: the domain's table (transitions.ts) says which statuses an event may leave and
// where it leads; the store applies each as a compare-and-set on the status left, so concurrent moves apply once.
import { Effect } from "effect"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { type SubscriptionEvent, subscriptionSources } from "./transitions.ts"

/** The period guard of a move: applied only while the period still ends at `periodEnd`; `next` moves it there. */
export interface PeriodGuard {
  readonly periodEnd: Date
  readonly next?: Date
}

/**
 * Applies `event` to the subscription: tried from each status it may leave, in the table's order, each as a
 * compare-and-set; true when one applied. False when none did: the subscription is in no status the event may leave
 * (or its period moved on), or another move won the race.
 */
export const moveWith = (store: Pick<Subscriptions["Service"], "transition">) =>
  (id: string, event: SubscriptionEvent, period?: PeriodGuard): Effect.Effect<boolean, Effect.Error<ReturnType<typeof store.transition>>> =>
    Effect.gen(function*() {
      for (const [from, to] of subscriptionSources(event)) {
        const moved = yield* store.transition(id, {
          from,
          to,
          ...(period === undefined ? {} : { periodEnd: period.periodEnd }),
          ...(period?.next === undefined ? {} : { nextPeriodEnd: period.next })
        })
        if (moved) return true
      }
      return false
    })

/** `moveWith`, on the application's store. */
export const moveSubscription = (id: string, event: SubscriptionEvent, period?: PeriodGuard) =>
  Effect.flatMap(Subscriptions, (store) => moveWith(store)(id, event, period))
