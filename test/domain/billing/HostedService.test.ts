// Specification of the seam between billing and what it sells: a product billing has never heard of (a DNS zone, in
// test/support) is ordered, provisioned, suspended at its lapse, brought back by a renewal and ended after its grace
// window, all through billing's own code; and a failed provisioning is refunded by billing, undone by the product.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import { placeAs } from "../../support/simulatedStripe.ts"
import { cancelSubscription, renewSubscription } from "../../../domain/billing/Renewal.ts"
import { sweepLifecycle } from "../../../domain/billing/sweepLifecycle.ts"
import { Invoices } from "../../../ports/Invoices.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { Orders } from "../../../ports/Orders.ts"
import { Subscriptions } from "../../../ports/Subscriptions.ts"
import { listSubscriptionsWithServices } from "../../../domain/billing/subscriptionList.ts"
import { DNS_STEPS, dnsPlan, NAME_SERVER, NameServer } from "../../support/dnsZoneProduct.ts"
import { noticesOf } from "../../support/recordedNotices.ts"
import { alice, dnsEnv, ordered, recordStatus, subscriptionOf, until, zone } from "../../support/dnsEnv.ts"

describe("a product billing does not know (a DNS zone)", () => {
  it.effect("is ordered, charged and provisioned in its own named steps", () =>
    Effect.gen(function*() {
      const order = yield* ordered("example.fr")
      assert.strictEqual(order.kind, "dns-zone")
      assert.strictEqual(order.status, "completed")
      assert.deepStrictEqual([order.step, order.totalSteps, order.stepName], [2, DNS_STEPS.length, DNS_STEPS[1]])
      assert.deepInclude(yield* zone("example.fr"), { orderId: order.id, serving: true })
      const charges = (yield* (yield* Ledger).forOrder(order.id)).map((e) => [e.kind, e.amountCents])
      // The plan's price excluding VAT plus 20 % for a French consumer.
      assert.deepStrictEqual(charges, [["charge", 120]])
    }).pipe(Effect.provide(dnsEnv)))

  it.effect("refuses options it does not accept before anything is charged", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(placeAs(alice, dnsPlan.id, { zone: "not a domain" }))
      assert.deepInclude(refused, { _tag: "InvalidOrderOption", field: "options.zone" })
      assert.strictEqual((yield* Effect.flip(placeAs(alice, "no-such-plan", {})))._tag, "PlanUnavailable")
      assert.deepStrictEqual(yield* (yield* Subscriptions).forUser(alice), [])
    }).pipe(Effect.provide(dnsEnv)))

  it.effect("is refused before anything is charged when the product has no room for it", () =>
    Effect.gen(function*() {
      yield* ordered("first.fr")
      yield* Effect.flatMap(NameServer, (server) => Ref.set(server.capacity, 1))
      const refused = yield* Effect.flip(placeAs(alice, dnsPlan.id, { zone: "second.fr" }))
      assert.deepInclude(refused, { _tag: "SoldOut", planId: dnsPlan.id })
      assert.lengthOf(yield* (yield* Subscriptions).forUser(alice), 1)
      assert.isUndefined(yield* zone("second.fr"))
    }).pipe(Effect.provide(dnsEnv)))

  it.effect("shows in the customer's list as the product describes it: name, address, state", () =>
    Effect.gen(function*() {
      const order = yield* ordered("example.fr")
      const [listed, ...others] = (yield* listSubscriptionsWithServices(alice)).subscriptions
      assert.deepStrictEqual(others, [])
      assert.strictEqual(listed?.subscription.id, order.subscriptionId)
      assert.deepStrictEqual(listed?.service, Option.some({ name: "example.fr", address: NAME_SERVER, state: "active" }))
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(recordStatus(order.subscriptionId ?? ""), (s) => s === "suspended"))
      const [lapsed] = (yield* listSubscriptionsWithServices(alice)).subscriptions
      assert.deepStrictEqual(lapsed?.service, Option.some({ name: "example.fr", address: NAME_SERVER, state: "suspended" }))
    }).pipe(Effect.provide(dnsEnv)))

  it.effect("a failed provisioning is refunded by billing and undone by the product", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(NameServer, (server) => Ref.set(server.refused, new Set(["refused.fr"])))
      const order = yield* ordered("refused.fr")
      assert.strictEqual(order.status, "failed")
      assert.include(order.failureReason ?? "", "The zone could not be published.")
      assert.include(order.failureReason ?? "", "refunded")
      const entries = (yield* (yield* Ledger).forOrder(order.id)).map((e) => e.kind).sort()
      assert.deepStrictEqual(entries, ["charge", "refund"])
      assert.strictEqual((yield* subscriptionOf(order.subscriptionId ?? "")).status, "failed")
      // The undo runs after the refund, in the product's own workflow, and clears the pending cleanup.
      yield* until(Effect.map(zone("refused.fr"), (z) => z === undefined))
      yield* until(Effect.map(Effect.flatMap(Orders, (o) => o.pendingCleanups), (all) => all.length === 0))
    }).pipe(Effect.provide(dnsEnv)))

  it.effect("lapses into suspension, comes back with a renewal, and ends after its grace window", () =>
    Effect.gen(function*() {
      const order = yield* ordered("example.fr")
      const subscriptionId = order.subscriptionId ?? ""
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "suspended"))
      assert.strictEqual(yield* recordStatus(subscriptionId), "suspended")
      assert.isFalse((yield* zone("example.fr"))?.serving)

      const renewed = yield* renewSubscription(alice, subscriptionId)
      assert.strictEqual(renewed.status, "active")
      yield* until(Effect.map(recordStatus(subscriptionId), (s) => s === "active"))
      assert.isTrue((yield* zone("example.fr"))?.serving)

      // The renewed month runs out, and so does its grace window.
      yield* TestClock.adjust("32 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "suspended"))
      yield* TestClock.adjust("8 days")
      yield* sweepLifecycle
      yield* until(Effect.map(subscriptionOf(subscriptionId), (s) => s.status === "terminated"))
      assert.strictEqual(yield* recordStatus(subscriptionId), "deleted")
      assert.isUndefined(yield* zone("example.fr"))
    }).pipe(Effect.provide(dnsEnv)))

  describe("tells its customer", () => {
    const service = (subscriptionId: string) => ({ subscriptionId, kind: "dns-zone", planName: dnsPlan.name })
    const day = 86_400_000

    it.effect("where a provisioned service answers, once", () =>
      Effect.gen(function*() {
        const order = yield* ordered("ready.fr")
        yield* until(Effect.map(noticesOf("ServiceReady"), (all) => all.length > 0))
        assert.deepStrictEqual(yield* noticesOf("ServiceReady"), [
          { _tag: "ServiceReady", userId: alice, service: service(order.subscriptionId ?? ""), address: "ready.fr" }
        ])
      }).pipe(Effect.provide(dnsEnv)))

    it.effect("of the refund when provisioning fails, and never that it is ready", () =>
      Effect.gen(function*() {
        yield* Effect.flatMap(NameServer, (server) => Ref.set(server.refused, new Set(["refused.fr"])))
        const order = yield* ordered("refused.fr")
        const refunds = yield* noticesOf("RefundIssued")
        assert.deepStrictEqual(refunds.map((r) => [r.userId, r.amountCents, r.reason]), [[alice, 120, "order_failed"]])
        const refund = (yield* (yield* Ledger).forOrder(order.id)).find((e) => e.kind === "refund")
        assert.isTrue(refund?.reference.endsWith(`:${refunds[0]!.refundId}`))
        // The refund's e-mail names its credit note (attached when it is sent), which corrects the receipt's invoice.
        const invoices = yield* Invoices
        const credit = Option.getOrThrow(yield* invoices.forLedgerEntry("refund", refund!.reference))
        assert.strictEqual(refunds[0]!.creditNoteId, credit.id)
        const [receipt] = yield* noticesOf("OrderPaid")
        assert.strictEqual(credit.correctsInvoiceId, receipt!.invoiceId)
        assert.deepStrictEqual(yield* noticesOf("ServiceReady"), [])
      }).pipe(Effect.provide(dnsEnv)))

    it.effect("that the service is suspended until its grace end, warned two days before it, and ended", () =>
      Effect.gen(function*() {
        const order = yield* ordered("lapse.fr")
        const subscriptionId = order.subscriptionId ?? ""
        const periodEnd = (yield* subscriptionOf(subscriptionId)).currentPeriodEnd
        const endsAt = new Date(periodEnd.getTime() + 7 * day)
        yield* TestClock.adjust("32 days")
        yield* sweepLifecycle
        yield* until(Effect.map(noticesOf("ServiceSuspended"), (all) => all.length > 0))
        assert.deepStrictEqual(yield* noticesOf("ServiceSuspended"), [
          { _tag: "ServiceSuspended", userId: alice, service: service(subscriptionId), periodEnd, endsAt }
        ])
        // Not before the last two days of the grace window…
        yield* TestClock.setTime(endsAt.getTime() - 2 * day - 1000)
        yield* sweepLifecycle
        assert.deepStrictEqual(yield* noticesOf("FinalWarning"), [])
        // …then at once, as often as the sweep runs (the real Notices sends one: the key names the grace end).
        yield* TestClock.adjust("1 second")
        yield* sweepLifecycle
        yield* TestClock.adjust("1 minute")
        yield* sweepLifecycle
        const warnings = yield* noticesOf("FinalWarning")
        assert.strictEqual(warnings.length, 2)
        for (const warning of warnings) {
          assert.deepStrictEqual(warning, { _tag: "FinalWarning", userId: alice, service: service(subscriptionId), endsAt })
        }
        assert.deepStrictEqual(yield* noticesOf("ServiceEnded"), [])
        yield* TestClock.setTime(endsAt.getTime())
        yield* sweepLifecycle
        yield* until(Effect.map(noticesOf("ServiceEnded"), (all) => all.length > 0))
        assert.deepStrictEqual(
          (yield* noticesOf("ServiceEnded")).map((n) => [n.service.subscriptionId, n.endedAt.getTime() >= endsAt.getTime()]),
          [[subscriptionId, true]]
        )
        assert.strictEqual((yield* noticesOf("FinalWarning")).length, 2, "no final warning once it ended")
      }).pipe(Effect.provide(dnsEnv)))

    it.effect("that a cancellation is recorded, with the day the service ends, once however often it is asked", () =>
      Effect.gen(function*() {
        const order = yield* ordered("cancel.fr")
        const subscriptionId = order.subscriptionId ?? ""
        yield* cancelSubscription(alice, subscriptionId)
        yield* cancelSubscription(alice, subscriptionId)
        assert.deepStrictEqual(yield* noticesOf("CancellationConfirmed"), [{
          _tag: "CancellationConfirmed",
          userId: alice,
          service: service(subscriptionId),
          endsAt: (yield* subscriptionOf(subscriptionId)).currentPeriodEnd
        }])
      }).pipe(Effect.provide(dnsEnv)))
  })
})
