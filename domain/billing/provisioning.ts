// What billing gives every product's provisioning workflow: its shape (keyed by order id, failing with a StepFailed the
// customer can read), progress reported on the order, upstream trouble retried with backoff, durable polling, and
// what happens on failure: the customer first (refunded and told at once, a durable activity), then, as the
// workflow's compensation, the undo of what was built in a workflow of its own, tried until it succeeds however long
// the upstream stays down. The order shows as a pending cleanup until the undo is done.
import { Cause, Clock, Context, Duration, Effect, Option, Schedule, Schema } from "effect"
import { Activity, DurableClock, Workflow } from "effect/workflow"
import { Orders } from "../../ports/Orders.ts"
import { alert } from "../ops/alert.ts"
import { describeCause, keepTrying, worthAnAlert } from "../ops/keepTrying.ts"
import type { Order } from "./Billing.ts"
import { moveOrder } from "./orderMoves.ts"
import { refundOrder } from "./refund.ts"
import { dieOnDatabaseOutage } from "../ops/dieOnDatabaseOutage.ts"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import { HostedServices } from "./HostedService.ts"
import { noticeService, tell } from "./serviceNotices.ts"
import { countStep } from "../ops/metrics.ts"

/** A step that could not be done; `reason` is for the customer (no upstream detail), `detail` for the log. */
export class StepFailed extends Schema.TaggedError<StepFailed>()("StepFailed", {
  step: Schema.Int,
  reason: Schema.String,
  detail: Schema.String,
  /** Upstream trouble that may pass (down, throttled): the step is tried again before it gives up. */
  transient: Schema.optionalKey(Schema.Boolean)
}) {}

/** The provisioning workflow of one product: one execution per order. */
export const provisioningWorkflow = <const Name extends string>(name: Name) =>
  Workflow.make(name, {
    payload: { orderId: Schema.String },
    success: Schema.String,
    error: StepFailed,
    idempotencyKey: ({ orderId }) => orderId
  })

export type ProvisioningWorkflow = ReturnType<typeof provisioningWorkflow<string>>

/**
 * Maps an upstream error to the failure of `step`, with `reason` for the customer; `transient` says which of the
 * product's upstream errors are worth another try.
 */
export const stepFailure = (transient: (error: { readonly _tag: string }) => boolean) =>
  (step: number, reason: string) =>
  (e: { readonly _tag: string; readonly message: string }) =>
    new StepFailed({ step, reason, detail: `${e._tag}: ${e.message}`, transient: transient(e) })

/** The first pause before a step tries transient upstream trouble again, doubled at each retry (1 s by default). */
export const StepRetryBaseDelay = Context.Reference<Duration.Duration>("zh/domain/billing/StepRetryBaseDelay", {
  defaultValue: () => Duration.seconds(1)
})

/**
 * One durable step of a provisioning: memoised once done. Transient upstream trouble is tried again within the step
 * after 1 s, 2 s and 4 s (with the default StepRetryBaseDelay) before it gives up.
 */
export const provisioningStep = <Success extends Schema.Constraint, R>(options: {
  readonly name: string
  readonly success: Success
  readonly execute: Effect.Effect<Success["Type"], StepFailed, R>
}) =>
  Activity.make({
    name: options.name,
    success: options.success,
    error: StepFailed,
    execute: countStep(options.name, Effect.flatMap(StepRetryBaseDelay, (base) =>
      options.execute.pipe(
        Effect.retry({ schedule: Schedule.exponential(base), times: 3, while: (e) => e.transient === true })
      )))
  })

/**
 * Waits for something that takes its time upstream (an install, a clone task): `check(n)`, a durable step, answers
 * null while it is not done; the workflow then pauses durably (DurableClock: a restart keeps its place, no activity
 * sleeps in a loop) and checks again, the pauses doubling from `pauses.initial` up to `pauses.max`. `check` decides
 * when to give up, with a StepFailed.
 */
export const pollDurably = <Success extends Schema.Top, R>(options: {
  readonly name: string
  readonly success: Success
  readonly check: (attempt: number) => Effect.Effect<Success["Type"] | null, StepFailed, R>
  readonly pauses: { readonly initial: Duration.Duration; readonly max: Duration.Duration }
}) =>
  Effect.gen(function*() {
    let pause = options.pauses.initial
    for (let attempt = 1;; attempt++) {
      const done = yield* provisioningStep<Schema.NullOr<Success>, R>({
        name: `${options.name}-${attempt}`,
        success: Schema.NullOr(options.success),
        execute: options.check(attempt)
      })
      if (done !== null) return done
      yield* DurableClock.sleep({ name: `${options.name}-pause-${attempt}`, duration: pause })
      pause = Duration.min(Duration.times(pause, 2), options.pauses.max)
    }
  })

/** Tells the customer which step the order is at (1-based, named by `steps`). */
export const reportStep = (steps: ReadonlyArray<string>) => (orderId: string, step: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (ms) =>
    Effect.asVoid(moveOrder(orderId, { event: "progressed", step, stepName: steps[step - 1] ?? "" }, new Date(ms))))

