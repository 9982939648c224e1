// Specification of the automatic renewal and its dunning, on the Stripe adapter over the sandbox Stripe without
// sockets (its PaymentIntents are the charges counted), billing's in-memory stores, a product billing does not know
// (the DNS zone of test/support) and TestClock: a 60-day calendar of subscriptions, two passes at once, a pass
// killed between its charge and its record, cancellation, and paying a lapsed subscription from the panel.
import { assert, describe, it } from "@effect/vitest"
import { NodeCrypto } from "@effect/platform-node"
import { Context, Duration, Effect, Fiber, Layer, Metric, Option, Redacted, Ref } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { TestClock } from "effect/testing"
import { WorkflowEngine } from "effect/workflow"
import Stripe from "stripe"
import * as IdentityUnitOfWork from "../../../adapters/fake/IdentityUnitOfWork.ts"
import * as MemoryLedger from "../../../adapters/fake/MemoryLedger.ts"
import * as MemoryServiceHolds from "../../../adapters/fake/MemoryServiceHolds.ts"
import * as MemoryOrders from "../../../adapters/fake/MemoryOrders.ts"
import * as MemoryAuditLog from "../../../adapters/fake/MemoryAuditLog.ts"
import * as MemoryPaymentNotifications from "../../../adapters/fake/MemoryPaymentNotifications.ts"
import * as MemorySubscriptions from "../../../adapters/fake/MemorySubscriptions.ts"
import { stripeSimulation, type StripeSimulation } from "../../../adapters/stripe/sandbox/SandboxStripe.ts"
import * as StripePaymentGateway from "../../../adapters/stripe/StripePaymentGateway.ts"
import { sweepRenewals } from "../../../domain/billing/autoRenewal.ts"
import { addMonth, OrderId, SubscriptionId } from "../../../domain/billing/Billing.ts"
import { HostedServices } from "../../../domain/billing/HostedService.ts"
import { receivePaymentNotification } from "../../../domain/billing/paymentNotifications.ts"
import { cancelSubscription, payRenewal, renewSubscription } from "../../../domain/billing/Renewal.ts"
import { sweepLifecycle } from "../../../domain/billing/sweepLifecycle.ts"
import type { CustomerNotice } from "../../../domain/notices/CustomerNotice.ts"
import { AuditLog } from "../../../ports/AuditLog.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { sample } from "../../support/prometheus.ts"
import { PaymentCustomers } from "../../../ports/PaymentCustomers.ts"
import { PaymentGateway } from "../../../ports/PaymentGateway.ts"
import { Renewals } from "../../../ports/Renewals.ts"
import { Subscriptions } from "../../../ports/Subscriptions.ts"
import { payWith, postPage } from "../../adapters/stripe/support.ts"
import { DnsZoneHosting, dnsPlan, ZoneRecords } from "../../support/dnsZoneProduct.ts"
import { promptWebCrypto } from "../../support/promptWebCrypto.ts"
import { billedCustomer, memoryInvoicing } from "../../support/invoicing.ts"
import { newUser } from "../../support/userMother.ts"
import { UserId } from "../../../domain/account/User.ts"
import { Users } from "../../../ports/Users.ts"
import { Invoices } from "../../../ports/Invoices.ts"
import { RecordedNotices, recordedNoticesLayer } from "../../support/recordedNotices.ts"
import { billingPageUrl, renewalEnv } from "../../support/renewalEnv.ts"

const WEBHOOK_SECRET = "whsec_renewal_tests"
const DAY = 86_400_000

class Simulation extends Context.Service<Simulation, StripeSimulation>()("test/Simulation") {}

/** The gateway on a fresh sandbox Stripe reached through its fetch (no sockets), and the simulation itself. */
const stripeLayer = Layer.effectContext(Effect.gen(function*() {
  // Its sweep of expired sessions runs on the test clock: once a day is enough (the test moves weeks).
  const simulation = yield* stripeSimulation({ expirySweepMs: DAY })
  const gateway = StripePaymentGateway.make({
    credentials: Effect.succeed(Option.some({
      secretKey: Redacted.make(simulation.secretKey),
      webhookSecrets: [Redacted.make(WEBHOOK_SECRET)]
    })),
    httpClient: Stripe.createFetchHttpClient(simulation.fetch),
    maxNetworkRetries: 0,
    timeoutMs: 5_000
  })
  return Context.make(PaymentGateway, gateway).pipe(Context.add(Simulation, simulation))
}))

