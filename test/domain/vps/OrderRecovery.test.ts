// Specification of carrying on orders an interrupted process left behind (TestClock): the recovery any instance runs
// asks the gateway about an order stuck before its payment was recorded (charged → recorded and delivered; not
// charged → failed, nothing to refund), starts the provisioning of one recorded but never started, and a charge that
// lands after its order was failed is refunded: a failed order never keeps a charge.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import { SandboxPayments } from "../../../adapters/payments/SandboxPaymentGateway.ts"
import { addMonth, OrderId, PlanId, SubscriptionId } from "../../../domain/billing/Billing.ts"
import { orderChargeKey, placeOrder, recoverOrders } from "../../../domain/billing/Ordering.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { Orders } from "../../../ports/Orders.ts"
import { PaymentGateway } from "../../../ports/PaymentGateway.ts"
import { Subscriptions } from "../../../ports/Subscriptions.ts"
import { UnitOfWork } from "../../../ports/UnitOfWork.ts"
import { atOnce, eventually } from "../../support/eventually.ts"
import { vpsEnv, vpsOptions } from "../../support/vpsEnv.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"
const after = Duration.seconds(60)

const orderOf = (id: string) => Effect.map(Effect.flatMap(Orders, (o) => o.get(id)), Option.getOrThrow)
const watched = Effect.map(Effect.flatMap(Orders, (o) => o.pendingCleanups), (all) => all.map((c) => c.orderId))
const kinds = (id: string) => Effect.map(Effect.flatMap(Ledger, (l) => l.forOrder(id)), (all) => all.map((e) => e.kind).sort())

/** Step (a) alone: the order row, as a process that died right after writing it left it. */
const pendingOrder = (id: string) =>
  Effect.flatMap(Orders, (orders) =>
    Effect.flatMap(Clock.currentTimeMillis, (ms) =>
      orders.create({ id: OrderId.make(id), userId: alice, planId: "vps-s", kind: "vps", options: vpsOptions(id.slice(0, 8)), totalSteps: 6, now: new Date(ms) })))

/** Step (b) for it: the charge taken at the gateway under the order's key. */
const charged = (id: string) =>
  Effect.flatMap(PaymentGateway, (g) =>
    g.charge({ customer: alice, amountCents: 500, description: "VPS S, first month", idempotencyKey: orderChargeKey(id) }))

