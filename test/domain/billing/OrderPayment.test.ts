// Specification of paying an order on the provider's hosted checkout (issue 12 §2), on the REAL Stripe gateway over the
// sandbox Stripe's simulation: an order awaits its payment and provisioning starts only on the verified notification
// (never the browser's return); notifications delivered many times and out of order take effect once; an unpaid order
// expires after its window (TestClock) with its page closed at the provider first, and one paid as it expired is
// delivered; a payment for an order that can no longer be delivered is refunded; an interrupted provisioning is
// carried on by the recovery.
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { SimulatedCluster } from "../../support/simulatedCluster.ts"
import { placeOrder, recoverOrders, settleOrderPayment } from "../../../domain/billing/Ordering.ts"
import { moveOrder } from "../../../domain/billing/orderMoves.ts"
import { BillingProfiles } from "../../../ports/BillingProfiles.ts"
import { Invoices } from "../../../ports/Invoices.ts"
import { IpAddresses } from "../../../ports/IpAddresses.ts"
import { Users } from "../../../ports/Users.ts"
import { billedCustomer } from "../../support/invoicing.ts"
import { profileIn } from "../../support/invoiceMother.ts"
import { newUser } from "../../support/userMother.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { Orders } from "../../../ports/Orders.ts"
import { PaymentGateway } from "../../../ports/PaymentGateway.ts"
import { Subscriptions } from "../../../ports/Subscriptions.ts"
import { UnitOfWork } from "../../../ports/UnitOfWork.ts"
import { eventually } from "../../support/eventually.ts"
import { noticesOf } from "../../support/recordedNotices.ts"
import { checkoutEvents, deliver, payOnPage, placeAs, SimulatedStripe, succeededPayments } from "../../support/simulatedStripe.ts"
import { vpsEnv, vpsOptions } from "../../support/vpsEnv.ts"
import { SandboxSirets, SandboxVatNumbers } from "../../support/sandboxRegistries.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"
const after = Duration.seconds(60)

const orderOf = (id: string) => Effect.map(Effect.flatMap(Orders, (o) => o.get(id)), Option.getOrThrow)
const ledgerOf = (id: string) => Effect.map(Effect.flatMap(Ledger, (l) => l.forOrder(id)), (all) => all.map((e) => e.kind).sort())
const place = (hostname: string) => placeAs(alice, "vps-s", vpsOptions(hostname))

/** Waits on the live clock until `read` satisfies `done`. */
const settle = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1_000; i++) {
      const value = yield* read
      if (done(value)) return value
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.die(new Error("never settled"))
  })

