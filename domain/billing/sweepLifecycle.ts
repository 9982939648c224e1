// What time does to subscriptions, every minute: each product suspends what lapsed and ends what outlived its grace.
import { Clock, Effect, Option } from "effect"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import type { ServiceKind, Subscription } from "./Billing.ts"
import { HostedServices } from "./HostedService.ts"

/**
 * One pass of the lifecycle, run every minute: each lapsed subscription's service is suspended, each suspended one
 * whose grace window ended is ended, by its product. One product's trouble (its upstream down) does not hold back
 * the others': it is logged, and the next pass tries again.
 */
export const sweepLifecycle = Effect.gen(function*() {
  const subscriptions = yield* Subscriptions
  const products = yield* HostedServices
  const at = yield* Clock.currentTimeMillis
  const [due, suspended] = yield* Effect.all([subscriptions.due(new Date(at)), subscriptions.suspended])
  const byKind = new Map<ServiceKind, { due: Array<Subscription>; suspended: Array<Subscription> }>()
  const of = (kind: ServiceKind) => byKind.get(kind) ?? byKind.set(kind, { due: [], suspended: [] }).get(kind)!
  for (const s of due) of(s.kind).due.push(s)
  for (const s of suspended) of(s.kind).suspended.push(s)
  yield* Effect.forEach(byKind, ([kind, work]) =>
    Effect.gen(function*() {
      const product = yield* products.of(kind)
      for (const lapsed of work.due) yield* product.suspend(lapsed.id, lapsed.currentPeriodEnd)
      for (const held of work.suspended) {
        const graceUntil = yield* product.graceUntil(held.id)
        if (Option.isSome(graceUntil) && graceUntil.value.getTime() <= at) yield* product.terminate(held.id, graceUntil.value)
      }
    }).pipe(Effect.catchCause((cause) => Effect.logError(`the ${kind} lifecycle sweep failed`, cause))), { concurrency: "unbounded", discard: true })
})
