// Specification of an admin's retry of a failed order: the customer keeps their refund; the retry is a new order of
// the same plan and options (checked again by the product), awaiting the customer's own payment, the express-start
// request carried; the customer is told with the link; at most one retry; only a failed order (or a retry that expired
// unpaid); a plan off sale or without room refuses it; paid, the retry is provisioned as any order.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Layer, Option } from "effect"
import { UserId } from "../../../domain/account/User.ts"
import type { Operator } from "../../../domain/backoffice/customers.ts"
import { OrderAlreadyRetried, OrderNotRetryable, retryOrder } from "../../../domain/backoffice/orderRetry.ts"
import { OrderNotFound, PlanOffSale, SoldOut } from "../../../domain/billing/BillingErrors.ts"
import { moveOrder } from "../../../domain/billing/orderMoves.ts"
import { AuditLog } from "../../../ports/AuditLog.ts"
import { Catalog } from "../../../ports/Catalog.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { Orders } from "../../../ports/Orders.ts"
import { TaskFailed } from "../../../ports/Virtualization.ts"
import { capturedLogs } from "../../support/capturedLogs.ts"
import { atOnce } from "../../support/eventually.ts"
import { noticesOf } from "../../support/recordedNotices.ts"
import { SimulatedCluster } from "../../support/simulatedCluster.ts"
import { payOrder, placeAs, placePaidOrder } from "../../support/simulatedStripe.ts"
import { labCluster } from "../../support/virtualizationMother.ts"
import { vpsEnv, vpsOptions } from "../../support/vpsEnv.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"
const admin: Operator = { id: UserId.make("00000000-0000-4000-8000-0000000ad010"), role: "admin", address: "192.0.2.7" }

const orderOf = (id: string) => Effect.map(Effect.flatMap(Orders, (o) => o.get(id)), Option.getOrThrow)

/** Alice's VPS order whose configuration fails (refunded); the fault is gone afterwards. */
const failedOrder = (hostname: string) =>
  Effect.gen(function*() {
    yield* SimulatedCluster.failAlways("configure", new TaskFailed({ operation: "configure", exitStatus: "simulated failure", log: [] }))
    const placed = yield* placePaidOrder(alice, "vps-s", vpsOptions(hostname))
    const failed = yield* atOnce(orderOf(placed.id), (o) => o.status === "failed")
    yield* SimulatedCluster.clearFaults
    return failed
  })

const env = () => vpsEnv().pipe(Layer.provideMerge(capturedLogs()))

