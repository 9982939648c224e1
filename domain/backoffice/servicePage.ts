// A service as an operator reads it: the subscription, what its product says of it, and its holds.
import { Effect, Option } from "effect"
import { ServiceHolds } from "../../ports/ServiceHolds.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { HostedServices } from "../billing/HostedService.ts"
import { ServiceNotFound } from "./serviceHolds.ts"

export const servicePage = Effect.fn("servicePage")(function*(subscriptionId: string) {
  const subscription = yield* (yield* Subscriptions).get(subscriptionId)
  if (Option.isNone(subscription)) return yield* new ServiceNotFound()
  const product = yield* (yield* HostedServices).of(subscription.value.kind)
  const holds = yield* (yield* ServiceHolds).history(subscriptionId)
  return {
    subscription: subscription.value,
    service: yield* product.summary(subscriptionId),
    hold: Option.fromNullishOr(holds.find((h) => h.liftedAt === null)),
    holds
  }
})
