// Specification of the consumer's rights in billing (issue 13 §3, billing-fr.md §4): the express request to start at
// order, and the withdrawal within 14 days (acknowledged, the service ended through its product, refunded pro rata
// through the gateway, once however many declarations arrive at once). Run on billing's own seam with a product it does
// not know (the DNS zone of test/support), the simulated Stripe and the test clock.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import { OrderId, SubscriptionId } from "../../../domain/billing/Billing.ts"
import { viewOrder } from "../../../domain/billing/Ordering.ts"
import {
  finishWithdrawals,
  orderAsCustomer,
  withdrawableUntil,
  type Withdrawer,
  withdrawalPeriodEnd,
  withdrawalRefundCents,
  withdrawFromContract
} from "../../../domain/billing/withdrawal.ts"
import { UserId } from "../../../domain/account/User.ts"
import { AuditLog } from "../../../ports/AuditLog.ts"
import { Invoices } from "../../../ports/Invoices.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { Orders } from "../../../ports/Orders.ts"
import { Subscriptions } from "../../../ports/Subscriptions.ts"
import { alice, dnsEnv as env, subscriptionOf, until } from "../../support/dnsEnv.ts"
import { dnsPlan, NameServer } from "../../support/dnsZoneProduct.ts"
import { billedCustomer } from "../../support/invoicing.ts"
import { noticesOf } from "../../support/recordedNotices.ts"
import { payOrder, placePaidOrder, SimulatedStripe } from "../../support/simulatedStripe.ts"

const consumer: Withdrawer = { id: alice, accountType: "personal", firstName: "Alice", lastName: "Martin" }
const professional: Withdrawer = { ...consumer, accountType: "professional" }

const DAY = 86_400_000
/** What a month of the DNS zone is charged: its price excluding VAT (100 cents) and 20 % French VAT. */
const PAID = 120
// Near the test clock's start: setting it far ahead would run every hourly sweep of the simulated Stripe on the way.
/** A Monday in November (a 30-day month): the first period runs to 2 December, 30 days. */
const november = Date.parse("1970-11-02T09:00:00Z")
/** A Wednesday in December: the first period runs to 2 January, 31 days. */
const december = Date.parse("1970-12-02T09:00:00Z")

const zone = (name: string) => Effect.map(Effect.flatMap(NameServer, (server) => Ref.get(server.zones)), (zones) => zones.get(name))
const refunds = (subscriptionId: string) =>
  Effect.map(Effect.flatMap(Ledger, (l) => l.forSubscription(subscriptionId)), (all) => all.filter((e) => e.kind === "refund"))

/** A paid, provisioned DNS zone bought at `at`: its subscription. */
const subscribedAt = (at: number, name = "example.fr") =>
  Effect.gen(function*() {
    yield* TestClock.setTime(at)
    const order = yield* placePaidOrder(alice, dnsPlan.id, { zone: name })
    yield* until(Effect.map(Effect.orDie(viewOrder(alice, order.id)), (v) => v.order.status === "completed"))
    const { subscriptionId } = (yield* Effect.orDie(viewOrder(alice, order.id))).order
    if (subscriptionId === null) return yield* Effect.die(new Error(`order ${order.id} has no subscription`))
    return yield* subscriptionOf(subscriptionId)
  })

