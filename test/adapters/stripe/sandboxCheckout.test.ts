// The sandbox Stripe's hosted checkout page, used as scripts use it (API.md § Payments: GET the form, POST card/exp/cvc,
// 303 back; a card needing authentication answers the challenge page, POSTed with outcome=approve|fail), each test
// card on-session and, once saved, off-session (reference/stripe.md § Test cards), and the refund rules.
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import Stripe from "stripe"
import { layerSandboxStripe, SandboxStripeInstance } from "../../../adapters/stripe/sandbox/SandboxStripe.ts"
import { call, checkout, getPage, payWith, postPage, savedCard, sdk } from "./support.ts"

const client = Effect.map(SandboxStripeInstance, (sandbox) => sdk(sandbox))

const renew = (stripe: Stripe, customer: string, paymentMethod: string, key?: string) =>
  call(() =>
    stripe.paymentIntents.create(
      { amount: 1500, currency: "eur", customer, payment_method: paymentMethod, off_session: true, confirm: true, metadata: { subscriptionId: "s1" } },
      key === undefined ? {} : { idempotencyKey: key }
    )
  )

describe("sandbox Stripe checkout page", () => {
  layer(layerSandboxStripe(), { excludeTestServices: true })("cards", (it) => {
    it.effect("4242 pays: 303 to success_url, session paid, a succeeded charge, the card saved for the customer", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const { customer, session, url } = yield* checkout(stripe)
        const form = yield* getPage(url)
        assert.strictEqual(form.status, 200)
        assert.include(form.body, "15.00 EUR")
        const answer = yield* payWith(url, "4242 4242 4242 4242")
        assert.strictEqual(answer.status, 303)
        assert.strictEqual(answer.location, `http://panel.test/orders/order-1?session=${session.id}`)
        const paid = yield* call(() => stripe.checkout.sessions.retrieve(session.id, { expand: ["payment_intent.latest_charge"] }))
        assert.strictEqual(paid.status, "complete")
        assert.strictEqual(paid.payment_status, "paid")
        const pi = paid.payment_intent as Stripe.PaymentIntent
        assert.strictEqual(pi.status, "succeeded")
        assert.strictEqual(pi.amount_received, 1500)
        assert.deepStrictEqual(pi.metadata, { orderId: "order-1" })
        assert.strictEqual(pi.setup_future_usage, "off_session")
        const charge = pi.latest_charge as Stripe.Charge
        assert.strictEqual(charge.status, "succeeded")
        assert.strictEqual(charge.amount, 1500)
        const pm = yield* call(() => stripe.paymentMethods.retrieve(pi.payment_method as string))
        assert.strictEqual(pm.customer, customer.id)
        assert.deepInclude(pm.card, { brand: "visa", last4: "4242", exp_month: 12, exp_year: 2034 })
        const saved = yield* call(() => stripe.customers.listPaymentMethods(customer.id))
        assert.deepStrictEqual(saved.data.map((p) => p.id), [pm.id])
        assert.strictEqual((yield* getPage(url)).status, 200)
        assert.strictEqual((yield* payWith(url, "4242424242424242")).status, 200, "a paid session takes no second payment")
        assert.strictEqual((yield* call(() => stripe.paymentIntents.retrieve(pi.id))).amount_received, 1500)
      }))

    it.effect("declines answer the form again with a 402 and the reason; another card then pays the same payment intent", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const { session, url } = yield* checkout(stripe)
        const poor = yield* payWith(url, "4000000000009995")
        assert.strictEqual(poor.status, 402)
        assert.include(poor.body, "Your card has insufficient funds.")
        const open = yield* call(() => stripe.checkout.sessions.retrieve(session.id, { expand: ["payment_intent"] }))
        assert.strictEqual(open.status, "open")
        const pi = open.payment_intent as Stripe.PaymentIntent
        assert.strictEqual(pi.status, "requires_payment_method")
        assert.strictEqual(pi.last_payment_error?.decline_code, "insufficient_funds")
        const declined = yield* payWith(url, "4000000000000002")
        assert.strictEqual(declined.status, 402)
        assert.include(declined.body, "Your card was declined.")
        assert.strictEqual((yield* call(() => stripe.paymentIntents.retrieve(pi.id))).last_payment_error?.decline_code, "generic_decline")
        assert.strictEqual((yield* payWith(url, "4242424242424242")).status, 303)
        const after = yield* call(() => stripe.paymentIntents.retrieve(pi.id))
        assert.strictEqual(after.status, "succeeded")
        assert.isNull(after.last_payment_error)
      }))

    it.effect("an unusable card number, expiry or CVC is a 400 with the form; a real card number is refused in test mode", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const { url } = yield* checkout(stripe)
        assert.include((yield* postPage(url, { card: "4242424242424241", exp: "12/34", cvc: "123" })).body, "Your card number is incorrect.")
        assert.strictEqual((yield* postPage(url, { card: "4242424242424242", exp: "13/34", cvc: "123" })).status, 400)
        assert.strictEqual((yield* postPage(url, { card: "4242424242424242", exp: "01/20", cvc: "123" })).status, 400)
        assert.strictEqual((yield* postPage(url, { card: "4242424242424242", exp: "12/34", cvc: "1" })).status, 400)
        const live = yield* payWith(url, "5555555555554444")
        assert.strictEqual(live.status, 402)
        assert.include(live.body, "test mode")
      }))

    it.effect("a card that asks for authentication answers the challenge page; approve pays, fail declines", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const { session, url } = yield* checkout(stripe)
        const challenge = yield* payWith(url, "4000002760003184")
        assert.strictEqual(challenge.status, 200)
        assert.include(challenge.body, "name=\"outcome\" value=\"approve\"")
        assert.include((yield* getPage(url)).body, "value=\"fail\"", "the page shows the challenge until it is answered")
        const pending = yield* call(() => stripe.checkout.sessions.retrieve(session.id, { expand: ["payment_intent"] }))
        assert.strictEqual((pending.payment_intent as Stripe.PaymentIntent).status, "requires_action")
        const failed = yield* postPage(url, { outcome: "fail" })
        assert.strictEqual(failed.status, 402)
        const pi = yield* call(() => stripe.paymentIntents.retrieve((pending.payment_intent as Stripe.PaymentIntent).id))
        assert.strictEqual(pi.status, "requires_payment_method")
        assert.strictEqual(pi.last_payment_error?.code, "payment_intent_authentication_failure")
        assert.strictEqual((yield* payWith(url, "4000002500003155")).status, 200)
        const approved = yield* postPage(url, { outcome: "approve" })
        assert.strictEqual(approved.status, 303)
        assert.strictEqual((yield* call(() => stripe.checkout.sessions.retrieve(session.id))).payment_status, "paid")
        const alreadySetUp = yield* checkout(stripe)
        assert.strictEqual((yield* payWith(alreadySetUp.url, "4000003800000446")).status, 200, "0446 asks on-session too")
      }))

    it.effect("off-session renewals with a saved card: 4242, 0446 and an off-session-saved 3155 succeed; 3184 needs authentication", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        for (const card of ["4242424242424242", "4000003800000446", "4000002500003155"]) {
          const { customer, paymentMethod } = yield* savedCard(stripe, card)
          const pi = yield* renew(stripe, customer.id, paymentMethod)
          assert.strictEqual(pi.status, "succeeded", card)
          assert.deepStrictEqual(pi.metadata, { subscriptionId: "s1" })
          assert.strictEqual((yield* call(() => stripe.charges.retrieve(pi.latest_charge as string))).status, "succeeded")
        }
        const always = yield* savedCard(stripe, "4000002760003184")
        const error = yield* Effect.flip(renew(stripe, always.customer.id, always.paymentMethod))
        assert.instanceOf(error, Stripe.errors.StripeCardError)
        assert.strictEqual(error.statusCode, 402)
        assert.strictEqual(error.code, "authentication_required")
        assert.strictEqual(error.decline_code, "authentication_required")
        assert.strictEqual(error.payment_intent?.status, "requires_payment_method")
        assert.strictEqual((yield* call(() => stripe.paymentIntents.retrieve(error.payment_intent!.id))).status, "requires_payment_method")
      }))

    it.effect("3155 saved only for on-session use needs authentication off-session", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const { customer, paymentMethod } = yield* savedCard(stripe, "4000002500003155", "on_session")
        const error = yield* Effect.flip(renew(stripe, customer.id, paymentMethod))
        assert.strictEqual(error.code, "authentication_required")
      }))

    it.effect("setup mode saves a card without charging it; a generic decline cannot be saved; insufficient funds fails at renewal", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const setup = (card: string) =>
          Effect.gen(function*() {
            const customer = yield* call(() => stripe.customers.create({}))
            const session = yield* call(() =>
              stripe.checkout.sessions.create({ mode: "setup", customer: customer.id, currency: "eur", success_url: "http://panel.test/card/ok" })
            )
            return { customer, session, answer: yield* payWith(session.url ?? "", card) }
          })
        const ok = yield* setup("4000000000009995")
        assert.strictEqual(ok.answer.status, 303)
        const done = yield* call(() => stripe.checkout.sessions.retrieve(ok.session.id, { expand: ["setup_intent"] }))
        assert.strictEqual(done.status, "complete")
        assert.strictEqual(done.payment_status, "no_payment_required")
        const si = done.setup_intent as Stripe.SetupIntent
        assert.strictEqual(si.status, "succeeded")
        assert.strictEqual(si.usage, "off_session")
        const error = yield* Effect.flip(renew(stripe, ok.customer.id, si.payment_method as string))
        assert.strictEqual(error.code, "card_declined")
        assert.strictEqual(error.decline_code, "insufficient_funds")
        assert.strictEqual((yield* setup("4000000000000002")).answer.status, 402)
        const strong = yield* setup("4000002760003184")
        assert.strictEqual(strong.answer.status, 200)
        assert.strictEqual((yield* postPage(strong.session.url ?? "", { outcome: "approve" })).status, 303)
      }))

    it.effect("confirming on-session through the API with a card that asks: requires_action, then its authentication page", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const { customer, paymentMethod } = yield* savedCard(stripe, "4000002760003184")
        const pi = yield* call(() =>
          stripe.paymentIntents.create({ amount: 900, currency: "eur", customer: customer.id, payment_method: paymentMethod, confirm: true, return_url: "http://panel.test/back" })
        )
        assert.strictEqual(pi.status, "requires_action")
        const url = pi.next_action?.redirect_to_url?.url ?? ""
        assert.strictEqual((yield* getPage(url)).status, 200)
        const answer = yield* postPage(url, { outcome: "approve" })
        assert.strictEqual(answer.status, 303)
        assert.strictEqual(answer.location, "http://panel.test/back")
        assert.strictEqual((yield* call(() => stripe.paymentIntents.retrieve(pi.id))).status, "succeeded")
      }))

    it.effect("a renewal key charges once: the replay answers the same payment intent, a declined one the same 402", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const { customer, paymentMethod } = yield* savedCard(stripe, "4242424242424242")
        const first = yield* renew(stripe, customer.id, paymentMethod, "renew:s1:2026-11-01")
        const second = yield* renew(stripe, customer.id, paymentMethod, "renew:s1:2026-11-01")
        assert.strictEqual(second.id, first.id)
        const always = yield* savedCard(stripe, "4000002760003184")
        const a = yield* Effect.flip(renew(stripe, always.customer.id, always.paymentMethod, "renew:s2:2026-11-01"))
        const b = yield* Effect.flip(renew(stripe, always.customer.id, always.paymentMethod, "renew:s2:2026-11-01"))
        assert.strictEqual(b.payment_intent?.id, a.payment_intent?.id)
      }))

    it.effect("refunds: partial then the rest, never more than was paid, and retrieved by id", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const { customer, paymentMethod } = yield* savedCard(stripe, "4242424242424242")
        const pi = yield* renew(stripe, customer.id, paymentMethod)
        const tooMuch = yield* Effect.flip(call(() => stripe.refunds.create({ payment_intent: pi.id, amount: 1501 })))
        assert.strictEqual(tooMuch.code, "amount_too_large")
        const part = yield* call(() => stripe.refunds.create({ payment_intent: pi.id, amount: 500 }, { idempotencyKey: "refund:order-1:a" }))
        assert.match(part.id, /^re_/)
        assert.strictEqual(part.amount, 500)
        assert.strictEqual(part.status, "succeeded")
        assert.deepStrictEqual(yield* call(() => stripe.refunds.retrieve(part.id)), part)
        const rest = yield* call(() => stripe.refunds.create({ payment_intent: pi.id }))
        assert.strictEqual(rest.amount, 1000)
        const charge = yield* call(() => stripe.charges.retrieve(pi.latest_charge as string))
        assert.strictEqual(charge.amount_refunded, 1500)
        assert.isTrue(charge.refunded)
        const again = yield* Effect.flip(call(() => stripe.refunds.create({ payment_intent: pi.id, amount: 1 })))
        assert.strictEqual(again.code, "charge_already_refunded")
        const refunded = yield* call(() => stripe.events.list({ type: "charge.refunded", limit: 2 }))
        assert.deepStrictEqual(refunded.data.map((e) => (e.data.object as Stripe.Charge).amount_refunded), [1500, 500])
      }))

    it.effect("a paid charge disputed through the control: a dispute needing a response and charge.dispute.created", () =>
      Effect.gen(function*() {
        const sandbox = yield* SandboxStripeInstance
        const stripe = sdk(sandbox)
        const { customer, paymentMethod } = yield* savedCard(stripe, "4242424242424242")
        const pi = yield* renew(stripe, customer.id, paymentMethod)
        const id = yield* sandbox.control.disputeCharge(pi.id)
        const dispute = yield* call(() => stripe.disputes.retrieve(id))
        assert.match(dispute.id, /^dp_/)
        assert.strictEqual(dispute.charge, pi.latest_charge)
        assert.strictEqual(dispute.amount, 1500)
        assert.strictEqual(dispute.status, "needs_response")
        assert.isTrue((yield* call(() => stripe.charges.retrieve(pi.latest_charge as string))).disputed)
        const events = yield* call(() => stripe.events.list({ type: "charge.dispute.created", limit: 1 }))
        assert.strictEqual((events.data[0]?.data.object as Stripe.Dispute).id, id)
      }))
  })
})
