// The payment port's behaviours on the Stripe adapter, run against the sandbox Stripe through the official SDK over
// loopback: customers, the hosted checkout (each test card of reference/stripe.md), the card page, off-session
// charges and their typed outcomes, refunds, and notifications verified as the webhook route verifies them.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import Stripe from "stripe"
import * as StripePaymentGateway from "../../../adapters/stripe/StripePaymentGateway.ts"
import { sandboxStripe } from "../../../adapters/stripe/sandbox/SandboxStripe.ts"
import type { PaymentGateway, PaymentNotification } from "../../../ports/PaymentGateway.ts"
import { getPage, payWith, postPage, receiver } from "./support.ts"

const PREVIOUS_SECRET = "whsec_previous_rotation_secret"

/** The adapter on the sandbox, with the endpoint's secret and a previous one (a rotation under way). */
const gatewayOn = (sandbox: { readonly host: string; readonly port: number; readonly secretKey: string }, webhookSecret: string, options: { readonly timeoutMs?: number } = {}) =>
  StripePaymentGateway.make({
    credentials: Effect.succeed(Option.some({
      secretKey: Redacted.make(sandbox.secretKey),
      webhookSecrets: [Redacted.make(webhookSecret), Redacted.make(PREVIOUS_SECRET)]
    })),
    api: { host: sandbox.host, port: sandbox.port, protocol: "http" },
    maxNetworkRetries: 0,
    timeoutMs: options.timeoutMs ?? 5_000
  })

/** A sandbox of its own (its deliveries go to this test's endpoint only), a loopback receiver registered as its
 * webhook endpoint, and the gateway on both. */
const setup = Effect.gen(function*() {
  const sandbox = yield* sandboxStripe({ webhooks: { initialRetryDelayMs: 20 } })
  const endpoint = yield* receiver
  const { secret } = yield* sandbox.control.registerWebhook(endpoint.url)
  const gateway = gatewayOn(sandbox, secret)
  /** Every notification delivered so far, verified and decoded as the webhook route does. */
  const notifications = Effect.gen(function*() {
    yield* sandbox.control.awaitDeliveries
    const decoded: Array<PaymentNotification> = []
    for (const r of endpoint.received) {
      decoded.push(yield* gateway.verifyNotification({ payload: r.body, signature: String(r.headers["stripe-signature"]) }))
    }
    return decoded
  })
  return { sandbox, gateway, notifications, secret }
})

let orders = 0
const orderOf = () => `00000000-0000-4000-8000-${String(++orders).padStart(12, "0")}`

const customer = (gateway: PaymentGateway["Service"]) => {
  const userId = orderOf()
  return Effect.map(
    gateway.createCustomer({ userId, email: `${userId}@example.test`, idempotencyKey: `customer:${userId}` }),
    (c) => c.customer
  )
}

/** A first order paid on the hosted checkout with `card` (authenticated when the page asks). */
const paidCheckout = (gateway: PaymentGateway["Service"], cus: string, card: string, orderId = orderOf()) =>
  Effect.gen(function*() {
    const { url } = yield* gateway.checkout({
      customer: cus,
      orderId,
      description: "VPS S, first month",
      amountCents: 600,
      successUrl: `http://panel.test/orders/${orderId}`,
      cancelUrl: `http://panel.test/orders/${orderId}/cancelled`,
      idempotencyKey: `checkout:${orderId}`
    })
    const answer = yield* payWith(url, card)
    const final = answer.status === 200 ? yield* postPage(url, { outcome: "approve" }) : answer
    return { orderId, url, answer: final }
  })

/** A card saved on the card page (authenticated when the page asks). */
const savedOnCardPage = (gateway: PaymentGateway["Service"], cus: string, card: string) =>
  Effect.gen(function*() {
    const { url } = yield* gateway.cardPage({ customer: cus, returnUrl: "http://panel.test/card" })
    const answer = yield* payWith(url, card)
    return answer.status === 200 ? yield* postPage(url, { outcome: "approve" }) : answer
  })