const env = DnsZoneHosting.pipe(
  Layer.provideMerge(HostedServices.layer),
  Layer.provideMerge(WorkflowEngine.layerMemory),
  Layer.provideMerge(Layer.mergeAll(
    MemorySubscriptions.layer,
    MemoryOrders.layer,
    MemoryAuditLog.layer,
    MemoryLedger.layer,
    MemoryServiceHolds.layer,
    MemoryPaymentNotifications.layer,
    IdentityUnitOfWork.layer,
    NodeCrypto.layerSecureRandom,
    stripeLayer,
    renewalEnv(),
    recordedNoticesLayer,
    memoryInvoicing,
    promptWebCrypto
  ))
)

let users = 0
const newId = (prefix: string) => `00000000-0000-4000-${prefix}-${String(++users).padStart(12, "0")}`

/**
 * A customer (a French consumer with a billing profile, or with `legacy` an account without one, as subscriptions older
 * than invoicing) with `card` saved on the provider's card page (authenticated when the page asks), and a running DNS
 * zone whose subscription's period ends on day 31 (the test clock starts on 1 January 1970).
 */
const subscribed = (card: string, options: { readonly legacy?: boolean } = {}) =>
  Effect.gen(function*() {
    const userId = newId("8000")
    if (options.legacy === true) yield* (yield* Users).insert(newUser(`${userId}@example.test`, { id: UserId.make(userId) }))
    else yield* billedCustomer(userId)
    const gateway = yield* PaymentGateway
    const simulation = yield* Simulation
    const { customer } = yield* gateway.createCustomer({ userId, email: `${userId}@example.test`, idempotencyKey: `customer:${userId}` })
    yield* (yield* PaymentCustomers).remember(userId, customer, new Date(0))
    yield* saveCard(customer, card)
    const id = SubscriptionId.make(newId("9000"))
    const subscription = yield* (yield* Subscriptions).create({
      id,
      userId,
      planId: dnsPlan.id,
      kind: "dns-zone",
      orderId: OrderId.make(newId("a000")),
      currentPeriodEnd: addMonth(new Date(0)),
      now: new Date(0)
    })
    yield* Effect.flatMap(ZoneRecords, (records) =>
      Ref.update(records, (all) =>
        new Map(all).set(id, { id: `zone-${id}`, subscriptionId: id, orderId: subscription.orderId, zone: `${id}.example`, status: "active", graceUntil: null })))
    return { userId, customer, subscription }
  })

/** The card page, as the customer fills it in (the challenge approved when the card asks for one). */
const saveCard = (customer: string, card: string) =>
  Effect.gen(function*() {
    const simulation = yield* Simulation
    const { url } = yield* (yield* PaymentGateway).cardPage({ customer, returnUrl: billingPageUrl })
    const answer = yield* payWith(url, card, simulation.fetch)
    const final = answer.status === 200 ? yield* postPage(url, { outcome: "approve" }, simulation.fetch) : answer
    assert.strictEqual(final.status, 303, `saving ${card}`)
  })

/** A hosted page paid as the customer does, then the provider's events delivered to the webhook, signed. */
const payOnPage = (url: string, card: string) =>
  Effect.gen(function*() {
    const simulation = yield* Simulation
    const answer = yield* payWith(url, card, simulation.fetch)
    const final = answer.status === 200 ? yield* postPage(url, { outcome: "approve" }, simulation.fetch) : answer
    assert.strictEqual(final.status, 303, `paying with ${card}`)
    yield* deliverEvents
  })

const delivered = new WeakMap<StripeSimulation, Set<string>>()