describe("the withdrawal period", () => {
  it("runs 14 whole days after the day of conclusion, in Paris, to midnight", () => {
    // Concluded Monday 2 November: the 14th day is Monday 16 November; it ends at midnight in Paris (UTC+1).
    assert.strictEqual(withdrawalPeriodEnd(new Date(november)).toISOString(), "1970-11-16T23:00:00.000Z")
    assert.strictEqual(withdrawalPeriodEnd(new Date("2026-11-02T09:00:00Z")).toISOString(), "2026-11-16T23:00:00.000Z")
    // Concluded at 23:30 UTC on 1 November, already 2 November in Paris: the same period.
    assert.strictEqual(withdrawalPeriodEnd(new Date("2026-11-01T23:30:00Z")).toISOString(), "2026-11-16T23:00:00.000Z")
  })

  it("ending on a Saturday, Sunday or public holiday, runs on to the next working day's end", () => {
    // Saturday 7 November: the 14th day is Saturday 21 November → Monday 23 November.
    assert.strictEqual(withdrawalPeriodEnd(new Date("2026-11-07T10:00:00Z")).toISOString(), "2026-11-23T23:00:00.000Z")
    // Wednesday 28 October: the 14th day is Wednesday 11 November (Armistice) → Thursday 12 November.
    assert.strictEqual(withdrawalPeriodEnd(new Date("2026-10-28T10:00:00Z")).toISOString(), "2026-11-12T23:00:00.000Z")
    // Summer time: concluded Thursday 2 July, the 14th day Thursday 16 July ends at 22:00 UTC.
    assert.strictEqual(withdrawalPeriodEnd(new Date("2026-07-02T10:00:00Z")).toISOString(), "2026-07-16T22:00:00.000Z")
  })
})

describe("the withdrawal's refund, pro rata temporis", () => {
  it("gives back the price minus the part provided, to the second, rounded in the customer's favour", () => {
    const start = new Date(november)
    const thirty = new Date(november + 30 * DAY)
    const thirtyOne = new Date(december + 31 * DAY)
    assert.strictEqual(withdrawalRefundCents(3000, start, thirty, new Date(november + 3 * DAY)), 2700)
    assert.strictEqual(withdrawalRefundCents(999, start, thirty, new Date(november + 3 * DAY)), 900)
    // 3/31 of 1000 cents is 96.77: 96 provided, 904 given back.
    assert.strictEqual(withdrawalRefundCents(1000, new Date(december), thirtyOne, new Date(december + 3 * DAY)), 904)
    // One second used of a 30-day month: nothing of 1000 cents is due yet.
    assert.strictEqual(withdrawalRefundCents(1000, start, thirty, new Date(november + 1000)), 1000)
    assert.strictEqual(withdrawalRefundCents(1000, start, thirty, start), 1000)
  })
})

describe("a consumer's order", () => {
  it.effect("is refused without the express request to start now, before anything exists or is charged", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(orderAsCustomer(yield* billedCustomer(alice), dnsPlan.id, { zone: "a.fr" }, false))
      assert.strictEqual(refused._tag, "ExpressStartConsentRequired")
      assert.deepStrictEqual(yield* (yield* Subscriptions).forUser(alice), [])
      assert.isUndefined(yield* zone("a.fr"))
    }).pipe(Effect.provide(env)))

  it.effect("keeps the request and its time, and confirms it by e-mail once paid", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(november)
      const order = yield* orderAsCustomer(yield* billedCustomer(alice), dnsPlan.id, { zone: "a.fr" }, true)
      assert.deepStrictEqual(order.expressStartRequestedAt, new Date(november))
      assert.deepStrictEqual(yield* noticesOf("ExpressStartConfirmed"), [])
      yield* TestClock.adjust("1 minute")
      yield* payOrder(order.id)
      const [confirmed, ...more] = yield* noticesOf("ExpressStartConfirmed")
      assert.deepStrictEqual(more, [])
      assert.deepInclude(confirmed, { userId: alice, orderId: order.id, planName: dnsPlan.name, requestedAt: new Date(november) })
      assert.deepStrictEqual(confirmed?.paidAt, new Date(november + 60_000))
    }).pipe(Effect.provide(env)))

  it.effect("of a professional account needs no such request (none is stored) and gets no such e-mail", () =>
    Effect.gen(function*() {
      const order = yield* orderAsCustomer({ ...(yield* billedCustomer(alice)), accountType: "professional" }, dnsPlan.id, { zone: "b.fr" }, false)
      assert.strictEqual(order.expressStartRequestedAt, null)
      yield* payOrder(order.id)
      assert.deepStrictEqual(yield* noticesOf("ExpressStartConfirmed"), [])
    }).pipe(Effect.provide(env)))
})