/** The order being provisioned and its options as `schema` stored them; both must exist (a defect otherwise). */
export const orderWithOptions = <T, RD>(orderId: string, schema: Schema.Decoder<T, RD>) =>
  Effect.gen(function*() {
    const found = yield* (yield* Orders).get(orderId)
    const order: Order = yield* Option.match(found, {
      onNone: () => Effect.die(new Error(`order ${orderId} vanished`)),
      onSome: Effect.succeed
    })
    const options = yield* Schema.decodeUnknownEffect(schema)(order.options).pipe(Effect.orDie)
    return { order, options }
  })

/**
 * The order being provisioned, its options as `schema` stored them, and its plan as `planOf` finds it (retired ones
 * too): all must exist, the order was taken for that plan of this product (a defect otherwise). Read again by every
 * step: cheap, and always the stored truth.
 */
export const provisionedOrder = <T, RD, P, E, R>(
  orderId: string,
  schema: Schema.Decoder<T, RD>,
  product: { readonly name: string; readonly planOf: (planId: string) => Effect.Effect<Option.Option<P>, E, R> }
) =>
  Effect.gen(function*() {
    const { options, order } = yield* orderWithOptions(orderId, schema)
    const plan = yield* Effect.flatMap(product.planOf(order.planId), Option.match({
      onNone: () => Effect.die(new Error(`plan ${order.planId} is not a ${product.name} plan`)),
      onSome: Effect.succeed
    }))
    return { order, plan, options }
  })

/** Marks the undo pending (so a crash right after leaves a trace), then refunds and fails the order. */
export const failAndRefund = (orderId: string, reason: string) =>
  Effect.gen(function*() {
    yield* (yield* Orders).cleanupPending(orderId, new Date(yield* Clock.currentTimeMillis))
    yield* refundOrder(orderId, reason)
  })

/** Runs the order's `undo` until it succeeds; each failure is recorded on the order and logged, alerts first. */
export const cleanUp = <E, R>(orderId: string, undo: Effect.Effect<void, E, R>) =>
  Effect.gen(function*() {
    const orders = yield* Orders
    yield* keepTrying(undo, {
      onFailure: (attempt, cause) =>
        Effect.gen(function*() {
          const detail = describeCause(cause)
          yield* dieOnDatabaseOutage(orders.cleanupFailed(orderId, detail))
          const message = `cleanup of failed order ${orderId} failed (attempt ${attempt}), retrying with backoff: ${detail}`
          yield* worthAnAlert(attempt) ? alert(message, { orderId, attempt }) : Effect.logWarning(message)
        })
    })
    yield* orders.cleanupDone(orderId)
  })

/**
 * The body of a product's undo workflow (one per failed order, keyed by it): `undo` runs until it succeeds, however
 * long the upstream stays down, then the order's pending cleanup is cleared. Apart from the provisioning, it neither
 * holds that workflow's result back nor stops with it.
 */
export const undoing = <E, R>(orderId: string, undo: Effect.Effect<void, E, R>) =>
  Activity.make({ name: "clean-up", execute: dieOnDatabaseOutage(cleanUp(orderId, undo)) })

/** The customer of a completed order is told where the service answers (`reachAt` of the service the build made). */
const tellReady = <R>(orderId: string, serviceId: string, reachAt: (serviceId: string) => Effect.Effect<string, DatabaseUnavailable, R>) =>
  Effect.gen(function*() {
    const order = yield* (yield* Orders).get(orderId)
    if (Option.isNone(order) || order.value.subscriptionId === null) return
    const product = yield* (yield* HostedServices).of(order.value.kind)
    const service = yield* noticeService(
      { id: order.value.subscriptionId, kind: order.value.kind, planId: order.value.planId },
      product.plan
    )
    yield* tell({ _tag: "ServiceReady", userId: order.value.userId, service, address: yield* reachAt(serviceId) })
  })

/**
 * The body of a provisioning workflow: `build` runs its steps. When one fails, the customer is refunded and told at
 * once; then, as the workflow's compensation (Workflow.withCompensation, registered before any step so it covers a
 * failure at any of them), `startUndo` hands what was built (read when the failure happens) to the product's undo
 * workflow. When it succeeds, the customer is told where the service answers (`reachAt`: its public address).
 */
export const provisioned = <R, RU, RA>(
  orderId: string,
  build: Effect.Effect<string, StepFailed, R>,
  startUndo: () => Effect.Effect<unknown, never, RU>,
  reachAt: (serviceId: string) => Effect.Effect<string, DatabaseUnavailable, RA>
) =>
  Effect.gen(function*() {
    // Only a step that failed is undone: an interrupted run (a process stopping) is resumed, never undone.
    yield* Workflow.withCompensation(Effect.void, (_, cause) => Cause.hasFails(cause) ? Effect.asVoid(startUndo()) : Effect.void)
    const serviceId = yield* build.pipe(
      Effect.tapError((e) =>
        Effect.andThen(
          Effect.logWarning(`provisioning order ${orderId} failed at step ${e.step}: ${e.detail}`),
          // The customer first: refunded and told at once, however long the undo then takes.
          Activity.make({ name: "fail-and-refund", execute: dieOnDatabaseOutage(failAndRefund(orderId, e.reason)) })
        ))
    )
    yield* Activity.make({ name: "tell-ready", execute: dieOnDatabaseOutage(tellReady(orderId, serviceId, reachAt)) })
    return serviceId
  })