describe("an order paid on the hosted checkout", () => {
  it.live("awaits its payment; the browser's return does nothing; the verified notification starts the provisioning", () =>
    Effect.gen(function*() {
      const order = yield* place("pay-1")
      assert.strictEqual(order.status, "awaiting_payment")
      assert.match(order.checkoutUrl ?? "", /\/c\/pay\/cs_test_/)
      assert.isNotNull(order.expiresAt)
      // The customer pays and the page sends the browser back: Stripe has the money, we have not been told.
      assert.strictEqual(yield* payOnPage(order.id), 303)
      yield* Effect.sleep("50 millis")
      assert.deepInclude(yield* orderOf(order.id), { status: "awaiting_payment", subscriptionId: null })
      assert.deepStrictEqual(yield* ledgerOf(order.id), [])
      assert.deepStrictEqual((yield* SimulatedCluster.vms).filter((v) => !v.template), [])
      // Stripe's signed notification arrives: paid, provisioned.
      for (const event of yield* checkoutEvents(order.id)) yield* deliver(event)
      const done = yield* settle(orderOf(order.id), (o) => o.status === "completed")
      assert.deepStrictEqual(yield* ledgerOf(order.id), ["charge"])
      const [charge] = yield* (yield* Ledger).forOrder(order.id)
      const [payment] = yield* succeededPayments
      assert.strictEqual(charge?.reference, payment?.id)
      // A French consumer pays the plan's price (500, excluding VAT) with 20 % VAT: 600, and exactly that is invoiced.
      assert.strictEqual(payment?.amount, 600)
      assert.strictEqual(charge?.amountCents, 600)
      const invoices = yield* (yield* Invoices).forUser(alice, null, 10)
      assert.lengthOf(invoices, 1)
      assert.deepInclude(invoices[0]!, {
        kind: "invoice",
        orderId: order.id,
        subscriptionId: done.subscriptionId,
        ledgerReference: payment!.id,
        totalExcludingVatCents: 500,
        vatCents: 100,
        totalIncludingVatCents: 600
      })
      assert.strictEqual(Option.getOrThrow(yield* (yield* Subscriptions).get(done.subscriptionId!)).status, "active")
      // The receipt: told once, for the amount Stripe took.
      const receipts = yield* noticesOf("OrderPaid")
      assert.deepStrictEqual(receipts.map((n) => [n.orderId, n.amountCents, n.userId]), [[order.id, 600, alice]])
    }).pipe(Effect.provide(vpsEnv())))

  it.live("each notification delivered five times, at once and out of order, takes effect once", () =>
    Effect.gen(function*() {
      const first = yield* place("dup-1")
      const second = yield* place("dup-2")
      assert.strictEqual(yield* payOnPage(first.id), 303)
      assert.strictEqual(yield* payOnPage(second.id), 303)
      const simulation = yield* SimulatedStripe
      // Every event Stripe made for these payments, newest first, each five times, all at once.
      const events = [...(yield* simulation.control.events)].reverse()
      const receipts = yield* Effect.forEach(
        events.flatMap((event) => Array.from({ length: 5 }, () => event)),
        deliver,
        { concurrency: "unbounded" }
      )
      assert.strictEqual(receipts.filter((r) => !r.duplicate).length, events.length)
      for (const order of [first, second]) {
        const done = yield* settle(orderOf(order.id), (o) => o.status === "completed")
        assert.deepStrictEqual(yield* ledgerOf(order.id), ["charge"])
        assert.isNotNull(done.subscriptionId)
      }
      assert.lengthOf(yield* (yield* Subscriptions).forUser(alice), 2)
      assert.lengthOf((yield* SimulatedCluster.vms).filter((v) => !v.template), 2)
      // One receipt per order, not one per delivery.
      assert.sameMembers((yield* noticesOf("OrderPaid")).map((n) => n.orderId), [first.id, second.id])
    }).pipe(Effect.provide(vpsEnv())))

  it.live("a payment for an order that can no longer be delivered (expired meanwhile) is refunded, once", () =>
    Effect.gen(function*() {
      const order = yield* place("late-1")
      assert.strictEqual(yield* payOnPage(order.id), 303)
      // The order expired before Stripe's notification of the payment came.
      assert.isTrue(yield* moveOrder(order.id, { event: "expired" }, new Date()))
      const [paid] = yield* checkoutEvents(order.id)
      yield* deliver(paid!)
      yield* settle(ledgerOf(order.id), (kinds) => kinds.length === 2)
      yield* deliver(paid!)
      yield* Effect.sleep("50 millis")
      assert.deepStrictEqual(yield* ledgerOf(order.id), ["charge", "refund"])
      assert.deepInclude(yield* orderOf(order.id), { status: "expired", subscriptionId: null })
      assert.deepStrictEqual((yield* (yield* Orders).pendingCleanups).map((c) => c.orderId), [])
      const refunds = (yield* (yield* SimulatedStripe).control.events).filter((e) => e.type === "refund.created")
      assert.lengthOf(refunds, 1)
      // Money was taken, then given back: an invoice, and a credit note correcting it for the whole of it.
      const documents = yield* (yield* Invoices).forUser(alice, null, 10)
      const invoice = documents.find((d) => d.kind === "invoice")!
      const credit = documents.find((d) => d.kind === "credit_note")!
      assert.lengthOf(documents, 2)
      assert.deepInclude(invoice, { orderId: order.id, subscriptionId: null, totalIncludingVatCents: 600 })
      assert.deepInclude(credit, { correctsInvoiceId: invoice.id, totalIncludingVatCents: 600, vatCents: 100 })
    }).pipe(Effect.provide(vpsEnv())))

  it.live("an EU business with a VIES-valid VAT number pays the price excluding VAT (reverse charge), invoiced so", () =>
    Effect.gen(function*() {
      const bob = "00000000-0000-4000-8000-000000000b0b"
      const user = yield* billedCustomer(bob)
      yield* (yield* BillingProfiles).save(profileIn(bob, "BE", {
        companyName: "Demo Belgium SRL",
        vatNumber: SandboxVatNumbers.belgianCompany,
        vatCheck: { status: "valid", checkedAt: new Date(), requestIdentifier: "SANDBOX1", registeredName: null, registeredAddress: null }
      }))
      const order = yield* placeOrder(user, "vps-s", vpsOptions("be-1"))
      assert.strictEqual(yield* payOnPage(order.id), 303)
      for (const event of yield* checkoutEvents(order.id)) yield* deliver(event)
      yield* settle(orderOf(order.id), (o) => o.status === "completed")
      const [payment] = yield* succeededPayments
      assert.strictEqual(payment?.amount, 500)
      const [invoice, ...others] = yield* (yield* Invoices).forUser(bob, null, 10)
      assert.deepStrictEqual(others, [])
      assert.deepInclude(invoice, { totalExcludingVatCents: 500, vatCents: 0, totalIncludingVatCents: 500, mentions: ["reverse_charge"] })
      assert.strictEqual(invoice?.vatBreakdown[0]?.vatCategory, "AE")
      assert.strictEqual(invoice?.buyer.vatNumber, SandboxVatNumbers.belgianCompany)
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a customer without a billing profile cannot order: BillingProfileRequired, no order, no checkout page", () =>
    Effect.gen(function*() {
      const carol = yield* (yield* Users).insert(newUser("carol@example.test"))
      let pages = 0
      const counted = Layer.effect(PaymentGateway, Effect.map(PaymentGateway, (gateway) =>
        PaymentGateway.of({ ...gateway, checkout: (request) => Effect.andThen(Effect.sync(() => pages++), gateway.checkout(request)) })))
      const error = yield* Effect.flip(Effect.provide(placeOrder(carol, "vps-s", vpsOptions("noprofile-1")), counted))
      assert.strictEqual(error._tag, "BillingProfileRequired")
      assert.strictEqual(pages, 0)
      assert.deepStrictEqual(yield* (yield* Orders).unfinished, [])
      // Once the profile is filled in, the same order goes through.
      yield* billedCustomer(carol.id)
      const order = yield* Effect.provide(placeOrder(carol, "vps-s", vpsOptions("noprofile-1")), counted)
      assert.strictEqual(order.status, "awaiting_payment")
      assert.strictEqual(pages, 1)
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a professional account without a profile gets the registry's prefill saved for it, and can order", () =>
    Effect.gen(function*() {
      const pro = yield* (yield* Users).insert(newUser("pro@example.test", {
        accountType: "professional",
        companyName: "ELECTRICITE DE FRANCE",
        siret: SandboxSirets.edf
      }))
      const order = yield* placeOrder(pro, "vps-s", vpsOptions("pro-1"))
      assert.strictEqual(order.status, "awaiting_payment")
      const profile = Option.getOrThrow(yield* (yield* BillingProfiles).get(pro.id))
      assert.deepInclude(profile, { companyName: "ELECTRICITE DE FRANCE", vatNumber: SandboxVatNumbers.edf })
      assert.strictEqual(profile.address.country, "FR")
      assert.notStrictEqual(profile.address.line1, "")
    }).pipe(Effect.provide(vpsEnv())))
})

describe("an unpaid order", () => {
  it.effect("expires after its payment window: its page closed at the provider first, nothing held, nothing charged", () =>
    Effect.gen(function*() {
      const order = yield* place("unpaid-1")
      yield* TestClock.adjust("59 minutes")
      yield* recoverOrders(after)
      assert.strictEqual((yield* orderOf(order.id)).status, "awaiting_payment")
      yield* TestClock.adjust("2 minutes")
      yield* recoverOrders(after)
      assert.deepInclude(yield* orderOf(order.id), { status: "expired", subscriptionId: null })
      // The page takes no card any more: the customer cannot pay an order we no longer deliver.
      assert.strictEqual(yield* payOnPage(order.id), 410)
      assert.deepStrictEqual(yield* succeededPayments, [])
      assert.deepStrictEqual(yield* ledgerOf(order.id), [])
      assert.isUndefined(yield* (yield* IpAddresses).held(order.id))
      assert.deepStrictEqual((yield* SimulatedCluster.vms).filter((v) => !v.template), [])
      // Stripe's own expiry notification, later, changes nothing.
      const expired = yield* checkoutEvents(order.id, "checkout.session.expired")
      assert.lengthOf(expired, 1)
      assert.isFalse((yield* deliver(expired[0]!)).duplicate)
      assert.strictEqual((yield* orderOf(order.id)).status, "expired")
    }).pipe(Effect.provide(vpsEnv())))

  // Live: the simulation's clock is the real one (its API runs outside the test's fibers).
  it.live("Stripe's checkout.session.expired notification expires it too", () =>
    Effect.gen(function*() {
      const order = yield* place("unpaid-2")
      // Stripe expires an open session at its own deadline (24 hours by default).
      yield* (yield* SimulatedStripe).control.advanceTime(25 * 3600)
      const [expired] = yield* checkoutEvents(order.id, "checkout.session.expired")
      yield* deliver(expired!)
      assert.strictEqual((yield* orderOf(order.id)).status, "expired")
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("paid while we expire it: the page turns out paid, so the order is paid and provisioned, charged once", () =>
    Effect.gen(function*() {
      const order = yield* place("race-1")
      yield* TestClock.adjust("61 minutes")
      // The customer pays at the last moment; Stripe's notification is not here yet when the expiry runs.
      assert.strictEqual(yield* payOnPage(order.id), 303)
      yield* recoverOrders(after)
      assert.strictEqual((yield* orderOf(order.id)).status, "provisioning")
      // The notification arrives afterwards: nothing more.
      for (const event of yield* checkoutEvents(order.id)) yield* deliver(event)
      yield* eventually(orderOf(order.id), (o) => o.status === "completed", 120)
      assert.deepStrictEqual(yield* ledgerOf(order.id), ["charge"])
      assert.lengthOf(yield* succeededPayments, 1)
      assert.lengthOf(yield* (yield* Subscriptions).forUser(alice), 1)
    }).pipe(Effect.provide(vpsEnv())))
})

describe("recovering interrupted orders", () => {
  it.effect("a paid order whose provisioning a dying process never started is started by the recovery", () =>
    Effect.gen(function*() {
      const order = yield* place("recover-1")
      assert.strictEqual(yield* payOnPage(order.id), 303)
      const [payment] = yield* succeededPayments
      // The payment's transaction committed; the process died before the provisioning started.
      const next = yield* (yield* UnitOfWork).transaction(settleOrderPayment({ orderId: order.id, payment: payment!.id, amountCents: 600 }))
      assert.strictEqual(next._tag, "Provision")
      yield* TestClock.adjust("30 seconds")
      yield* recoverOrders(after)
      assert.deepInclude(yield* orderOf(order.id), { status: "provisioning", step: 0 })
      yield* TestClock.adjust("31 seconds")
      yield* recoverOrders(after)
      yield* eventually(orderOf(order.id), (o) => o.status === "completed", 120)
      assert.deepStrictEqual(yield* ledgerOf(order.id), ["charge"])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a provider that cannot be reached when ordering: the order is expired at once, 503, nothing charged", () =>
    Effect.gen(function*() {
      yield* (yield* SimulatedStripe).control.failNextApiCalls({ times: 5, status: 500 })
      const error = yield* Effect.flip(place("down-1"))
      assert.strictEqual(error._tag, "PaymentUnavailable")
      const [expired] = (yield* (yield* Orders).unfinished)
      assert.isUndefined(expired)
    }).pipe(Effect.provide(vpsEnv())))
})
