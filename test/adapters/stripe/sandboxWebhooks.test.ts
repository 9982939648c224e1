// The sandbox Stripe's webhooks, received by a loopback endpoint and verified with the SDK's `constructEvent` (the
// path the platform's webhook route takes), retried until 2xx, and the faults the control arms: duplicate, reordered
// and delayed deliveries, 5xx and hanging API calls. Delays are configured short; nothing waits on production timings.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import Stripe from "stripe"
import { sandboxStripe, type SandboxStripeOptions } from "../../../adapters/stripe/sandbox/SandboxStripe.ts"
import { call, lineItem, payWith, postPage, receiver, sdk, verified } from "./support.ts"

const fast = { initialRetryDelayMs: 20, maxRetryDelayMs: 100, attemptTimeoutMs: 2000 } satisfies SandboxStripeOptions["webhooks"]

const setUp = (enabledEvents?: ReadonlyArray<string>, webhooks: SandboxStripeOptions["webhooks"] = fast) =>
  Effect.gen(function*() {
    const endpoint = yield* receiver
    const sandbox = yield* sandboxStripe({ webhook: { url: endpoint.url, ...(enabledEvents === undefined ? {} : { enabledEvents }) }, webhooks })
    return { endpoint, sandbox, stripe: sdk(sandbox), secret: sandbox.webhookSecret ?? "" }
  })

const customerIds = (events: ReadonlyArray<Stripe.Event>) => events.map((e) => (e.data.object as Stripe.Customer).id)