/** Every event not delivered yet goes to the webhook's handler, signed with the endpoint's secret, as Stripe sends it. */
const deliverEvents = Effect.gen(function*() {
  const simulation = yield* Simulation
  const seen = delivered.get(simulation) ?? new Set<string>()
  delivered.set(simulation, seen)
  for (const event of yield* simulation.control.events) {
    if (seen.has(event.id)) continue
    seen.add(event.id)
    const payload = JSON.stringify(event)
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })
    yield* receivePaymentNotification({ payload: new TextEncoder().encode(payload), signature })
  }
})

/** One run of the lifecycle cron: renewals first, then lapses and ends; then the workflows it started run. */
const cronPass = Effect.gen(function*() {
  yield* sweepRenewals
  yield* sweepLifecycle
  for (let i = 0; i < 50; i++) yield* Effect.yieldNow
})

/** The PaymentIntents of a customer at the provider, by status. */
const intents = (customer: string) =>
  Effect.gen(function*() {
    const events = yield* (yield* Simulation).control.events
    const succeeded = new Set<string>()
    const failed = new Set<string>()
    for (const e of events) {
      const pi = e.data.object as { readonly id: string; readonly customer: string | null }
      if (pi.customer !== customer) continue
      if (e.type === "payment_intent.succeeded") succeeded.add(pi.id)
      if (e.type === "payment_intent.payment_failed") failed.add(pi.id)
    }
    return { succeeded: succeeded.size, failed: failed.size }
  })

const RENEWAL_TAGS = new Set(["RenewalReminder", "RenewalPaid", "PaymentFailed", "AuthenticationNeeded", "CancellationConfirmed", "RefundIssued"])

/** The renewal's notices of one user, in order, as `tag@day` (and the attempt of a failure). */
const noticesOf = (userId: string) =>
  Effect.map(Effect.flatMap(RecordedNotices, (recorded) => recorded.sent), (all) =>
    all.filter((n) => n.userId === userId && RENEWAL_TAGS.has(n._tag)).map(told))

const dayOf = (date: Date) => date.getTime() / DAY

const told = (n: CustomerNotice): string => {
  switch (n._tag) {
    case "RenewalReminder":
      return `RenewalReminder for day ${dayOf(n.chargeAt)} (${n.card?.last4 ?? "no card"})`
    case "RenewalPaid":
      return `RenewalPaid of day ${dayOf(n.periodStart)}`
    case "PaymentFailed":
      return `PaymentFailed #${n.attempt} of day ${dayOf(n.periodStart)}, next ${n.nextAttemptAt === null ? "none" : `day ${dayOf(n.nextAttemptAt)}`}`
    case "AuthenticationNeeded":
      return `AuthenticationNeeded of day ${dayOf(n.periodStart)}`
    case "CancellationConfirmed":
      return `CancellationConfirmed, ends day ${dayOf(n.endsAt)}`
    default:
      return n._tag
  }
}

/** The totals including VAT of `userId`'s invoices, oldest first. */
const invoiceTotals = (userId: string) =>
  Effect.map(Effect.flatMap(Invoices, (invoices) => invoices.forUser(userId, null, 100)), (all) =>
    all.filter((i) => i.kind === "invoice").map((i) => i.totalIncludingVatCents).reverse())

const subscriptionOf = (id: string) => Effect.map(Effect.flatMap(Subscriptions, (s) => s.get(id)), Option.getOrThrow)
const zoneStatus = (id: string) => Effect.map(Effect.flatMap(ZoneRecords, Ref.get), (all) => all.get(id)?.status)

/** Moves the clock to `day` (from 1 January 1970) in six-hour steps, running the cron at each. */
const runUntilDay = (day: number) =>
  Effect.gen(function*() {
    while ((yield* Effect.clockWith((c) => c.currentTimeMillis)) < day * DAY) {
      yield* TestClock.adjust(Duration.hours(6))
      yield* cronPass
    }
  })

