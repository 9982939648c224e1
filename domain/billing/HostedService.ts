// What billing sells, in billing's words: a product (a VPS, a game server, …) implements `HostedService` and app/
// registers it by kind. Billing asks it for a plan's terms, for the customer's options checked, to build the service
// (a durable workflow with named steps that refunds through billing when it fails), and to suspend, bring back and
// end it as the subscription's periods go; billing never imports a product, and a product never sees a payment.
import { Context, Effect, Layer, Option } from "effect"
import { Activity, type WorkflowEngine } from "effect/workflow"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import { cappedBackoff } from "../ops/keepTrying.ts"
import type { ServiceKind } from "./Billing.ts"
import type { InvalidOrderOption, PlanUnavailable, ProductUnavailable } from "./BillingErrors.ts"
import type { PeriodWorkflow, TerminationWorkflow } from "./lapse.ts"
import type { ProvisioningWorkflow } from "./provisioning.ts"

/** Why an order is refused before anything is charged. */
export type OrderRefused = InvalidOrderOption | PlanUnavailable | ProductUnavailable

/** What billing needs of a plan: what the customer is charged for, every month. */
export interface PlanTerms {
  readonly id: string
  readonly name: string
  readonly priceCents: number
}

/** A plan for sale and the customer's options, checked against it and as they are to be stored with the order. */
export interface PreparedOrder {
  readonly plan: PlanTerms
  readonly options: Readonly<Record<string, unknown>>
}

export interface HostedService {
  readonly kind: ServiceKind
  /** The provisioning's progress steps, as the customer sees them; the order counts them. */
  readonly steps: ReadonlyArray<string>
  /**
   * None when the plan is not one of this product's or is not for sale now; else the customer's options, decoded and
   * checked against it (InvalidOrderOption names the field), before anything is charged.
   */
  prepareOrder(planId: string, options: unknown): Effect.Effect<Option.Option<PreparedOrder>, OrderRefused | DatabaseUnavailable>
  /** One of this product's plans, retired ones included (a renewal bills it). */
  plan(planId: string): Effect.Effect<Option.Option<PlanTerms>, DatabaseUnavailable>
  /**
   * Starts (or joins: idempotent by order id) the durable provisioning of a paid order. It reports its steps on the
   * order and completes it, or refunds and fails it (billing's `failAndRefund`) and undoes what it built.
   */
  provision(orderId: string): Effect.Effect<void>
  /** Starts the durable lapse of the period ending `periodEnd`: the service stops, kept for the grace window. */
  suspend(subscriptionId: string, periodEnd: Date): Effect.Effect<void>
  /** When the grace window of a suspended service ends (none: nothing of it left to end). */
  graceUntil(subscriptionId: string): Effect.Effect<Option.Option<Date>, DatabaseUnavailable>
  /** Starts the durable end of a service whose grace window ended: it is gone for good, the subscription terminated. */
  terminate(subscriptionId: string, graceUntil: Date): Effect.Effect<void>
  /**
   * A renewal was paid for the period that ended `periodEnd`: a suspended service comes back, at once when its upstream
   * answers, else durably (a workflow keeps trying, once per renewed period).
   */
  resume(subscriptionId: string, periodEnd: Date): Effect.Effect<void, DatabaseUnavailable>
}

/**
 * The products on sale, by kind. Each product's layer registers itself once, when the application is built
 * (`HostedServices.register`); billing then asks by the kind stored on an order or subscription.
 */
export class HostedServices extends Context.Service<HostedServices, {
  readonly register: (service: HostedService) => Effect.Effect<void>
  /** The product of that kind; a kind nobody registered is a wiring bug (a defect). */
  readonly of: (kind: ServiceKind) => Effect.Effect<HostedService>
  readonly all: Effect.Effect<ReadonlyArray<HostedService>>
}>()("zh/domain/billing/HostedServices") {
  static readonly layer = Layer.sync(HostedServices, () => {
    const byKind = new Map<ServiceKind, HostedService>()
    return HostedServices.of({
      register: (service) =>
        Effect.suspend(() =>
          byKind.has(service.kind)
            ? Effect.die(new Error(`two products registered for kind "${service.kind}"`))
            : Effect.sync(() => void byKind.set(service.kind, service))),
      of: (kind) =>
        Effect.suspend(() => {
          const service = byKind.get(kind)
          return service === undefined ? Effect.die(new Error(`no product is registered for kind "${kind}"`)) : Effect.succeed(service)
        }),
      all: Effect.sync(() => [...byKind.values()])
    })
  })
}