describe("recovering interrupted orders", () => {
  it.effect("an order charged but not recorded is recorded and delivered, with its one charge", () =>
    Effect.gen(function*() {
      const id = "0a000000-0000-4000-8000-000000000001"
      yield* pendingOrder(id)
      const { reference } = yield* charged(id)
      // Too fresh: a live request may still be recording it.
      yield* TestClock.adjust("30 seconds")
      yield* recoverOrders(after)
      assert.strictEqual((yield* orderOf(id)).status, "pending")
      yield* TestClock.adjust("31 seconds")
      yield* recoverOrders(after)
      const done = yield* eventually(orderOf(id), (o) => o.status === "completed", 60)
      const ledger = yield* (yield* Ledger).forOrder(id)
      assert.deepStrictEqual(ledger.map((e) => [e.kind, e.reference]), [["charge", reference]])
      const subscription = Option.getOrThrow(yield* (yield* Subscriptions).get(done.subscriptionId!))
      assert.deepInclude(subscription, { status: "active", serviceId: done.serviceId })
      assert.lengthOf(yield* (yield* SandboxPayments).charges, 1)
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("an order interrupted before its charge is failed with nothing charged, nothing refunded and no subscription", () =>
    Effect.gen(function*() {
      const id = "0a000000-0000-4000-8000-000000000002"
      yield* pendingOrder(id)
      yield* TestClock.adjust("61 seconds")
      yield* recoverOrders(after)
      const failed = yield* orderOf(id)
      assert.strictEqual(failed.status, "failed")
      assert.include(failed.failureReason ?? "", "interrupted before its payment was confirmed")
      assert.isNull(failed.subscriptionId)
      assert.deepStrictEqual(yield* kinds(id), [])
      assert.deepStrictEqual(yield* (yield* SandboxPayments).charges, [])
      assert.deepStrictEqual(yield* (yield* Subscriptions).forUser(alice), [])
      // Watched for an hour for a charge the provider would take late; none comes, and the watch ends.
      assert.isTrue((yield* watched).includes(id))
      yield* TestClock.adjust("30 minutes")
      yield* recoverOrders(after)
      assert.isTrue((yield* watched).includes(id))
      yield* TestClock.adjust("31 minutes")
      yield* recoverOrders(after)
      assert.isFalse((yield* watched).includes(id))
      assert.deepStrictEqual(yield* kinds(id), [])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a charge the provider takes after its order was failed unpaid, its request gone, is refunded by the recovery", () =>
    Effect.gen(function*() {
      const id = "0a000000-0000-4000-8000-000000000004"
      yield* pendingOrder(id)
      yield* TestClock.adjust("61 seconds")
      yield* recoverOrders(after)
      assert.strictEqual((yield* orderOf(id)).status, "failed")
      // The provider takes the charge late, and the process that asked for it is gone: nobody records it.
      const { reference } = yield* charged(id)
      yield* TestClock.adjust("61 seconds")
      yield* recoverOrders(after)
      const ledger = yield* (yield* Ledger).forOrder(id)
      assert.deepStrictEqual(ledger.map((e) => e.kind).sort(), ["charge", "refund"])
      assert.strictEqual(ledger.find((e) => e.kind === "charge")?.reference, reference)
      assert.isTrue((yield* (yield* SandboxPayments).charges).find((c) => c.reference === reference)?.refunded)
      assert.isFalse((yield* watched).includes(id))
      assert.strictEqual((yield* orderOf(id)).status, "failed")
      assert.deepStrictEqual(yield* (yield* Subscriptions).forUser(alice), [])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("an order recorded but whose provisioning never started is started", () =>
    Effect.gen(function*() {
      const id = "0a000000-0000-4000-8000-000000000003"
      const order = yield* pendingOrder(id)
      const { reference } = yield* charged(id)
      // Step (c), then the process dies before (d).
      yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
        assert.isTrue(yield* (yield* Orders).startProvisioning(id, order.createdAt))
        yield* (yield* Subscriptions).create({
          id: SubscriptionId.make("0b000000-0000-4000-8000-000000000003"), userId: alice, planId: PlanId.make("vps-s"), kind: "vps", orderId: OrderId.make(id),
          currentPeriodEnd: addMonth(order.createdAt), now: order.createdAt
        })
        yield* (yield* Ledger).record({
          id: "0c000000-0000-4000-8000-000000000003", userId: alice, subscriptionId: "0b000000-0000-4000-8000-000000000003",
          orderId: id, kind: "charge", amountCents: 500, reference, createdAt: order.createdAt
        })
        yield* (yield* Orders).progress(id, {
          status: "provisioning", step: 0, stepName: "Queued", subscriptionId: SubscriptionId.make("0b000000-0000-4000-8000-000000000003"), now: order.createdAt
        })
      }))
      yield* TestClock.adjust("61 seconds")
      assert.deepInclude(yield* orderOf(id), { status: "provisioning", step: 0 })
      yield* recoverOrders(after)
      yield* eventually(orderOf(id), (o) => o.status === "completed", 60)
      assert.deepStrictEqual(yield* kinds(id), ["charge"])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a charge that lands after the recovery failed its order is refunded: no failed order keeps a charge", () =>
    Effect.gen(function*() {
      // A provider so slow that the recovery gives up on the order while its charge is still under way.
      const placing = yield* Effect.forkChild(placeOrder(alice, "vps-s", vpsOptions("slow-1")))
      const pending = yield* atOnce(Effect.flatMap(Orders, (o) => o.unfinished), (all) => all.length === 1)
      const id = pending[0]!.id
      yield* TestClock.adjust("61 seconds")
      yield* recoverOrders(after)
      assert.strictEqual((yield* orderOf(id)).status, "failed")
      yield* TestClock.adjust("3 minutes")
      const answered = yield* Fiber.join(placing)
      assert.strictEqual(answered.status, "failed")
      assert.deepStrictEqual(yield* kinds(id), ["charge", "refund"])
      const [charge] = yield* (yield* SandboxPayments).charges
      assert.isTrue(charge?.refunded)
      assert.include((yield* orderOf(id)).failureReason ?? "", "a payment that still goes through is refunded")
      assert.isFalse((yield* watched).includes(id))
      assert.deepStrictEqual(yield* (yield* Subscriptions).forUser(alice), [])
    }).pipe(Effect.provide(vpsEnv({ paymentLatency: "90 seconds" }))))

  it.effect("a declined payment fails the order at once and leaves no subscription", () =>
    Effect.gen(function*() {
      yield* (yield* SandboxPayments).declineNext(1)
      assert.strictEqual((yield* Effect.flip(placeOrder(alice, "vps-s", vpsOptions("declined"))))._tag, "PaymentDeclined")
      assert.deepStrictEqual(yield* (yield* Orders).unfinished, [])
      assert.deepStrictEqual(yield* (yield* Subscriptions).forUser(alice), [])
    }).pipe(Effect.provide(vpsEnv())))
})
