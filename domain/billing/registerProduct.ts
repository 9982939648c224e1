// How a product becomes a HostedService: it says what it decides (its plans, its options, its record of a service, how
// to stop, bring back and remove one) and names its durable workflows; billing gives the lifecycle workflows their
// bodies, the same for every product: a lapse decided against a racing renewal, a durable return after a renewal,
// an end after the grace window.
import { Clock, Effect, Layer, Option, Schedule, Schema } from "effect"
import { Activity, type WorkflowEngine } from "effect/workflow"
import { ServiceHolds } from "../../ports/ServiceHolds.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { cappedBackoff } from "../ops/keepTrying.ts"
import type { ServiceKind } from "./Billing.ts"
import { ServiceUpstreamUnavailable, SoldOut } from "./BillingErrors.ts"
import { HostedServices, type OrderRefused, type PlanTerms, type ServiceInspection, type ServiceSummary } from "./HostedService.ts"
import { moveSubscription } from "./subscriptionMoves.ts"
import { lapsedFor, type PeriodWorkflow, stillDue, type TerminationWorkflow } from "./lapse.ts"
import type { ProvisioningWorkflow } from "./provisioning.ts"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import { dieOnDatabaseOutage } from "../ops/dieOnDatabaseOutage.ts"
import { noticeService, tell } from "./serviceNotices.ts"

/** A failure of the product's upstream: `transient` says which may pass. */
type UpstreamError = { readonly _tag: string }

/** A product, as it registers itself: what it decides, and the names of its durable workflows. */
export interface ProductDefinition<Plan, RP, RO, RS, RB, RL, RR, RE> {
  readonly kind: ServiceKind
  readonly steps: ReadonlyArray<string>
  /** The plan, when it is one of this product's and for sale now. */
  readonly forSale: (planId: string) => Effect.Effect<Option.Option<Plan>, OrderRefused | DatabaseUnavailable, RP>
  /** One of this product's plans, retired ones included (a renewal bills it). */
  readonly plan: (planId: string) => Effect.Effect<Option.Option<PlanTerms>, DatabaseUnavailable, RP>
  readonly termsOf: (plan: Plan) => PlanTerms
  /** The customer's options decoded and checked against the plan, as they are to be stored with the order. */
  readonly checkOptions: (plan: Plan, options: unknown) => Effect.Effect<Readonly<Record<string, unknown>>, OrderRefused | DatabaseUnavailable, RO>
  /**
   * Whether an order of the plan with these (checked) options can be built now. False only when the product knows it
   * cannot (every server full); an upstream that cannot tell answers true: the provisioning decides, and refunds.
   */
  readonly hasRoom: (plan: Plan, options: Readonly<Record<string, unknown>>) => Effect.Effect<boolean, DatabaseUnavailable, RO>
  /** What the customer's lists show of the subscription's service. */
  readonly summary: (subscriptionId: string) => Effect.Effect<Option.Option<ServiceSummary>, DatabaseUnavailable, RS>
  /** The upstream's live state of the subscription's service; an upstream that does not answer says so (reachable: false). */
  readonly inspect: (subscriptionId: string) => Effect.Effect<Option.Option<ServiceInspection>, DatabaseUnavailable, RS>
  /** The service's own record of a subscription: suspended or not, and the end of its grace window. */
  readonly standing: (subscriptionId: string) => Effect.Effect<Option.Option<ServiceStanding>, DatabaseUnavailable, RS>
  /**
   * The lapse of the period ending `periodEnd`: the service stops (kept, for the grace window) and its record says
   * suspended until the grace window's end. Idempotent.
   */
  readonly suspend: (subscriptionId: string, periodEnd: Date) => Effect.Effect<void, UpstreamError, RL>
  /**
   * An operator's hold: the service stops as at the lapse of its period ending `periodEnd`, without what only a lapse
   * calls for (a VPS's final snapshot: a hold ends nothing; if the period then lapses, its lapse takes it). Default:
   * `suspend`. Idempotent.
   */
  readonly hold?: ((subscriptionId: string, periodEnd: Date) => Effect.Effect<void, UpstreamError, RL>) | undefined
  /** Brings a suspended service back (a renewal was paid) and marks its record so. Idempotent. */
  readonly bringBack: (subscriptionId: string) => Effect.Effect<void, UpstreamError, RB>
  /** Removes the service upstream for good: false when it refuses to (what is there is not ours: an alert, left). */
  readonly remove: (subscriptionId: string) => Effect.Effect<boolean, UpstreamError, RR>
  /** After the removal: what the service held goes back, and its record says it is gone. */
  readonly release: (subscriptionId: string) => Effect.Effect<void, DatabaseUnavailable, RE>
  /** The upstream failures that pass (down, busy): tried again with backoff. */
  readonly transient: (error: UpstreamError) => boolean
  readonly provisioning: ProvisioningWorkflow
  readonly lapse: PeriodWorkflow
  readonly restore: PeriodWorkflow
  readonly termination: TerminationWorkflow
}

