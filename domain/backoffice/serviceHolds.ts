// An operator suspends a service with a statement of reasons, or lifts the suspension: recorded and audited first (so
// no renewal or lifecycle pass brings it back meanwhile), then done upstream through the product, then the customer
// is told (DSA art. 17). Done twice, each is done once: the hold in force is the one decision.
import { Clock, Effect, Option, Schema } from "effect"
import { SecureRandom } from "effect/crypto"
import { ServiceHolds } from "../../ports/ServiceHolds.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { UserId } from "../account/User.ts"
import { recordAudit } from "../audit/record.ts"
import type { Subscription } from "../billing/Billing.ts"
import { HostedServices } from "../billing/HostedService.ts"
import { type HoldGround, ServiceHold } from "../billing/ServiceHold.ts"
import { noticeService, tell } from "../billing/serviceNotices.ts"
import type { Operator } from "./customers.ts"

export class ServiceNotFound extends Schema.TaggedError<ServiceNotFound>()("ServiceNotFound", {}) {
  override get message() { return "No such service." }
}

/** A service that is gone (terminated, or never built) has nothing to suspend or bring back. */
export class ServiceGone extends Schema.TaggedError<ServiceGone>()("ServiceGone", {}) {
  override get message() { return "This service no longer exists: there is nothing to suspend or bring back." }
}

export class ServiceNotHeld extends Schema.TaggedError<ServiceNotHeld>()("ServiceNotHeld", {}) {
  override get message() { return "This service is not suspended by an operator." }
}

/** What is upstream is not ours (its mark is another order's): nothing was removed; the reconciler lists it. */
export class ServiceNotOurs extends Schema.TaggedError<ServiceNotOurs>()("ServiceNotOurs", {}) {
  override get message() { return "What the upstream holds there is not this service's: nothing was removed. Look at it with the reconciler." }
}

/** The statement of reasons an operator gives (the customer reads it). */
export interface Statement {
  readonly facts: string
  readonly ground: HoldGround
}

const liveSubscription = Effect.fnUntraced(function*(subscriptionId: string) {
  const subscription = yield* (yield* Subscriptions).get(subscriptionId)
  if (Option.isNone(subscription)) return yield* new ServiceNotFound()
  if (subscription.value.status === "terminated" || subscription.value.status === "failed") return yield* new ServiceGone()
  return subscription.value
})

const holdView = (hold: ServiceHold) => ({ id: hold.id, facts: hold.facts, ground: hold.ground, placedBy: hold.placedBy })

const auditHold = (
  operator: Operator,
  action: "staff.service_suspended" | "staff.service_unsuspended" | "staff.service_terminated",
  subscription: Subscription,
  change: { readonly before: unknown; readonly after: unknown }
) =>
  recordAudit({
    actorId: operator.id,
    actorRole: operator.role,
    action,
    subjectUserId: UserId.make(subscription.userId),
    target: { type: "subscription", id: subscription.id },
    address: operator.address,
    ...change
  })

/** Suspends the service for the operator's reasons; suspending a held service again finishes what is left to do. */
export const suspendService = Effect.fn("suspendService")(function*(operator: Operator, subscriptionId: string, statement: Statement) {
  const subscription = yield* liveSubscription(subscriptionId)
  const product = yield* (yield* HostedServices).of(subscription.kind)
  const holds = yield* ServiceHolds
  const draft = new ServiceHold({
    id: yield* (yield* SecureRandom.SecureRandom).uuidV4(),
    subscriptionId,
    placedBy: operator.id,
    placedAt: new Date(yield* Clock.currentTimeMillis),
    facts: statement.facts,
    ground: statement.ground,
    liftedBy: null,
    liftedAt: null,
    liftReason: null
  })
  const { hold } = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    const outcome = yield* holds.place(draft)
    if (outcome.placed) {
      yield* auditHold(operator, "staff.service_suspended", subscription, {
        before: { held: false, status: subscription.status },
        after: { held: true, hold: holdView(outcome.hold) }
      })
    }
    return outcome
  }))
  // Recorded before it is done: a renewal paid from now on leaves it stopped. A failure here is answered, and the
  // same request again does the rest.
  yield* product.hold(subscriptionId)
  yield* tell({
    _tag: "ServiceHeld",
    userId: subscription.userId,
    service: yield* noticeService(subscription, product.plan),
    holdId: hold.id,
    placedAt: hold.placedAt,
    facts: hold.facts,
    ground: hold.ground
  })
  return hold
})

/** Lifts the operator's hold: the service comes back first (if its subscription is paid), then the hold is lifted. */
export const unsuspendService = Effect.fn("unsuspendService")(function*(operator: Operator, subscriptionId: string, reason: string) {
  const subscription = yield* liveSubscription(subscriptionId)
  const holds = yield* ServiceHolds
  const current = yield* holds.inForce(subscriptionId)
  if (Option.isNone(current)) return yield* new ServiceNotHeld()
  const product = yield* (yield* HostedServices).of(subscription.kind)
  yield* product.unhold(subscriptionId)
  const at = new Date(yield* Clock.currentTimeMillis)
  const lifted = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    const lifted = yield* holds.lift(subscriptionId, { by: operator.id, at, reason })
    // Two lifts at once: the one that lifted it records it.
    if (Option.isSome(lifted)) {
      yield* auditHold(operator, "staff.service_unsuspended", subscription, {
        before: { held: true, hold: holdView(lifted.value) },
        after: { held: false, reason }
      })
    }
    return lifted
  }))
  if (Option.isNone(lifted)) return yield* new ServiceNotHeld()
  yield* tell({
    _tag: "HoldLifted",
    userId: subscription.userId,
    service: yield* noticeService(subscription, product.plan),
    holdId: lifted.value.id,
    liftedAt: at
  })
  return lifted.value
})

/**
 * An admin ends a service an operator holds, now and for good (the customer was given the statement of reasons when
 * it was suspended): removed upstream, the subscription terminated, what it held released, audited, the customer told.
 */
export const terminateService = Effect.fn("terminateService")(function*(operator: Operator, subscriptionId: string, reason: string) {
  const subscription = yield* liveSubscription(subscriptionId)
  const hold = yield* (yield* ServiceHolds).inForce(subscriptionId)
  if (Option.isNone(hold)) return yield* new ServiceNotHeld()
  const product = yield* (yield* HostedServices).of(subscription.kind)
  if (!(yield* product.end(subscriptionId))) return yield* new ServiceNotOurs()
  yield* auditHold(operator, "staff.service_terminated", subscription, {
    before: { status: subscription.status, hold: holdView(hold.value) },
    after: { status: "terminated", reason }
  })
  yield* tell({
    _tag: "ServiceEnded",
    userId: subscription.userId,
    service: yield* noticeService(subscription, product.plan),
    endedAt: new Date(yield* Clock.currentTimeMillis)
  })
})
