// The customer's subscriptions as their lists show them: each with what its product says of its service (name,
// address, state), whatever the product — billing asks the product of the subscription's kind, never switches on it.
import { Effect, Option } from "effect"
import type { Subscription } from "./Billing.ts"
import { HostedServices, type ServiceSummary } from "./HostedService.ts"
import { listSubscriptions } from "./Renewal.ts"

export interface ListedSubscription {
  readonly subscription: Subscription
  /** None until the service is built (or when the product keeps no record of it). */
  readonly service: Option.Option<ServiceSummary>
}

export const listSubscriptionsWithServices = Effect.fn("listSubscriptionsWithServices")(function*(userId: string) {
  const products = yield* HostedServices
  const subscriptions = yield* listSubscriptions(userId)
  return yield* Effect.forEach(
    subscriptions,
    (subscription) =>
      Effect.map(
        Effect.flatMap(products.of(subscription.kind), (product) => product.summary(subscription.id)),
        (service): ListedSubscription => ({ subscription, service })
      ),
    { concurrency: 8 }
  )
})
