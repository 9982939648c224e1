// What time does to subscriptions, every minute: each product suspends what lapsed and ends what outlived its grace,
// and the customer of a service about to end is warned a last time.
import { Clock, Effect, Option } from "effect"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import type { ServiceKind, Subscription } from "./Billing.ts"
import { HostedServices } from "./HostedService.ts"
import { dueForFinalWarning, noticeService, tell } from "./serviceNotices.ts"

/**
 * One pass of the lifecycle, run every minute: each lapsed subscription's service is suspended, each suspended one
 * whose grace window ended is ended, by its product; one whose grace window ends within FINAL_WARNING_BEFORE is given
 * its final warning (once: the notice's key names the grace end). One product's trouble (its upstream down) does not hold back
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
        if (Option.isNone(graceUntil)) continue
        if (graceUntil.value.getTime() <= at) yield* product.terminate(held.id, graceUntil.value)
        else if (dueForFinalWarning(graceUntil.value, at)) {
          yield* tell({
            _tag: "FinalWarning",
            userId: held.userId,
            service: yield* noticeService(held, product.plan),
            endsAt: graceUntil.value
          })
        }
      }
    }).pipe(Effect.catchCause((cause) => Effect.logError(`the ${kind} lifecycle sweep failed`, cause))), { concurrency: "unbounded", discard: true })
})