describe("automatic renewal and dunning", () => {
  it.effect("60 days of a paid, a declined-then-paid, an authenticated-on-the-page and a cancelled subscription", () =>
    Effect.gen(function*() {
      const paid = yield* subscribed("4242424242424242")
      const declined = yield* subscribed("4000000000009995")
      const authenticated = yield* subscribed("4000002760003184")
      const cancelled = yield* subscribed("4242424242424242")

      yield* runUntilDay(10)
      yield* cancelSubscription(cancelled.userId, cancelled.subscription.id)
      // Day 31: the period ends. The paid one renews; the declined one is suspended, the page is offered to the other.
      yield* runUntilDay(31)
      assert.strictEqual((yield* subscriptionOf(paid.subscription.id)).status, "active")
      assert.strictEqual(yield* zoneStatus(declined.subscription.id), "suspended")
      assert.strictEqual(yield* zoneStatus(authenticated.subscription.id), "suspended")
      // Day 32: the first retry is declined too; then the customer puts another card.
      yield* runUntilDay(32)
      yield* saveCard(declined.customer, "4242424242424242")
      // Day 33: the other customer pays on the page the e-mail gave (the bank's challenge approved).
      yield* runUntilDay(33)
      const needed = (yield* (yield* RecordedNotices).sent).find((n) => n._tag === "AuthenticationNeeded" && n.userId === authenticated.userId)
      assert.isDefined(needed)
      yield* payOnPage(needed?._tag === "AuthenticationNeeded" ? needed.payUrl : "", "4000002760003184")
      yield* cronPass
      assert.strictEqual(yield* zoneStatus(authenticated.subscription.id), "active")
      // Day 34: the second retry, on the new card, pays; the service comes back.
      yield* runUntilDay(34)
      assert.strictEqual(yield* zoneStatus(declined.subscription.id), "active")
      yield* runUntilDay(60)

      assert.deepStrictEqual(yield* noticesOf(paid.userId), [
        "RenewalReminder for day 31 (4242)",
        "RenewalPaid of day 31",
        "RenewalReminder for day 59 (4242)",
        "RenewalPaid of day 59"
      ])
      assert.deepStrictEqual(yield* noticesOf(declined.userId), [
        "RenewalReminder for day 31 (9995)",
        "PaymentFailed #1 of day 31, next day 32",
        "PaymentFailed #2 of day 31, next day 34",
        "RenewalPaid of day 31",
        "RenewalReminder for day 62 (4242)"
      ])
      assert.deepStrictEqual(yield* noticesOf(authenticated.userId), [
        "RenewalReminder for day 31 (3184)",
        "AuthenticationNeeded of day 31",
        "RenewalPaid of day 31",
        "RenewalReminder for day 61 (3184)"
      ])
      assert.deepStrictEqual(yield* noticesOf(cancelled.userId), ["CancellationConfirmed, ends day 31"])

      assert.deepStrictEqual(yield* intents(paid.customer), { succeeded: 2, failed: 0 })
      assert.deepStrictEqual(yield* intents(declined.customer), { succeeded: 1, failed: 2 })
      assert.deepStrictEqual(yield* intents(authenticated.customer), { succeeded: 1, failed: 1 })
      assert.deepStrictEqual(yield* intents(cancelled.customer), { succeeded: 0, failed: 0 })
      // The cancelled one lapsed at its period's end and ended after its grace window, never charged.
      assert.strictEqual((yield* subscriptionOf(cancelled.subscription.id)).status, "terminated")
      const ledger = yield* Ledger
      // A French consumer is charged the price including 20 % VAT, and each charge has its invoice for exactly that.
      const charges = yield* ledger.forSubscription(paid.subscription.id)
      assert.deepStrictEqual(charges.map((e) => e.amountCents), [120, 120])
      for (const charge of charges) {
        const invoice = Option.getOrThrow(yield* (yield* Invoices).forLedgerEntry("charge", charge.reference))
        assert.deepInclude(invoice, { kind: "invoice", totalExcludingVatCents: dnsPlan.priceCents, vatCents: 20, totalIncludingVatCents: 120, subscriptionId: paid.subscription.id })
      }
      assert.deepStrictEqual(yield* invoiceTotals(paid.userId), [120, 120])
      // Each renewal's receipt names its invoice (attached when the e-mail is sent).
      const receipts = (yield* (yield* RecordedNotices).sent).filter((n) => n._tag === "RenewalPaid" && n.userId === paid.userId)
      const documents = yield* Invoices
      const invoiceIds = yield* Effect.forEach(charges, (c) =>
        Effect.map(documents.forLedgerEntry("charge", c.reference), (i) => Option.getOrThrow(i).id))
      assert.sameMembers(receipts.map((n) => n._tag === "RenewalPaid" ? n.invoiceId : null), invoiceIds)
      assert.strictEqual((yield* ledger.forSubscription(declined.subscription.id)).length, 1)
      assert.strictEqual((yield* ledger.forSubscription(authenticated.subscription.id)).length, 1)
      assert.strictEqual((yield* ledger.forSubscription(cancelled.subscription.id)).length, 0)

      // Each outcome measured (GET /metrics) and told in the customer's trail.
      const text = yield* PrometheusMetrics.format()
      const outcome = (o: string) => sample(text, "payment_outcomes_total", { kind: "renewal", outcome: o })
      assert.deepStrictEqual([outcome("succeeded"), outcome("declined"), outcome("auth_required")], [4, 2, 1])
      const trail = (userId: string, action: "payment.succeeded" | "payment.failed") =>
        Effect.map(Effect.flatMap(AuditLog, (log) => log.list({ subjectUserId: UserId.make(userId), actions: [action], limit: 10 })), (rows) => rows.length)
      assert.deepStrictEqual(
        [yield* trail(paid.userId, "payment.succeeded"), yield* trail(declined.userId, "payment.failed"), yield* trail(authenticated.userId, "payment.failed")],
        [2, 2, 1]
      )
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), Effect.provide(env)), 60_000)
})