/** A product, as it registers itself: what it decides, and the durable workflows that do the work. */
export interface ProductDefinition<Plan, RP, RO, RS, RB> {
  readonly kind: ServiceKind
  readonly steps: ReadonlyArray<string>
  /** The plan, when it is one of this product's and for sale now. */
  readonly forSale: (planId: string) => Effect.Effect<Option.Option<Plan>, DatabaseUnavailable, RP>
  /** One of this product's plans, retired ones included (a renewal bills it). */
  readonly plan: (planId: string) => Effect.Effect<Option.Option<PlanTerms>, DatabaseUnavailable, RP>
  readonly termsOf: (plan: Plan) => PlanTerms
  /** The customer's options decoded and checked against the plan, as they are to be stored with the order. */
  readonly checkOptions: (plan: Plan, options: unknown) => Effect.Effect<Readonly<Record<string, unknown>>, OrderRefused | DatabaseUnavailable, RO>
  /** The service's own record of a subscription: suspended or not, and the end of its grace window. */
  readonly standing: (subscriptionId: string) => Effect.Effect<Option.Option<ServiceStanding>, DatabaseUnavailable, RS>
  /** Brings a suspended service back (a renewal was paid): at once, or durably (`restore`) when its upstream is down. */
  readonly bringBack: (subscriptionId: string) => Effect.Effect<void, { readonly _tag: string }, RB>
  /** The failures of `bringBack` that pass (its upstream down or busy): the durable return retries them, forever. */
  readonly transient: (error: { readonly _tag: string }) => boolean
  readonly provisioning: ProvisioningWorkflow
  readonly lapse: PeriodWorkflow
  /** The durable return after a renewal; billing gives it its body (`bringBack`, retried). */
  readonly restore: PeriodWorkflow
  readonly termination: TerminationWorkflow
}

export interface ServiceStanding {
  readonly suspended: boolean
  readonly graceUntil: Date | null
}

/**
 * A product's registration, for its layer: its `HostedService`, with what it runs on captured when the layer is
 * built, so billing's calls need none of the product's ports.
 */
export const registerProduct = <Plan, RP, RO, RS, RB>(
  product: ProductDefinition<Plan, RP, RO, RS, RB>
): Layer.Layer<never, never, RO | RP | RS | RB | WorkflowEngine.WorkflowEngine | HostedServices> =>
  Layer.mergeAll(
    Layer.effectDiscard(Effect.gen(function*() {
      const context = yield* Effect.context<RO | RP | RS | RB | WorkflowEngine.WorkflowEngine>()
      const run = <A, E>(effect: Effect.Effect<A, E, RO | RP | RS | RB | WorkflowEngine.WorkflowEngine>) =>
        Effect.provideContext(effect, context)
      const started = (execution: Effect.Effect<string, never, WorkflowEngine.WorkflowEngine>) => run(Effect.asVoid(execution))
      yield* (yield* HostedServices).register({
        kind: product.kind,
        steps: product.steps,
        prepareOrder: (planId, options) =>
          run(Effect.flatMap(product.forSale(planId), (plan) =>
            Option.isNone(plan) ? Effect.succeedNone : Effect.map(
              product.checkOptions(plan.value, options),
              (checked) => Option.some({ plan: product.termsOf(plan.value), options: checked })
            ))),
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
            if (Option.isNone(standing) || !standing.value.suspended) return
            // Back at once when the upstream answers; when it does not, a durable workflow keeps trying until it does.
            yield* product.bringBack(subscriptionId).pipe(
              Effect.catchCause((cause) =>
                Effect.andThen(
                  Effect.logWarning(`bringing back the ${product.kind} of subscription ${subscriptionId} failed; retrying durably`, cause),
                  product.restore.execute({ subscriptionId, periodEnd: periodEnd.toISOString() }, { discard: true })
                ))
            )
          }))
      })
    })),
    product.restore.toLayer(Effect.fn(function*({ subscriptionId }) {
      yield* Activity.make({
        name: "bring-back",
        execute: product.bringBack(subscriptionId).pipe(
          Effect.retry({ schedule: cappedBackoff("5 minutes"), while: product.transient }),
          Effect.orDie
        )
      })
    }))
  )