const renewal = (gateway: PaymentGateway["Service"], cus: string, key: string) =>
  gateway.charge({ customer: cus, amountCents: 600, description: "VPS S, renewal", idempotencyKey: key })

describe("StripePaymentGateway on the sandbox Stripe", () => {
    it.effect("a customer is created once per key", () =>
      Effect.gen(function*() {
        const { gateway } = yield* setup
        const request = { userId: "u-1", email: "u1@example.test", idempotencyKey: "customer:u-1" }
        const first = yield* gateway.createCustomer(request)
        assert.strictEqual((yield* gateway.createCustomer(request)).customer, first.customer)
        assert.match(first.customer, /^cus_/)
      }))

    it.effect("4242 on the checkout pays the order: OrderPaid for it, the card saved, the same page for a retried key", () =>
      Effect.gen(function*() {
        const { gateway, notifications } = yield* setup
        const cus = yield* customer(gateway)
        assert.isTrue(Option.isNone(yield* gateway.savedCard(cus)))
        const { answer, orderId, url } = yield* paidCheckout(gateway, cus, "4242424242424242")
        assert.strictEqual(answer.status, 303)
        assert.strictEqual(answer.location, `http://panel.test/orders/${orderId}`)
        const again = yield* gateway.checkout({
          customer: cus,
          orderId,
          description: "VPS S, first month",
          amountCents: 600,
          successUrl: `http://panel.test/orders/${orderId}`,
          cancelUrl: `http://panel.test/orders/${orderId}/cancelled`,
          idempotencyKey: `checkout:${orderId}`
        })
        assert.strictEqual(again.url, url)
        const paid = (yield* notifications).filter((n) => n._tag === "OrderPaid" && n.orderId === orderId)
        assert.strictEqual(paid.length, 1)
        assert.deepInclude(paid[0], { amountCents: 600 })
        assert.deepStrictEqual(Option.getOrThrow(yield* gateway.savedCard(cus)), { brand: "visa", last4: "4242", expMonth: 12, expYear: 2034 })
      }))

    it.effect("declining cards on the checkout leave the order unpaid; an expired checkout says so", () =>
      Effect.gen(function*() {
        const { gateway, notifications, sandbox } = yield* setup
        const cus = yield* customer(gateway)
        const declined = yield* paidCheckout(gateway, cus, "4000000000000002")
        assert.strictEqual(declined.answer.status, 402)
        const poor = yield* paidCheckout(gateway, cus, "4000000000009995")
        assert.strictEqual(poor.answer.status, 402)
        yield* sandbox.control.advanceTime(25 * 3600)
        const seen = yield* notifications
        assert.isFalse(seen.some((n) => n._tag === "OrderPaid" && (n.orderId === declined.orderId || n.orderId === poor.orderId)))
        assert.isTrue(seen.some((n) => n._tag === "CheckoutExpired" && n.orderId === declined.orderId))
        assert.strictEqual((yield* getPage(declined.url)).status, 410)
      }))

    it.effect("off-session charges: 4242, 0446 and 3155 (saved off-session) are paid once per key", () =>
      Effect.gen(function*() {
        const { gateway } = yield* setup
        for (const card of ["4242424242424242", "4000003800000446", "4000002500003155"]) {
          const cus = yield* customer(gateway)
          assert.strictEqual((yield* paidCheckout(gateway, cus, card)).answer.status, 303)
          const key = `renew:${cus}:2026-01-01T00:00:00.000Z`
          const first = yield* renewal(gateway, cus, key)
          assert.match(first.reference, /^pi_/)
          assert.strictEqual((yield* renewal(gateway, cus, key)).reference, first.reference, card)
        }
      }))

    it.effect("off-session refusals are typed: insufficient funds declined, 3184 needs authentication, no card declined", () =>
      Effect.gen(function*() {
        const { gateway, notifications } = yield* setup
        const poor = yield* customer(gateway)
        assert.strictEqual((yield* savedOnCardPage(gateway, poor, "4000000000009995")).status, 303)
        const declined = yield* Effect.flip(renewal(gateway, poor, `renew:${poor}:1`))
        assert.strictEqual(declined._tag, "PaymentDeclined")
        assert.include(declined.message, "insufficient funds")
        const strong = yield* customer(gateway)
        assert.strictEqual((yield* paidCheckout(gateway, strong, "4000002760003184")).answer.status, 303)
        assert.strictEqual((yield* Effect.flip(renewal(gateway, strong, `renew:${strong}:1`)))._tag, "PaymentAuthenticationRequired")
        const none = yield* customer(gateway)
        const noCard = yield* Effect.flip(renewal(gateway, none, `renew:${none}:1`))
        assert.strictEqual(noCard._tag, "PaymentDeclined")
        assert.include(noCard.message, "no saved card")
        const seen = yield* notifications
        assert.isTrue(seen.some((n) => n._tag === "CardSaved" && n.customer === poor))
        assert.isTrue(seen.some((n) => n._tag === "ChargeFailed" && n.reason === "insufficient funds"))
      }))

    it.effect("findCharge finds a checkout's and a renewal's payment by their keys, and nothing for a key never charged", () =>
    Effect.gen(function*() {
      const { gateway } = yield* setup
      const cus = yield* customer(gateway)
      const { orderId } = yield* paidCheckout(gateway, cus, "4242424242424242")
      const first = Option.getOrThrow(yield* gateway.findCharge(`checkout:${orderId}`))
      assert.match(first.reference, /^pi_/)
      assert.strictEqual(first.amountCents, 600)
      const renewed = yield* renewal(gateway, cus, `renew:${cus}:it's`)
      assert.deepStrictEqual(yield* gateway.findCharge(`renew:${cus}:it's`), Option.some({ reference: renewed.reference, amountCents: 600 }))
      assert.isTrue(Option.isNone(yield* gateway.findCharge(`checkout:${orderOf()}`)))
    }))

  it.effect("a customer Stripe does not know has no saved card: its charge is declined, nothing is taken", () =>
    Effect.gen(function*() {
      const { gateway } = yield* setup
      assert.isTrue(Option.isNone(yield* gateway.savedCard("cus_unknown")))
      const refused = yield* Effect.flip(renewal(gateway, "7d5a1f6e-0000-4000-8000-0000000000ff", "order:unknown"))
      assert.strictEqual(refused._tag, "PaymentDeclined")
    }))

  it.effect("the card page replaces the card charges use", () =>
      Effect.gen(function*() {
        const { gateway } = yield* setup
        const cus = yield* customer(gateway)
        assert.strictEqual((yield* paidCheckout(gateway, cus, "4242424242424242")).answer.status, 303)
        assert.strictEqual((yield* savedOnCardPage(gateway, cus, "4000000000009995")).status, 303)
        assert.deepInclude(Option.getOrThrow(yield* gateway.savedCard(cus)), { last4: "9995" })
        assert.strictEqual((yield* Effect.flip(renewal(gateway, cus, `renew:${cus}:x`)))._tag, "PaymentDeclined")
      }))

    it.effect("a refund happens once per key and is confirmed by a notification", () =>
      Effect.gen(function*() {
        const { gateway, notifications } = yield* setup
        const cus = yield* customer(gateway)
        yield* paidCheckout(gateway, cus, "4242424242424242")
        const charge = yield* renewal(gateway, cus, `renew:${cus}:r`)
        const first = yield* gateway.refund({ charge: charge.reference, amountCents: 600, idempotencyKey: `refund:${cus}` })
        const again = yield* gateway.refund({ charge: charge.reference, amountCents: 600, idempotencyKey: `refund:${cus}` })
        assert.strictEqual(again.reference, first.reference)
        const confirmed = (yield* notifications).filter((n) => n._tag === "RefundConfirmed" && n.payment === charge.reference)
        assert.deepStrictEqual(confirmed.map((n) => n._tag === "RefundConfirmed" ? n.refundedCents : -1), [600])
      }))

    it.effect("a provider failing or not answering is PaymentUnavailable", () =>
      Effect.gen(function*() {
        const { sandbox, secret } = yield* setup
        const gateway = gatewayOn(sandbox, secret, { timeoutMs: 300 })
        const cus = yield* customer(gateway)
        yield* sandbox.control.failNextApiCalls({ times: 1 })
        assert.strictEqual((yield* Effect.flip(renewal(gateway, cus, "renew:down")))._tag, "PaymentUnavailable")
        yield* sandbox.control.hangNextApiCalls({ times: 1 })
        assert.strictEqual((yield* Effect.flip(gateway.savedCard(cus)))._tag, "PaymentUnavailable")
      }))

    it.effect("notifications: the current or previous secret verifies; forged, stale or altered ones are refused; others ignored", () =>
      Effect.gen(function*() {
        const { gateway, secret } = yield* setup
        const payload = JSON.stringify({ id: "evt_test_1", object: "event", type: "customer.created", data: { object: { id: "cus_1" } } })
        const sign = (s: string, timestamp = Math.floor(Date.now() / 1000)) => Stripe.webhooks.generateTestHeaderString({ payload, secret: s, timestamp })
        assert.deepStrictEqual(yield* gateway.verifyNotification({ payload, signature: sign(secret) }), { _tag: "Ignored", id: "evt_test_1", type: "customer.created" })
        assert.strictEqual((yield* gateway.verifyNotification({ payload, signature: sign(PREVIOUS_SECRET) })).id, "evt_test_1")
        const refused = (p: string, signature: string) => Effect.map(Effect.flip(gateway.verifyNotification({ payload: p, signature })), (e) => e._tag)
        assert.strictEqual(yield* refused(payload, sign("whsec_someone_else")), "NotificationSignatureInvalid")
        assert.strictEqual(yield* refused(payload, sign(secret, Math.floor(Date.now() / 1000) - 301)), "NotificationSignatureInvalid")
        assert.strictEqual(yield* refused(payload.replace("evt_test_1", "evt_test_2"), sign(secret)), "NotificationSignatureInvalid")
        assert.strictEqual(yield* refused(payload, ""), "NotificationSignatureInvalid")
      }))

    it.effect("without a secret key the gateway is not configured", () =>
      Effect.gen(function*() {
        const gateway = StripePaymentGateway.make({ credentials: Effect.succeed(Option.none()) })
        assert.strictEqual((yield* Effect.flip(gateway.ready))._tag, "PaymentsNotConfigured")
        assert.strictEqual((yield* Effect.flip(gateway.charge({ customer: "cus_x", amountCents: 1, description: "x", idempotencyKey: "k" })))._tag, "PaymentUnavailable")
      }))

  it.effect("a renewal's payment page (3184 approved) says RenewalPaidOnPage with its subscription and period; the same key, the same page", () =>
    Effect.gen(function*() {
      const { gateway, notifications } = yield* setup
      const cus = yield* customer(gateway)
      const request = {
        customer: cus,
        amountCents: 600,
        description: "VPS S, renewal",
        subscriptionId: "7d5a1f6e-0000-4000-8000-00000000beef",
        periodStart: "2026-02-01T00:00:00.000Z",
        returnUrl: "http://panel.test/billing",
        idempotencyKey: "renew-page:7d5a1f6e:2026-02-01"
      }
      const { url } = yield* gateway.paymentLink(request)
      assert.strictEqual((yield* gateway.paymentLink(request)).url, url)
      assert.strictEqual((yield* payWith(url, "4000002760003184")).status, 200)
      const approved = yield* postPage(url, { outcome: "approve" })
      assert.deepStrictEqual([approved.status, approved.location], [303, "http://panel.test/billing"])
      const paid = (yield* notifications).filter((n) => n._tag === "RenewalPaidOnPage")
      assert.strictEqual(paid.length, 1)
      assert.deepInclude(paid[0], { subscriptionId: request.subscriptionId, periodStart: request.periodStart, amountCents: 600 })
      assert.match(paid[0]?._tag === "RenewalPaidOnPage" ? paid[0].payment : "", /^pi_/)
      // Not an order's payment.
      assert.isFalse((yield* notifications).some((n) => n._tag === "OrderPaid"))
    }))
})