/** The clock at the subscriptions' period end (day 31), the cron having run the week before it. */
const atPeriodEnd = Effect.andThen(runUntilDay(30), TestClock.adjust(Duration.days(1)))

/** The gateway, whose charge is taken at the provider and then never answers: the process dies in between. */
const killedAfterCharge = (charged: Ref.Ref<number>) =>
  Layer.effect(PaymentGateway, Effect.map(PaymentGateway, (gateway) =>
    PaymentGateway.of({
      ...gateway,
      charge: (request) => Effect.andThen(Effect.andThen(gateway.charge(request), Ref.update(charged, (n) => n + 1)), Effect.never)
    })))

describe("a renewal is charged once", () => {
  it.effect("two passes of the cron at once, and a click on renew among them, charge once and extend once", () =>
    Effect.gen(function*() {
      const { customer, subscription, userId } = yield* subscribed("4242424242424242")
      yield* atPeriodEnd
      yield* Effect.all([sweepRenewals, sweepRenewals, renewSubscription(userId, subscription.id), sweepRenewals], { concurrency: "unbounded" })
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 1, failed: 0 })
      assert.strictEqual((yield* (yield* Ledger).forSubscription(subscription.id)).length, 1)
      assert.strictEqual((yield* subscriptionOf(subscription.id)).currentPeriodEnd.getTime(), addMonth(addMonth(new Date(0))).getTime())
      assert.deepStrictEqual((yield* noticesOf(userId)).filter((n) => n.startsWith("RenewalPaid")), ["RenewalPaid of day 31"])
    }).pipe(Effect.provide(env)))

  it.effect("a pass killed between the charge and its record: after the claim lapses, the next pass records that one charge", () =>
    Effect.gen(function*() {
      const { customer, subscription, userId } = yield* subscribed("4242424242424242")
      yield* atPeriodEnd
      const charged = yield* Ref.make(0)
      const killed = yield* Effect.forkChild(Effect.provide(sweepRenewals, killedAfterCharge(charged)))
      while ((yield* Ref.get(charged)) === 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      yield* Fiber.interrupt(killed)
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 1, failed: 0 })
      assert.strictEqual((yield* (yield* Ledger).forSubscription(subscription.id)).length, 0)
      // Within the claim another pass does not touch the period; after it, the same attempt is made with the same key.
      yield* sweepRenewals
      assert.strictEqual((yield* (yield* Ledger).forSubscription(subscription.id)).length, 0)
      yield* TestClock.adjust(Duration.minutes(3))
      yield* cronPass
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 1, failed: 0 })
      assert.strictEqual((yield* (yield* Ledger).forSubscription(subscription.id)).length, 1)
      assert.strictEqual((yield* subscriptionOf(subscription.id)).status, "active")
      assert.deepStrictEqual((yield* noticesOf(userId)).filter((n) => n.startsWith("RenewalPaid")), ["RenewalPaid of day 31"])
    }).pipe(Effect.provide(env)))

  it.effect("a cancelled subscription is neither reminded nor charged, and its cancellation is told once", () =>
    Effect.gen(function*() {
      const { customer, subscription, userId } = yield* subscribed("4242424242424242")
      yield* cancelSubscription(userId, subscription.id)
      yield* cancelSubscription(userId, subscription.id)
      yield* runUntilDay(35)
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 0, failed: 0 })
      assert.deepStrictEqual(yield* noticesOf(userId), ["CancellationConfirmed, ends day 31"])
      assert.strictEqual((yield* subscriptionOf(subscription.id)).status, "suspended")
    }).pipe(Effect.provide(env)))
})