describe("sandbox Stripe webhooks", () => {
  it.live("each event the endpoint listens to arrives signed: constructEvent verifies it, a wrong secret or one changed byte does not", () =>
    Effect.scoped(Effect.gen(function*() {
      const { endpoint, sandbox, secret, stripe } = yield* setUp([
        "checkout.session.completed",
        "checkout.session.expired",
        "payment_intent.succeeded",
        "payment_intent.payment_failed",
        "charge.refunded",
        "setup_intent.succeeded"
      ])
      const customer = yield* call(() => stripe.customers.create({}))
      const session = yield* call(() =>
        stripe.checkout.sessions.create({
          mode: "payment",
          customer: customer.id,
          client_reference_id: "order-7",
          line_items: [lineItem("Game server M", 900)],
          payment_intent_data: { setup_future_usage: "off_session" },
          success_url: "http://panel.test/ok"
        })
      )
      assert.strictEqual((yield* payWith(session.url ?? "", "4000000000000002")).status, 402)
      assert.strictEqual((yield* payWith(session.url ?? "", "4242424242424242")).status, 303)
      const paid = yield* call(() => stripe.checkout.sessions.retrieve(session.id))
      yield* call(() => stripe.refunds.create({ payment_intent: paid.payment_intent as string, amount: 300 }))
      const setup = yield* call(() => stripe.checkout.sessions.create({ mode: "setup", customer: customer.id, success_url: "http://panel.test/ok" }))
      assert.strictEqual((yield* payWith(setup.url ?? "", "4242424242424242")).status, 303)
      const abandoned = yield* call(() => stripe.checkout.sessions.create({ mode: "payment", line_items: [lineItem("x", 500)], success_url: "http://x" }))
      yield* call(() => stripe.checkout.sessions.expire(abandoned.id))
      yield* sandbox.control.awaitDeliveries

      // At least once: a slow answer may bring an event again, so the receiver counts each event id once.
      const events = [...new Map(verified(endpoint.received, secret).map((e) => [e.id, e])).values()]
      assert.deepStrictEqual(events.map((e) => e.type).sort(), [
        "charge.refunded",
        "checkout.session.completed",
        "checkout.session.completed",
        "checkout.session.expired",
        "payment_intent.payment_failed",
        "payment_intent.succeeded",
        "setup_intent.succeeded"
      ])
      const completed = events.filter((e) => e.type === "checkout.session.completed").map((e) => e.data.object as Stripe.Checkout.Session)
      const payment = completed.find((s) => s.mode === "payment")
      assert.strictEqual(payment?.payment_status, "paid")
      assert.strictEqual(payment?.client_reference_id, "order-7")
      assert.strictEqual(completed.find((s) => s.mode === "setup")?.payment_status, "no_payment_required")
      const failed = events.find((e) => e.type === "payment_intent.payment_failed")?.data.object as Stripe.PaymentIntent
      assert.strictEqual(failed.last_payment_error?.decline_code, "generic_decline")
      assert.strictEqual((events.find((e) => e.type === "charge.refunded")?.data.object as Stripe.Charge).amount_refunded, 300)

      const first = endpoint.received[0]!
      const header = first.headers["stripe-signature"] ?? ""
      assert.match(String(header), /^t=\d+,v1=[0-9a-f]{64}$/)
      assert.throws(() => Stripe.webhooks.constructEvent(first.body, header, "whsec_not_the_secret"), Stripe.errors.StripeSignatureVerificationError)
      const at = first.body.indexOf("evt_") + 4
      const altered = `${first.body.slice(0, at)}${first.body[at] === "A" ? "B" : "A"}${first.body.slice(at + 1)}`
      assert.strictEqual(altered.length, first.body.length)
      assert.throws(() => Stripe.webhooks.constructEvent(altered, header, secret), Stripe.errors.StripeSignatureVerificationError)
      const pending = yield* call(() => stripe.events.retrieve(events[0]!.id))
      assert.strictEqual(pending.pending_webhooks, 0)
    })))

  it.live("an endpoint answering 5xx, then not answering at all, gets the event again until it answers 2xx", () =>
    Effect.scoped(Effect.gen(function*() {
      const { endpoint, sandbox, secret, stripe } = yield* setUp(["customer.created"], { ...fast, attemptTimeoutMs: 300 })
      endpoint.answers.push(500, 503, "hang")
      const customer = yield* call(() => stripe.customers.create({}))
      yield* sandbox.control.awaitDeliveries
      const events = verified(endpoint.received, secret)
      assert.deepStrictEqual(new Set(customerIds(events)), new Set([customer.id]))
      assert.strictEqual(new Set(events.map((e) => e.id)).size, 1)
      const attempts = yield* sandbox.control.deliveries
      assert.strictEqual(events.length, attempts.length)
      assert.deepStrictEqual(attempts.slice(0, 3).map((a) => [a.attempt, a.outcome]), [[1, 500], [2, 503], [3, "timeout"]])
      assert.strictEqual(attempts.at(-1)?.outcome, 200, "retried until a 2xx, then no more")
      // Backoff from 20 ms, doubling: 20, 40, 80 ms between the end of one attempt and the next.
      const gaps = attempts.slice(1).map((a, i) => a.at - attempts[i]!.at)
      assert.isAtLeast(gaps[0]!, 19)
      assert.isAtLeast(gaps[2]!, 79)
    })))

  it.live("duplicate delivery: the next events each arrive twice, or as many times as asked", () =>
    Effect.scoped(Effect.gen(function*() {
      const { endpoint, sandbox, secret, stripe } = yield* setUp(["customer.created"])
      yield* sandbox.control.duplicateNextEvents(2)
      yield* sandbox.control.duplicateNextEvents(1, 5)
      const a = yield* call(() => stripe.customers.create({}))
      const b = yield* call(() => stripe.customers.create({}))
      const c = yield* call(() => stripe.customers.create({}))
      const d = yield* call(() => stripe.customers.create({}))
      yield* sandbox.control.awaitDeliveries
      const ids = customerIds(verified(endpoint.received, secret))
      assert.deepStrictEqual([a.id, b.id, c.id, d.id].map((id) => ids.filter((x) => x === id).length), [2, 2, 5, 1])
    })))

  it.live("out-of-order delivery: the next events are held and arrive newest first", () =>
    Effect.scoped(Effect.gen(function*() {
      const { endpoint, sandbox, secret, stripe } = yield* setUp(["customer.created"])
      yield* sandbox.control.reorderNextEvents(3)
      const made = [
        yield* call(() => stripe.customers.create({})),
        yield* call(() => stripe.customers.create({})),
        yield* call(() => stripe.customers.create({}))
      ]
      yield* sandbox.control.awaitDeliveries
      assert.deepStrictEqual(customerIds(verified(endpoint.received, secret)), made.map((c) => c.id).reverse())
      const later = yield* call(() => stripe.customers.create({}))
      yield* sandbox.control.awaitDeliveries
      assert.strictEqual(customerIds(verified(endpoint.received, secret)).at(-1), later.id)
    })))

  it.live("both at once: each of the next events delivered 5 times, newest first", () =>
    Effect.scoped(Effect.gen(function*() {
      const { endpoint, sandbox, secret, stripe } = yield* setUp(["customer.created"])
      yield* sandbox.control.duplicateNextEvents(3, 5)
      yield* sandbox.control.reorderNextEvents(3)
      const made = [
        yield* call(() => stripe.customers.create({})),
        yield* call(() => stripe.customers.create({})),
        yield* call(() => stripe.customers.create({}))
      ]
      yield* sandbox.control.awaitDeliveries
      const [a, b, c] = made.map((customer) => customer.id)
      assert.deepStrictEqual(customerIds(verified(endpoint.received, secret)), [c, c, c, c, c, b, b, b, b, b, a, a, a, a, a])
    })))

  it.live("delayed delivery: the next event arrives only after the delay", () =>
    Effect.scoped(Effect.gen(function*() {
      const { endpoint, sandbox, stripe } = yield* setUp(["customer.created"])
      yield* sandbox.control.delayNextEvents(1, 400)
      const started = Date.now()
      yield* call(() => stripe.customers.create({}))
      yield* Effect.sleep("150 millis")
      assert.strictEqual(endpoint.received.length, 0)
      yield* sandbox.control.awaitDeliveries
      assert.strictEqual(endpoint.received.length, 1)
      assert.isAtLeast(Date.now() - started, 400)
    })))

  it.live("an endpoint registered through the SDK gets the events with the secret it was given", () =>
    Effect.scoped(Effect.gen(function*() {
      const endpoint = yield* receiver
      const sandbox = yield* sandboxStripe({ webhooks: fast })
      const stripe = sdk(sandbox)
      const registered = yield* call(() => stripe.webhookEndpoints.create({ url: endpoint.url, enabled_events: ["customer.created"] }))
      const customer = yield* call(() => stripe.customers.create({}))
      yield* sandbox.control.awaitDeliveries
      assert.deepStrictEqual(customerIds(verified(endpoint.received, registered.secret ?? "")), [customer.id])
    })))

  it.live("5xx from the API for the next calls: the SDK sees a StripeAPIError, or succeeds once its own retries outlast them", () =>
    Effect.scoped(Effect.gen(function*() {
      const sandbox = yield* sandboxStripe({ webhooks: fast })
      const once = sdk(sandbox)
      yield* sandbox.control.failNextApiCalls({ times: 2, status: 503 })
      const first = yield* Effect.flip(call(() => once.customers.create({})))
      assert.instanceOf(first, Stripe.errors.StripeAPIError)
      assert.strictEqual(first.statusCode, 503)
      yield* Effect.flip(call(() => once.customers.create({})))
      assert.match((yield* call(() => once.customers.create({}))).id, /^cus_/)
      yield* sandbox.control.failNextApiCalls({ times: 2, path: /^\/v1\/customers$/ })
      const retrying = sdk(sandbox, { maxNetworkRetries: 2 })
      const made = yield* call(() => retrying.customers.create({ metadata: { n: "retried" } }))
      const all = yield* call(() => once.events.list({ type: "customer.created", limit: 100 }))
      assert.strictEqual(all.data.filter((e) => (e.data.object as Stripe.Customer).metadata["n"] === "retried").length, 1)
      assert.strictEqual((yield* call(() => once.customers.retrieve(made.id))).id, made.id)
    })))

  it.live("a hanging API call: the SDK's timeout fires, the next call is answered", () =>
    Effect.scoped(Effect.gen(function*() {
      const sandbox = yield* sandboxStripe({ webhooks: fast })
      const stripe = sdk(sandbox, { timeout: 300 })
      yield* sandbox.control.hangNextApiCalls({ times: 1 })
      const error = yield* Effect.flip(call(() => stripe.customers.create({})))
      assert.instanceOf(error, Stripe.errors.StripeConnectionError)
      assert.match((yield* call(() => stripe.customers.create({}))).id, /^cus_/)
    })))

  it.live("a challenge failed on the page is a payment_intent.payment_failed event", () =>
    Effect.scoped(Effect.gen(function*() {
      const { endpoint, sandbox, secret, stripe } = yield* setUp(["payment_intent.payment_failed", "payment_intent.requires_action"])
      const session = yield* call(() => stripe.checkout.sessions.create({ mode: "payment", line_items: [lineItem("x", 500)], success_url: "http://x" }))
      assert.strictEqual((yield* payWith(session.url ?? "", "4000002760003184")).status, 200)
      assert.strictEqual((yield* postPage(session.url ?? "", { outcome: "fail" })).status, 402)
      yield* sandbox.control.awaitDeliveries
      const events = verified(endpoint.received, secret)
      assert.deepStrictEqual(events.map((e) => e.type).sort(), ["payment_intent.payment_failed", "payment_intent.requires_action"])
    })))

  it.live("100 checkouts paid at once: 100 sessions paid, one charge each, 100 completions delivered", () =>
    Effect.scoped(Effect.gen(function*() {
      const { endpoint, sandbox, secret, stripe } = yield* setUp(["checkout.session.completed"])
      const orders = Array.from({ length: 100 }, (_, i) => `order-${i}`)
      const sessions = yield* Effect.forEach(orders, (order) =>
        Effect.gen(function*() {
          const session = yield* call(() =>
            stripe.checkout.sessions.create(
              { mode: "payment", client_reference_id: order, line_items: [lineItem("VPS S", 1200)], success_url: "http://panel.test/ok" },
              { idempotencyKey: `checkout:${order}` }
            )
          )
          assert.strictEqual((yield* payWith(session.url ?? "", "4242424242424242")).status, 303)
          return session
        }), { concurrency: "unbounded" })
      yield* sandbox.control.awaitDeliveries
      const completed = verified(endpoint.received, secret).map((e) => e.data.object as Stripe.Checkout.Session)
      assert.deepStrictEqual(new Set(completed.map((s) => s.client_reference_id)), new Set(orders))
      assert.isTrue(completed.every((s) => s.payment_status === "paid"))
      const charges = (yield* sandbox.control.events).filter((e) => e.type === "charge.succeeded")
      assert.strictEqual(charges.length, 100)
      assert.strictEqual(new Set(sessions.map((s) => s.id)).size, 100)
    })))

  it.live("a rolled secret: deliveries carry a signature for the new and the still-valid previous secret, then the new one only", () =>
    Effect.scoped(Effect.gen(function*() {
      const { endpoint, sandbox, secret, stripe } = yield* setUp(["customer.created"])
      const rolled = yield* sandbox.control.rollWebhookSecret(endpoint.url)
      assert.notStrictEqual(rolled, secret)
      yield* call(() => stripe.customers.create({}))
      yield* sandbox.control.awaitDeliveries
      assert.strictEqual(verified(endpoint.received, rolled).length, 1)
      assert.strictEqual(verified(endpoint.received, secret).length, 1, "the previous secret still verifies during the roll")
      const again = yield* sandbox.control.rollWebhookSecret(endpoint.url, { previousValidForMs: 0 })
      endpoint.received.length = 0
      yield* call(() => stripe.customers.create({}))
      yield* sandbox.control.awaitDeliveries
      assert.strictEqual(verified(endpoint.received, again).length, 1)
      assert.throws(() => verified(endpoint.received, rolled), Stripe.errors.StripeSignatureVerificationError)
      assert.strictEqual(String(endpoint.received[0]?.headers["stripe-signature"]).split(",").length, 3, "t and the two still-valid secrets' v1")
    })))
})