describe("withdrawing from a contract", () => {
  it.effect("on day 3 of a 30-day month: acknowledged, the service ended, 27/30 of the price refunded", () =>
    Effect.gen(function*() {
      const subscription = yield* subscribedAt(november)
      const [charge] = (yield* (yield* Ledger).forSubscription(subscription.id)).filter((e) => e.kind === "charge")
      assert.strictEqual(charge?.amountCents, PAID)
      const paid = charge?.amountCents ?? 0
      yield* TestClock.adjust("3 days")
      const offered = withdrawableUntil(subscription, "personal", november + 3 * DAY)
      assert.deepStrictEqual(offered, new Date("1970-11-16T23:00:00.000Z"))
      const done = yield* withdrawFromContract(consumer, subscription.id)
      assert.strictEqual(done.refundCents, paid - Math.floor(paid * 3 / 30))
      assert.strictEqual(done.refundCents, 108)
      assert.strictEqual(done.refundCents, PAID * 27 / 30)
      assert.strictEqual(done.subscription.status, "terminated")
      assert.deepStrictEqual(done.subscription.withdrawnAt, new Date(november + 3 * DAY))
      assert.isNull(withdrawableUntil(done.subscription, "personal", november + 3 * DAY))

      const [ack, ...moreAcks] = yield* noticesOf("WithdrawalAcknowledged")
      assert.deepStrictEqual(moreAcks, [])
      assert.deepStrictEqual(ack, {
        _tag: "WithdrawalAcknowledged",
        userId: alice,
        service: { subscriptionId: subscription.id, kind: "dns-zone", planName: dnsPlan.name },
        customerName: "Alice Martin",
        concludedAt: new Date(november),
        declaredAt: new Date(november + 3 * DAY),
        paidCents: paid,
        refundCents: 108
      })
      assert.deepStrictEqual((yield* refunds(subscription.id)).map((e) => e.amountCents), [108])
      assert.deepStrictEqual((yield* noticesOf("RefundIssued")).map((n) => [n.amountCents, n.reason]), [[108, "withdrawal"]])
      // Its credit note corrects the month's invoice by exactly the refund.
      const [refund] = yield* refunds(subscription.id)
      const creditNote = Option.getOrThrow(yield* (yield* Invoices).forLedgerEntry("refund", refund?.reference ?? ""))
      const invoice = Option.getOrThrow(yield* (yield* Invoices).forLedgerEntry("charge", charge?.reference ?? ""))
      assert.strictEqual(creditNote.kind, "credit_note")
      assert.strictEqual(creditNote.correctsInvoiceId, invoice.id)
      assert.strictEqual(creditNote.totalIncludingVatCents, 108)
      assert.strictEqual(creditNote.totalExcludingVatCents + creditNote.vatCents, 108)
      // The service ends through its product, as after a grace window; the customer is told it is gone.
      // The declaration's evidence in the customer's trail.
      const trail = yield* (yield* AuditLog).list({ subjectUserId: UserId.make(alice), actions: ["subscription.withdrawn"], limit: 10 })
      assert.deepStrictEqual(trail.map((e) => [e.actorRole, e.target, e.details]), [[
        "customer",
        { type: "subscription", id: subscription.id },
        { declaredAt: new Date(november + 3 * DAY).toISOString(), concludedAt: new Date(november).toISOString(), paidCents: PAID, refundCents: 108 }
      ]])
      yield* until(Effect.map(zone("example.fr"), (z) => z === undefined))
      yield* until(Effect.map(noticesOf("ServiceEnded"), (all) => all.length === 1))
      assert.deepStrictEqual(yield* (yield* Subscriptions).unsettledWithdrawals, [])
    }).pipe(Effect.provide(env)))

  it.effect("on day 3 of a 31-day month: the price minus 3/31, the part provided rounded down", () =>
    Effect.gen(function*() {
      const subscription = yield* subscribedAt(december)
      yield* TestClock.adjust("3 days")
      const done = yield* withdrawFromContract(consumer, subscription.id)
      // 3/31 of 120 cents is 11.61: 11 provided, 109 given back.
      assert.strictEqual(done.refundCents, 109)
      assert.deepStrictEqual((yield* refunds(subscription.id)).map((e) => e.amountCents), [109])
    }).pipe(Effect.provide(env)))

  it.effect("is open on day 13 and closed on day 15 (409 WITHDRAWAL_PERIOD_OVER), the service left as it is", () =>
    Effect.gen(function*() {
      const late = yield* subscribedAt(november, "late.fr")
      const inTime = yield* subscribedAt(november, "in-time.fr")
      yield* TestClock.adjust("13 days")
      const done = yield* withdrawFromContract(consumer, inTime.id)
      assert.strictEqual(done.refundCents, PAID - Math.floor(PAID * 13 / 30))
      yield* TestClock.adjust("2 days")
      const refused = yield* Effect.flip(withdrawFromContract(consumer, late.id))
      assert.deepStrictEqual(refused._tag, "WithdrawalPeriodOver")
      assert.strictEqual((yield* subscriptionOf(late.id)).status, "active")
      assert.deepStrictEqual(yield* refunds(late.id), [])
      assert.isNull(withdrawableUntil(late, "personal", november + 15 * DAY))
      assert.isTrue((yield* zone("late.fr")) !== undefined)
    }).pipe(Effect.provide(env)))

  it.effect("is not a professional's right, nor anyone's but the owner's", () =>
    Effect.gen(function*() {
      const subscription = yield* subscribedAt(november)
      yield* TestClock.adjust("1 day")
      assert.strictEqual((yield* Effect.flip(withdrawFromContract(professional, subscription.id)))._tag, "WithdrawalNotAvailable")
      assert.isNull(withdrawableUntil(subscription, "professional", november + DAY))
      const stranger = { ...consumer, id: "00000000-0000-4000-8000-0000000000b0" }
      assert.strictEqual((yield* Effect.flip(withdrawFromContract(stranger, subscription.id)))._tag, "SubscriptionNotFound")
      assert.strictEqual((yield* subscriptionOf(subscription.id)).status, "active")
      assert.deepStrictEqual(yield* refunds(subscription.id), [])
    }).pipe(Effect.provide(env)))

  it.effect("declared ten times at once: one withdrawal, one refund, one acknowledgement", () =>
    Effect.gen(function*() {
      const subscription = yield* subscribedAt(november)
      yield* TestClock.adjust("3 days")
      const outcomes = yield* Effect.all(
        Array.from({ length: 10 }, () => Effect.result(withdrawFromContract(consumer, subscription.id))),
        { concurrency: "unbounded" }
      )
      const succeeded = outcomes.filter((o) => o._tag === "Success")
      assert.lengthOf(succeeded, 1)
      assert.deepStrictEqual(
        [...new Set(outcomes.flatMap((o) => o._tag === "Failure" ? [o.failure._tag] : []))],
        ["AlreadyWithdrawn"]
      )
      assert.deepStrictEqual((yield* refunds(subscription.id)).map((e) => e.amountCents), [108])
      assert.lengthOf(yield* noticesOf("WithdrawalAcknowledged"), 1)
      assert.lengthOf(yield* noticesOf("RefundIssued"), 1)
      assert.strictEqual((yield* Effect.flip(withdrawFromContract(consumer, subscription.id)))._tag, "AlreadyWithdrawn")
    }).pipe(Effect.provide(env)))

  it.effect("waits for the service to be built: not offered, and 409 SERVICE_NOT_READY, while it provisions", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(november)
      // A paid subscription whose provisioning has not attached its service yet.
      const order = yield* (yield* Orders).create({
        id: OrderId.make("00000000-0000-4000-8000-0000000000d1"),
        userId: alice,
        planId: dnsPlan.id,
        kind: "dns-zone",
        options: {},
        totalSteps: 2,
        expiresAt: new Date(november + DAY),
        now: new Date(november)
      })
      const building = yield* (yield* Subscriptions).create({
        id: SubscriptionId.make("00000000-0000-4000-8000-0000000000d2"),
        userId: alice,
        planId: dnsPlan.id,
        kind: "dns-zone",
        orderId: order.id,
        currentPeriodEnd: new Date(november + 30 * DAY),
        now: new Date(november)
      })
      assert.isNull(withdrawableUntil(building, "personal", november))
      assert.strictEqual((yield* Effect.flip(withdrawFromContract(consumer, building.id)))._tag, "ServiceNotReady")
      yield* (yield* Subscriptions).attachService(building.id, "zone-1")
      const built = yield* subscriptionOf(building.id)
      assert.deepStrictEqual(withdrawableUntil(built, "personal", november), new Date("1970-11-16T23:00:00.000Z"))
    }).pipe(Effect.provide(env)))

  it.effect("with the gateway down: withdrawn and acknowledged now, refunded once by the next sweep", () =>
    Effect.gen(function*() {
      const subscription = yield* subscribedAt(november)
      yield* TestClock.adjust("3 days")
      yield* (yield* SimulatedStripe).control.failNextApiCalls({ times: 1, status: 500, path: /refunds/ })
      const done = yield* withdrawFromContract(consumer, subscription.id)
      assert.strictEqual(done.refundCents, 108)
      assert.strictEqual(done.subscription.status, "terminated")
      assert.lengthOf(yield* noticesOf("WithdrawalAcknowledged"), 1)
      assert.deepStrictEqual(yield* refunds(subscription.id), [])
      assert.deepStrictEqual((yield* (yield* Subscriptions).unsettledWithdrawals).map((s) => s.id), [subscription.id])
      yield* until(Effect.map(zone("example.fr"), (z) => z === undefined))
      yield* Effect.all([finishWithdrawals, finishWithdrawals], { concurrency: "unbounded" })
      yield* finishWithdrawals
      assert.deepStrictEqual((yield* refunds(subscription.id)).map((e) => e.amountCents), [108])
      // Two sweeps at once may both tell it: the same refund (one gateway key), so one e-mail (the notice's key).
      assert.lengthOf(new Set((yield* noticesOf("RefundIssued")).map((n) => n.refundId)), 1)
      assert.deepStrictEqual(yield* (yield* Subscriptions).unsettledWithdrawals, [])
    }).pipe(Effect.provide(env)))

  it.effect("after an operator gave part of the charge back: only the rest of what is due is refunded", () =>
    Effect.gen(function*() {
      const subscription = yield* subscribedAt(november)
      const [charge] = (yield* (yield* Ledger).forSubscription(subscription.id)).filter((e) => e.kind === "charge")
      yield* TestClock.adjust("1 day")
      // 20 cents given back by an operator (recorded as billing records a refund: `<charge>:<refund>`).
      yield* (yield* Ledger).record({
        id: "00000000-0000-4000-8000-0000000000e1",
        userId: alice,
        subscriptionId: subscription.id,
        orderId: charge?.orderId ?? null,
        kind: "refund",
        amountCents: 20,
        reference: `${charge?.reference ?? ""}:re_goodwill`,
        createdAt: new Date(november + DAY)
      })
      yield* TestClock.adjust("2 days")
      const done = yield* withdrawFromContract(consumer, subscription.id)
      // Paid 120, 20 already back, 12 owed for 3 days of 30: 88 more.
      assert.strictEqual(done.refundCents, PAID - 20 - Math.floor(PAID * 3 / 30))
      assert.deepStrictEqual((yield* refunds(subscription.id)).map((e) => e.amountCents).sort((a, b) => a - b), [20, 88])
      assert.deepStrictEqual(yield* (yield* Subscriptions).unsettledWithdrawals, [])
    }).pipe(Effect.provide(env)))
})