describe("a period first tried late", () => {
  it.effect("a decline four days after the period's end is retried at D+5, not at the retries already missed", () =>
    Effect.gen(function*() {
      const { customer, subscription, userId } = yield* subscribed("4000000000009995")
      // The cron was down from before the period's end until day 35.
      yield* TestClock.adjust(Duration.days(35))
      yield* cronPass
      yield* cronPass
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 0, failed: 1 })
      assert.deepStrictEqual((yield* noticesOf(userId)).filter((n) => n.startsWith("PaymentFailed")), ["PaymentFailed #1 of day 31, next day 36"])
      yield* runUntilDay(37)
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 0, failed: 2 })
      const record = Option.getOrThrow(yield* (yield* Renewals).get(subscription.id, subscription.currentPeriodEnd))
      assert.deepInclude(record, { status: "failed", attempts: 2, nextAttemptAt: null })
    }).pipe(Effect.provide(env)))
})

describe("a subscription from before invoicing", () => {
  it.effect("without a billing profile it still renews, invoiced under the account's name in France", () =>
    Effect.gen(function*() {
      const { customer, subscription, userId } = yield* subscribed("4242424242424242", { legacy: true })
      yield* atPeriodEnd
      yield* cronPass
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 1, failed: 0 })
      const [charge] = yield* (yield* Ledger).forSubscription(subscription.id)
      const invoice = Option.getOrThrow(yield* (yield* Invoices).forLedgerEntry("charge", charge!.reference))
      assert.strictEqual(charge!.amountCents, 120)
      assert.deepInclude(invoice, { totalIncludingVatCents: 120, taxCountry: "FR" })
      assert.deepInclude(invoice.buyer, { name: "Ada Lovelace", companyName: null })
      assert.strictEqual(invoice.buyer.address.country, "FR")
      assert.strictEqual((yield* subscriptionOf(subscription.id)).status, "active")
      assert.deepStrictEqual(yield* invoiceTotals(userId), [120])
    }).pipe(Effect.provide(env)))
})

