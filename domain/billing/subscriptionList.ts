// The customer's subscriptions as their lists show them: each with what its product says of its service (name,
// address, state), whatever the product — billing asks the product of the subscription's kind, never switches on it.
import { Effect, Option } from "effect"
import type { Subscription } from "./Billing.ts"
import { HostedServices, type ServiceSummary } from "./HostedService.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { decodeKeyset, pageOf } from "./keyset.ts"

export interface ListedSubscription {
  readonly subscription: Subscription
  /** None until the service is built (or when the product keeps no record of it). */
  readonly service: Option.Option<ServiceSummary>
}

/** The page size when the client names none: the whole list, as before it had pages, for nearly every customer. */
export const SUBSCRIPTIONS_PAGE = 100

/** A page, oldest first (keyset: after the last one's creation and id), each with its service. */
export const listSubscriptionsWithServices = Effect.fn("listSubscriptionsWithServices")(function*(
  userId: string,
  after?: string,
  limit = SUBSCRIPTIONS_PAGE
) {
  const products = yield* HostedServices
  const found = yield* (yield* Subscriptions).pageForUser(userId, decodeKeyset(after), limit + 1)
  const { next, rows } = pageOf(found, limit, (s) => ({ at: s.createdAt, id: s.id }))
  const subscriptions = yield* Effect.forEach(
    rows,
    (subscription) =>
      Effect.map(
        Effect.flatMap(products.of(subscription.kind), (product) => product.summary(subscription.id)),
        (service): ListedSubscription => ({ subscription, service })
      ),
    { concurrency: 8 }
  )
  return { subscriptions, next }
})