export interface ServiceStanding {
  readonly suspended: boolean
  readonly graceUntil: Date | null
}

/**
 * A product's registration, for its layer: its `HostedService` (with what it runs on captured when the layer is built,
 * so billing's calls need none of the product's ports) and the bodies of its lifecycle workflows.
 */
export const registerProduct = <Plan, RP, RO, RS, RB, RL, RR, RE>(
  product: ProductDefinition<Plan, RP, RO, RS, RB, RL, RR, RE>
) => {
  type Runs = RO | RP | RS | RB | RL | RR | RE | Subscriptions | ServiceHolds | WorkflowEngine.WorkflowEngine
  /** Upstream trouble within one step: tried again after 1 s, 2 s, 4 s … five times, then the step dies (and replays). */
  const retried = <A, R>(effect: Effect.Effect<A, UpstreamError, R>) =>
    effect.pipe(Effect.retry({ times: 5, schedule: Schedule.exponential("1 second"), while: product.transient }), Effect.orDie)
  /** An operator's hold in force: nothing but the operator brings the service back (not a renewal, paid or not). */
  const held = (subscriptionId: string) => Effect.map(Effect.flatMap(ServiceHolds, (holds) => holds.inForce(subscriptionId)), Option.isSome)
  /** An operator waits for the answer: an upstream failure is theirs to see now (and to try again), not retried. */
  const forOperator = <A, R>(effect: Effect.Effect<A, UpstreamError, R>) =>
    Effect.mapError(effect, (e) => new ServiceUpstreamUnavailable({ kind: product.kind, detail: e._tag }))
  const registration = Layer.effectDiscard(Effect.gen(function*() {
    const context = yield* Effect.context<Runs>()
    const run = <A, E>(effect: Effect.Effect<A, E, Runs>) => Effect.provideContext(effect, context)
    const started = (execution: Effect.Effect<string, never, WorkflowEngine.WorkflowEngine>) => run(Effect.asVoid(execution))
    yield* (yield* HostedServices).register({
      kind: product.kind,
      steps: product.steps,
      prepareOrder: (planId, options) =>
        run(Effect.gen(function*() {
          const plan = yield* product.forSale(planId)
          if (Option.isNone(plan)) return Option.none()
          const checked = yield* product.checkOptions(plan.value, options)
          if (!(yield* product.hasRoom(plan.value, checked))) return yield* new SoldOut({ planId })
          return Option.some({ plan: product.termsOf(plan.value), options: checked })
        })),
      summary: (subscriptionId) => run(product.summary(subscriptionId)),
      inspect: (subscriptionId) => run(product.inspect(subscriptionId)),
      plan: (planId) => run(product.plan(planId)),
      provision: (orderId) => started(product.provisioning.execute({ orderId }, { discard: true })),
      suspend: (subscriptionId, periodEnd) =>
        started(product.lapse.execute({ subscriptionId, periodEnd: periodEnd.toISOString() }, { discard: true })),
      graceUntil: (subscriptionId) =>
        run(Effect.map(product.standing(subscriptionId), Option.flatMap((s) => Option.fromNullishOr(s.graceUntil)))),
      terminate: (subscriptionId, graceUntil) =>
        started(product.termination.execute({ subscriptionId, graceUntil: graceUntil.toISOString() }, { discard: true })),
      resume: (subscriptionId, periodEnd) =>
        run(Effect.gen(function*() {
          const standing = yield* product.standing(subscriptionId)
          if (Option.isNone(standing) || !standing.value.suspended || (yield* held(subscriptionId))) return
          // Back at once when the upstream answers; when it does not, a durable workflow keeps trying until it does.
          yield* product.bringBack(subscriptionId).pipe(
            Effect.catchCause((cause) =>
              Effect.andThen(
                Effect.logWarning(`bringing back the ${product.kind} of subscription ${subscriptionId} failed; retrying durably`, cause),
                product.restore.execute({ subscriptionId, periodEnd: periodEnd.toISOString() }, { discard: true })
              ))
          )
        })),
      hold: (subscriptionId) =>
        run(Effect.gen(function*() {
          const subscription = yield* (yield* Subscriptions).get(subscriptionId)
          if (Option.isNone(subscription)) return
          // As the lapse of its current period would: a lapse of that period later finds it done.
          yield* forOperator((product.hold ?? product.suspend)(subscriptionId, subscription.value.currentPeriodEnd))
        })),
      unhold: (subscriptionId) =>
        run(Effect.gen(function*() {
          const subscription = yield* (yield* Subscriptions).get(subscriptionId)
          const standing = yield* product.standing(subscriptionId)
          if (Option.isNone(subscription) || subscription.value.status !== "active") return
          if (Option.isNone(standing) || !standing.value.suspended) return
          yield* forOperator(product.bringBack(subscriptionId))
        })),
      end: (subscriptionId) =>
        run(Effect.gen(function*() {
          if (!(yield* forOperator(product.remove(subscriptionId)))) return false
          // As the termination workflow does: the subscription ends first, then what the service held goes back.
          yield* moveSubscription(subscriptionId, "endedByOperator")
          yield* product.release(subscriptionId)
          return true
        }))
    })
  }))
  /** The customer of a service suspended for the lapse of this period is told, with the day it ends for good. */
  const tellSuspended = (subscriptionId: string, periodEnd: string) =>
    Effect.gen(function*() {
      const subscription = yield* (yield* Subscriptions).get(subscriptionId)
      if (
        Option.isNone(subscription) || subscription.value.status !== "suspended" ||
        subscription.value.currentPeriodEnd.toISOString() !== periodEnd
      ) return
      const standing = yield* product.standing(subscriptionId)
      const endsAt = Option.isSome(standing) ? standing.value.graceUntil : null
      if (endsAt === null) return
      yield* tell({
        _tag: "ServiceSuspended",
        userId: subscription.value.userId,
        service: yield* noticeService(subscription.value, product.plan),
        periodEnd: new Date(periodEnd),
        endsAt
      })
    })
  /** The lapse, decided against a renewal racing it: the service stops; if the renewal won meanwhile, it comes back. */
  const lapse = product.lapse.toLayer(Effect.fn(function*({ periodEnd, subscriptionId }) {
    const due = yield* Activity.make({ name: "check", success: Schema.Boolean, execute: dieOnDatabaseOutage(stillDue(subscriptionId, periodEnd)) })
    if (!due) return
    // One activity: the service's record and its subscription say suspended within moments of each other.
    yield* Activity.make({
      name: "suspend",
      execute: dieOnDatabaseOutage(Effect.gen(function*() {
        yield* retried(product.suspend(subscriptionId, new Date(periodEnd)))
        // Atomic against a renewal: either the lapse of this period is recorded, or the renewal extended it first.
        if (yield* lapsedFor(subscriptionId, periodEnd)) return
        // Renewed while we stopped it: bring it back, unless an operator holds it.
        if (yield* held(subscriptionId)) return
        yield* retried(product.bringBack(subscriptionId))
      }))
    })
    // Its own step, so a retried suspension never tells twice (the notice's key would hold anyway).
    yield* Activity.make({ name: "tell-suspended", execute: dieOnDatabaseOutage(tellSuspended(subscriptionId, periodEnd)) })
  }))
  /** A renewal's durable return: paid for, it happens however long the upstream stays down (once per period). */
  const restore = product.restore.toLayer(Effect.fn(function*({ subscriptionId }) {
    yield* Activity.make({
      name: "bring-back",
      execute: Effect.gen(function*() {
        // Held by an operator since the renewal: it stays stopped (lifting the hold brings it back).
        if (yield* dieOnDatabaseOutage(held(subscriptionId))) return
        yield* product.bringBack(subscriptionId).pipe(
          Effect.retry({ schedule: cappedBackoff("5 minutes"), while: product.transient }),
          Effect.orDie
        )
      })
    })
  }))
  /**
   * The end after the grace window, or at once after the consumer's withdrawal (withdrawal.ts: the subscription is
   * terminated already, and `graceUntil` is the withdrawal's time): removed upstream (unless refused), released, the
   * subscription terminated.
   */
  const termination = product.termination.toLayer(Effect.fn(function*({ subscriptionId }) {
    const proceed = yield* Activity.make({
      name: "check",
      success: Schema.Boolean,
      execute: dieOnDatabaseOutage(Effect.gen(function*() {
        const subscription = yield* (yield* Subscriptions).get(subscriptionId)
        const standing = yield* product.standing(subscriptionId)
        const graceUntil = Option.isSome(standing) ? standing.value.graceUntil : null
        if (Option.isNone(subscription)) return false
        if (subscription.value.status === "terminated" && subscription.value.withdrawnAt !== null) return true
        return subscription.value.status === "suspended" && graceUntil !== null &&
          graceUntil.getTime() <= (yield* Clock.currentTimeMillis)
      }))
    })
    if (!proceed) return
    // Refused when what is there upstream is not ours: the service then stays as it is, for an operator.
    const removed = yield* Activity.make({ name: "remove", success: Schema.Boolean, execute: retried(product.remove(subscriptionId)) })
    if (!removed) return
    yield* Activity.make({
      name: "release",
      execute: dieOnDatabaseOutage(Effect.gen(function*() {
        // The subscription ends first: whoever sees the service gone sees its subscription terminated.
        yield* moveSubscription(subscriptionId, "ended")
        yield* product.release(subscriptionId)
      }))
    })
    yield* Activity.make({
      name: "tell-ended",
      execute: dieOnDatabaseOutage(Effect.gen(function*() {
        const subscription = yield* (yield* Subscriptions).get(subscriptionId)
        if (Option.isNone(subscription) || subscription.value.status !== "terminated") return
        yield* tell({
          _tag: "ServiceEnded",
          userId: subscription.value.userId,
          service: yield* noticeService(subscription.value, product.plan),
          endedAt: new Date(yield* Clock.currentTimeMillis)
        })
      }))
    })
  }))
  return Layer.mergeAll(registration, lapse, restore, termination)
}