describe("paying a lapsed subscription from the panel", () => {
  it.effect("with a card that goes through: paid at once, the service back, a fresh month from now", () =>
    Effect.gen(function*() {
      const { customer, subscription, userId } = yield* subscribed("4000000000009995")
      yield* runUntilDay(32)
      assert.strictEqual(yield* zoneStatus(subscription.id), "suspended")
      yield* saveCard(customer, "4242424242424242")
      yield* TestClock.adjust(Duration.hours(3))
      const paid = yield* payRenewal(userId, subscription.id)
      assert.strictEqual(paid._tag, "Paid")
      for (let i = 0; i < 50; i++) yield* Effect.yieldNow
      assert.strictEqual(yield* zoneStatus(subscription.id), "active")
      const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
      assert.strictEqual((yield* subscriptionOf(subscription.id)).currentPeriodEnd.getTime(), addMonth(new Date(now)).getTime())
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 1, failed: 2 })
      // The next pass does not charge the period again.
      yield* cronPass
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 1, failed: 2 })
    }).pipe(Effect.provide(env)))

  it.effect("with a card refused: a hosted page, paid there, brings the service back; the same payment delivered twice renews once", () =>
    Effect.gen(function*() {
      const { customer, subscription, userId } = yield* subscribed("4000000000009995")
      yield* runUntilDay(32)
      const answer = yield* payRenewal(userId, subscription.id)
      assert.strictEqual(answer._tag, "PayOnPage")
      yield* payOnPage(answer._tag === "PayOnPage" ? answer.url : "", "4242424242424242")
      for (let i = 0; i < 50; i++) yield* Effect.yieldNow
      assert.strictEqual(yield* zoneStatus(subscription.id), "active")
      assert.strictEqual((yield* subscriptionOf(subscription.id)).status, "active")
      // Stripe delivers at least once: the same event again changes nothing.
      const simulation = yield* Simulation
      const completed = (yield* simulation.control.events).filter((e) => e.type === "checkout.session.completed")
      const payload = JSON.stringify(completed.at(-1))
      const again = yield* receivePaymentNotification({
        payload: new TextEncoder().encode(payload),
        signature: Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })
      })
      assert.isTrue(again.duplicate)
      assert.strictEqual((yield* (yield* Ledger).forSubscription(subscription.id)).length, 1)
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 1, failed: 3 })
      assert.deepStrictEqual((yield* noticesOf(userId)).filter((n) => n.startsWith("RenewalPaid")), ["RenewalPaid of day 31"])
      const record = Option.getOrThrow(yield* (yield* Renewals).get(subscription.id, subscription.currentPeriodEnd))
      assert.strictEqual(record.status, "paid")
    }).pipe(Effect.provide(env)))

  it.effect("a page paid for a period the card already paid is refunded, and the customer told", () =>
    Effect.gen(function*() {
      const { customer, subscription, userId } = yield* subscribed("4242424242424242")
      yield* TestClock.adjust(Duration.days(20))
      // An early payment page for the coming period, left open; meanwhile the renewal charges the card.
      const page = yield* Effect.flatMap(PaymentGateway, (g) =>
        g.paymentLink({
          customer,
          amountCents: dnsPlan.priceCents,
          description: "DNS zone, renewal",
          subscriptionId: subscription.id,
          periodStart: subscription.currentPeriodEnd.toISOString(),
          returnUrl: billingPageUrl,
          idempotencyKey: "renew-page:test"
        }))
      yield* runUntilDay(31)
      yield* payOnPage(page.url, "4242424242424242")
      assert.deepStrictEqual(yield* intents(customer), { succeeded: 2, failed: 0 })
      const refunds = (yield* (yield* Simulation).control.events).filter((e) => e.type === "charge.refunded")
      assert.strictEqual(refunds.length, 1)
      assert.includeMembers(yield* noticesOf(userId), ["RefundIssued"])
      // The payment given back is in the ledger with its invoice, and its refund with a credit note correcting it.
      const entries = yield* (yield* Ledger).forSubscription(subscription.id)
      assert.deepStrictEqual(entries.map((e) => e.kind).sort(), ["charge", "charge", "refund"])
      const refund = entries.find((e) => e.kind === "refund")!
      const givenBack = entries.find((e) => e.kind === "charge" && refund.reference.startsWith(`${e.reference}:`))!
      const invoices = yield* Invoices
      const invoice = Option.getOrThrow(yield* invoices.forLedgerEntry("charge", givenBack.reference))
      const credit = Option.getOrThrow(yield* invoices.forLedgerEntry("refund", refund.reference))
      assert.deepInclude(credit, { kind: "credit_note", correctsInvoiceId: invoice.id, correctsNumber: invoice.number, totalIncludingVatCents: invoice.totalIncludingVatCents })
      assert.strictEqual(refund.amountCents, givenBack.amountCents)
      const told = (yield* (yield* RecordedNotices).sent).find((n) => n._tag === "RefundIssued" && n.userId === userId)
      assert.strictEqual(told?._tag === "RefundIssued" ? told.creditNoteId : undefined, credit.id)
    }).pipe(Effect.provide(env)))
})