describe("an admin's retry of a failed order", () => {
  it.effect("is a new order of the same plan and options awaiting the customer's payment; they are told, and paid it is delivered", () =>
    Effect.gen(function*() {
      const failed = yield* failedOrder("retry-1")
      const retry = yield* retryOrder(admin, failed.id)
      assert.notStrictEqual(retry.id, failed.id)
      assert.deepInclude(retry, {
        userId: alice,
        planId: failed.planId,
        kind: "vps",
        options: failed.options,
        status: "awaiting_payment",
        retryOf: failed.id,
        retriedAs: null,
        expressStartRequestedAt: failed.expressStartRequestedAt
      })
      assert.isNotNull(retry.checkoutUrl)
      assert.strictEqual((yield* orderOf(failed.id)).retriedAs, retry.id)
      // Nothing charged for the retry yet; the failed order's refund stands.
      assert.deepStrictEqual((yield* (yield* Ledger).forOrder(retry.id)).map((e) => e.kind), [])
      assert.deepStrictEqual((yield* (yield* Ledger).forOrder(failed.id)).map((e) => e.kind).sort(), ["charge", "refund"])
      const [told] = yield* noticesOf("OrderRetryOffered")
      assert.deepInclude(told, { userId: alice, orderId: retry.id, failedOrderId: failed.id, planName: "VPS S" })
      assert.strictEqual(told?.payBy.getTime(), retry.expiresAt?.getTime())
      // The first month's price including VAT, as the order's page asks for it (a French consumer: 20 %).
      const [charge] = (yield* (yield* Ledger).forOrder(failed.id)).filter((e) => e.kind === "charge")
      assert.strictEqual(told?.amountCents, charge?.amountCents)
      const audited = yield* (yield* AuditLog).list({ subjectUserId: UserId.make(alice), actions: ["staff.order_retried"], limit: 10 })
      assert.deepStrictEqual(audited.map((e) => [e.actorId, e.actorRole, e.address, e.target, e.before]), [
        [admin.id, "admin", "192.0.2.7", { type: "order", id: failed.id }, { status: "failed", retriedAs: null }]
      ])
      assert.deepInclude(audited[0]?.after as object, { retriedAs: retry.id, status: "awaiting_payment" })

      yield* payOrder(retry.id)
      const done = yield* atOnce(orderOf(retry.id), (o) => o.status === "completed" || o.status === "failed")
      assert.strictEqual(done.status, "completed", done.failureReason ?? "")
    }).pipe(Effect.provide(env())))

  it.effect("is made once: a second retry names the first; a retry, a completed order and a missing one are refused", () =>
    Effect.gen(function*() {
      const failed = yield* failedOrder("retry-2")
      const retry = yield* retryOrder(admin, failed.id)
      const again = yield* Effect.flip(retryOrder(admin, failed.id))
      assert.deepStrictEqual(again, new OrderAlreadyRetried({ retriedAs: retry.id }))
      assert.include(again.message, retry.id)
      const notFailed = yield* Effect.flip(retryOrder(admin, retry.id))
      assert.deepStrictEqual(notFailed, new OrderNotRetryable({ status: "awaiting_payment" }))
      assert.strictEqual(notFailed.message, "This order is awaiting payment: only a failed order, or a retry that expired unpaid, can be retried.")
      assert.deepStrictEqual(yield* Effect.flip(retryOrder(admin, "00000000-0000-4000-8000-000000000000")), new OrderNotFound())
      // One e-mail, for the one retry.
      assert.lengthOf(yield* noticesOf("OrderRetryOffered"), 1)
    }).pipe(Effect.provide(env())))

  it.effect("a retry the customer let expire unpaid is retried in turn, the e-mail naming the order that failed; a customer's own expired order is not", () =>
      Effect.gen(function*() {
        const failed = yield* failedOrder("retry-5")
        const first = yield* retryOrder(admin, failed.id)
        assert.isTrue(yield* moveOrder(first.id, { event: "expired" }, new Date(yield* Clock.currentTimeMillis)))
        const second = yield* retryOrder(admin, first.id)
        assert.deepInclude(second, { status: "awaiting_payment", retryOf: first.id, planId: failed.planId, options: failed.options })
        assert.deepInclude(yield* orderOf(first.id), { status: "expired", retryOf: failed.id, retriedAs: second.id })
        const told = yield* noticesOf("OrderRetryOffered")
        assert.deepStrictEqual(told.map((n) => [n.orderId, n.failedOrderId]), [[first.id, failed.id], [second.id, failed.id]])
        assert.deepStrictEqual(yield* Effect.flip(retryOrder(admin, first.id)), new OrderAlreadyRetried({ retriedAs: second.id }))

        const own = yield* placeAs(alice, "vps-s", vpsOptions("retry-5b"))
        assert.isTrue(yield* moveOrder(own.id, { event: "expired" }, new Date(yield* Clock.currentTimeMillis)))
        assert.deepStrictEqual(yield* Effect.flip(retryOrder(admin, own.id)), new OrderNotRetryable({ status: "expired" }))
      }).pipe(Effect.provide(env())))

  it.effect("five retries at once make one order; the others are told which", () =>
    Effect.gen(function*() {
      const failed = yield* failedOrder("retry-3")
      const outcomes = yield* Effect.all(Array.from({ length: 5 }, () => Effect.result(retryOrder(admin, failed.id))), { concurrency: "unbounded" })
      const made = outcomes.flatMap((o) => o._tag === "Success" ? [o.success] : [])
      assert.lengthOf(made, 1)
      for (const o of outcomes) {
        if (o._tag === "Failure") assert.deepStrictEqual(o.failure, new OrderAlreadyRetried({ retriedAs: made[0]!.id }))
      }
      assert.lengthOf(yield* noticesOf("OrderRetryOffered"), 1)
    }).pipe(Effect.provide(env())))

  it.effect("is refused for a plan taken off sale, and for a plan with no room now", () =>
    Effect.gen(function*() {
      const failed = yield* failedOrder("retry-4")
      const catalog = yield* Catalog
      yield* catalog.setOnSale("vps-s", false)
      assert.deepStrictEqual(yield* Effect.flip(retryOrder(admin, failed.id)), new PlanOffSale({ planId: "vps-s" }))
      yield* catalog.setOnSale("vps-s", true)
      // Someone else's machines fill both nodes.
      for (const [vmid, node] of [[801, "pve1"], [802, "pve2"]] as const) {
        yield* SimulatedCluster.place({ cluster: labCluster, vmid, node, name: `big-${vmid}`, status: "running", cpus: 4096, memoryBytes: 2 ** 50, diskBytes: 2 ** 50 })
      }
      assert.deepStrictEqual(yield* Effect.flip(retryOrder(admin, failed.id)), new SoldOut({ planId: "vps-s" }))
      assert.isNull((yield* orderOf(failed.id)).retriedAs)
      assert.lengthOf(yield* noticesOf("OrderRetryOffered"), 0)
    }).pipe(Effect.provide(env())))
})
