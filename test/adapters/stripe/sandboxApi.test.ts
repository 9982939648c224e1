// The sandbox Stripe's REST subset, driven only through the official SDK: customers, checkout sessions, payment
// intents' refusals, events, webhook endpoints, the secret key check, Stripe's parameter errors and Idempotency-Key.
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import Stripe from "stripe"
import { layerSandboxStripe, SandboxStripeInstance, sandboxStripe } from "../../../adapters/stripe/sandbox/SandboxStripe.ts"
import { call, getPage, lineItem, sdk } from "./support.ts"

const client = Effect.map(SandboxStripeInstance, (sandbox) => sdk(sandbox))

const paymentSession = (stripe: Stripe, customer: string, orderId: string, options: Stripe.RequestOptions = {}) =>
  call(() =>
    stripe.checkout.sessions.create({
      mode: "payment",
      customer,
      client_reference_id: orderId,
      line_items: [lineItem("VPS S, first month", 1200), lineItem("Backup option", 300)],
      payment_intent_data: { setup_future_usage: "off_session", metadata: { orderId } },
      success_url: "http://panel.test/orders/ok?session={CHECKOUT_SESSION_ID}",
      cancel_url: "http://panel.test/orders/cancelled"
    }, options)
  )

describe("sandbox Stripe API", () => {
  layer(layerSandboxStripe(), { excludeTestServices: true })("through the SDK", (it) => {
    it.effect("a customer is created with metadata, retrieved, updated (metadata merged, an empty value unsets), and found by e-mail", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const created = yield* call(() => stripe.customers.create({ email: "ann@example.fr", name: "Ann", metadata: { userId: "u1", plan: "s" } }))
        assert.match(created.id, /^cus_/)
        assert.strictEqual(created.object, "customer")
        assert.isFalse(created.livemode)
        const got = yield* call(() => stripe.customers.retrieve(created.id))
        assert.deepStrictEqual(got, created)
        const updated = yield* call(() => stripe.customers.update(created.id, { name: "Ann B", metadata: { plan: "", tier: "gold" } }))
        assert.strictEqual(updated.name, "Ann B")
        assert.strictEqual(updated.email, "ann@example.fr")
        assert.deepStrictEqual(updated.metadata, { userId: "u1", tier: "gold" })
        const byEmail = yield* call(() => stripe.customers.list({ email: "ann@example.fr" }))
        assert.deepStrictEqual(byEmail.data.map((c) => c.id), [created.id])
      }))

    it.effect("an unknown id is a 404 resource_missing naming the object, as Stripe words it", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const error = yield* Effect.flip(call(() => stripe.customers.retrieve("cus_nope")))
        assert.instanceOf(error, Stripe.errors.StripeInvalidRequestError)
        assert.strictEqual(error.statusCode, 404)
        assert.strictEqual(error.code, "resource_missing")
        assert.strictEqual(error.message, "No such customer: 'cus_nope'")
        const pm = yield* Effect.flip(call(() => stripe.paymentMethods.retrieve("pm_nope")))
        assert.strictEqual(pm.code, "resource_missing")
      }))

    it.effect("a payment-mode session totals its line items, keeps its references, and offers a hosted page", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const customer = yield* call(() => stripe.customers.create({ metadata: { userId: "u2" } }))
        const session = yield* paymentSession(stripe, customer.id, "order-1")
        assert.match(session.id, /^cs_test_/)
        assert.strictEqual(session.object, "checkout.session")
        assert.strictEqual(session.mode, "payment")
        assert.strictEqual(session.status, "open")
        assert.strictEqual(session.payment_status, "unpaid")
        assert.strictEqual(session.amount_total, 1500)
        assert.strictEqual(session.currency, "eur")
        assert.strictEqual(session.customer, customer.id)
        assert.strictEqual(session.client_reference_id, "order-1")
        assert.isNull(session.payment_intent)
        const now = Math.floor(Date.now() / 1000)
        assert.approximately(session.expires_at, now + 24 * 3600, 5)
        const page = yield* getPage(session.url ?? "")
        assert.strictEqual(page.status, 200)
        assert.include(page.body, "name=\"card\"")
        const items = yield* call(() => stripe.checkout.sessions.listLineItems(session.id))
        assert.deepStrictEqual(items.data.map((i) => [i.description, i.amount_total, i.quantity]), [["VPS S, first month", 1200, 1], ["Backup option", 300, 1]])
        const expanded = yield* call(() => stripe.checkout.sessions.retrieve(session.id, { expand: ["line_items"] }))
        assert.deepStrictEqual(expanded.line_items?.data, items.data)
        const listed = yield* call(() => stripe.checkout.sessions.list({ customer: customer.id }))
        assert.deepStrictEqual(listed.data.map((s) => s.id), [session.id])
      }))

    it.effect("a setup-mode session saves a card for a customer and charges nothing", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const customer = yield* call(() => stripe.customers.create({}))
        const session = yield* call(() =>
          stripe.checkout.sessions.create({ mode: "setup", customer: customer.id, currency: "eur", success_url: "http://panel.test/card/ok" })
        )
        assert.strictEqual(session.mode, "setup")
        assert.strictEqual(session.payment_status, "no_payment_required")
        assert.isNull(session.amount_total)
      }))

    it.effect("expire ends an open session once, emits checkout.session.expired, and refuses a second time", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const customer = yield* call(() => stripe.customers.create({}))
        const session = yield* paymentSession(stripe, customer.id, "order-expire")
        const expired = yield* call(() => stripe.checkout.sessions.expire(session.id))
        assert.strictEqual(expired.status, "expired")
        assert.isNull(expired.url)
        const again = yield* Effect.flip(call(() => stripe.checkout.sessions.expire(session.id)))
        assert.strictEqual(again.statusCode, 400)
        const events = yield* call(() => stripe.events.list({ type: "checkout.session.expired" }))
        const event = events.data.find((e) => (e.data.object as Stripe.Checkout.Session).id === session.id)
        assert.isDefined(event)
        assert.strictEqual((yield* call(() => stripe.events.retrieve(event!.id))).type, "checkout.session.expired")
        const page = yield* getPage(session.url ?? "")
        assert.strictEqual(page.status, 410)
      }))

    it.effect("a session expires by itself when the sandbox's clock passes its expires_at", () =>
      Effect.gen(function*() {
        const sandbox = yield* SandboxStripeInstance
        const stripe = sdk(sandbox)
        const now = Math.floor(Date.now() / 1000)
        const session = yield* call(() =>
          stripe.checkout.sessions.create({ mode: "payment", line_items: [lineItem("x", 500)], expires_at: now + 3600, success_url: "http://panel.test/ok" })
        )
        yield* sandbox.control.advanceTime(3601)
        assert.strictEqual((yield* call(() => stripe.checkout.sessions.retrieve(session.id))).status, "expired")
        const out = yield* Effect.flip(call(() =>
          stripe.checkout.sessions.create({ mode: "payment", line_items: [lineItem("x", 500)], expires_at: now + 60, success_url: "http://panel.test/ok" })
        ))
        assert.strictEqual(out.param, "expires_at")
      }))

    it.effect("parameters are checked as Stripe checks them: missing, unknown, not an integer, another mode's field", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const missing = yield* Effect.flip(call(() =>
          stripe.checkout.sessions.create({ mode: "payment", line_items: [{ quantity: 1, price_data: { unit_amount: 100, product_data: { name: "x" } } as never }] })
        ))
        assert.strictEqual(missing.code, "parameter_missing")
        assert.strictEqual(missing.param, "line_items[0][price_data][currency]")
        const unknown = yield* Effect.flip(call(() => stripe.customers.create({ nickname: "x" } as never)))
        assert.strictEqual(unknown.code, "parameter_unknown")
        assert.strictEqual(unknown.param, "nickname")
        const notInt = yield* Effect.flip(call(() => stripe.paymentIntents.create({ amount: 12.5, currency: "eur" })))
        assert.strictEqual(notInt.code, "parameter_invalid_integer")
        const noItems = yield* Effect.flip(call(() => stripe.checkout.sessions.create({ mode: "payment", success_url: "http://x" })))
        assert.strictEqual(noItems.param, "line_items")
        const offSessionAlone = yield* Effect.flip(call(() => stripe.paymentIntents.create({ amount: 500, currency: "eur", off_session: true })))
        assert.strictEqual(offSessionAlone.param, "off_session")
      }))

    it.effect("a payment intent without a payment method waits for one; confirming without one is refused", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const customer = yield* call(() => stripe.customers.create({}))
        const pi = yield* call(() => stripe.paymentIntents.create({ amount: 1500, currency: "eur", customer: customer.id, metadata: { invoiceId: "i1" } }))
        assert.match(pi.id, /^pi_/)
        assert.strictEqual(pi.status, "requires_payment_method")
        assert.match(pi.client_secret ?? "", new RegExp(`^${pi.id}_secret_`))
        assert.deepStrictEqual(pi.metadata, { invoiceId: "i1" })
        assert.deepStrictEqual(yield* call(() => stripe.paymentIntents.retrieve(pi.id)), pi)
        const refused = yield* Effect.flip(call(() => stripe.paymentIntents.create({ amount: 1500, currency: "eur", customer: customer.id, confirm: true })))
        assert.strictEqual(refused.code, "payment_intent_unexpected_state")
        const refund = yield* Effect.flip(call(() => stripe.refunds.create({ payment_intent: pi.id })))
        assert.strictEqual(refund.statusCode, 400)
      }))

    it.effect("a wrong or missing secret key is a 401", () =>
      Effect.gen(function*() {
        const sandbox = yield* SandboxStripeInstance
        const wrong = new Stripe("sk_test_wrongwrongwrong1234", { host: sandbox.host, port: sandbox.port, protocol: "http", maxNetworkRetries: 0 })
        const error = yield* Effect.flip(call(() => wrong.customers.create({})))
        assert.instanceOf(error, Stripe.errors.StripeAuthenticationError)
        assert.strictEqual(error.statusCode, 401)
        assert.notInclude(error.message, "wrongwrongwrong")
        const bare = yield* Effect.promise(() => fetch(`${sandbox.baseUrl}/v1/customers`, { method: "POST" }))
        assert.strictEqual(bare.status, 401)
      }))

    it.effect("an idempotency key replays the first answer; the same key with other parameters is an idempotency_error", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const customer = yield* call(() => stripe.customers.create({}))
        const first = yield* paymentSession(stripe, customer.id, "order-idem", { idempotencyKey: "checkout:order-idem" })
        const replay = yield* paymentSession(stripe, customer.id, "order-idem", { idempotencyKey: "checkout:order-idem" })
        assert.deepStrictEqual(replay, first)
        assert.strictEqual(replay.lastResponse.headers["idempotent-replayed"], "true")
        const listed = yield* call(() => stripe.checkout.sessions.list({ customer: customer.id }))
        assert.strictEqual(listed.data.length, 1)
        const conflict = yield* Effect.flip(paymentSession(stripe, customer.id, "order-other", { idempotencyKey: "checkout:order-idem" }))
        assert.instanceOf(conflict, Stripe.errors.StripeIdempotencyError)
        assert.strictEqual(conflict.statusCode, 400)
        assert.strictEqual(conflict.type, "StripeIdempotencyError")
        // A refusal before the endpoint ran is not kept: the key still works with valid parameters.
        yield* Effect.flip(call(() => stripe.customers.create({ nickname: "x" } as never, { idempotencyKey: "customer:u9" })))
        const made = yield* call(() => stripe.customers.create({ metadata: { userId: "u9" } }, { idempotencyKey: "customer:u9" }))
        assert.match(made.id, /^cus_/)
      }))

    it.effect("concurrent requests under one key create one object", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const made = yield* Effect.all(
          Array.from({ length: 10 }, () => call(() => stripe.customers.create({ metadata: { userId: "u-conc" } }, { idempotencyKey: "customer:u-conc" }))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(new Set(made.map((c) => c.id)).size, 1)
      }))

    it.effect("events are listed newest first with cursors, by type, and retrieved by id", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const a = yield* call(() => stripe.customers.create({ metadata: { n: "a" } }))
        const b = yield* call(() => stripe.customers.create({ metadata: { n: "b" } }))
        const page1 = yield* call(() => stripe.events.list({ type: "customer.created", limit: 1 }))
        assert.strictEqual(page1.object, "list")
        assert.isTrue(page1.has_more)
        assert.strictEqual((page1.data[0]!.data.object as Stripe.Customer).id, b.id)
        const page2 = yield* call(() => stripe.events.list({ type: "customer.created", limit: 1, starting_after: page1.data[0]!.id }))
        assert.strictEqual((page2.data[0]!.data.object as Stripe.Customer).id, a.id)
        const event = yield* call(() => stripe.events.retrieve(page1.data[0]!.id))
        assert.match(event.id, /^evt_/)
        assert.strictEqual(event.api_version, Stripe.API_VERSION)
      }))

    it.effect("a webhook endpoint is created with its events and a whsec_ secret shown once", () =>
      Effect.gen(function*() {
        const stripe = yield* client
        const endpoint = yield* call(() =>
          stripe.webhookEndpoints.create({ url: "http://127.0.0.1:9/hook", enabled_events: ["checkout.session.completed", "charge.refunded"] })
        )
        assert.match(endpoint.id, /^we_/)
        assert.match(endpoint.secret ?? "", /^whsec_/)
        assert.deepStrictEqual(endpoint.enabled_events, ["checkout.session.completed", "charge.refunded"])
        const again = yield* call(() => stripe.webhookEndpoints.retrieve(endpoint.id))
        assert.isUndefined(again.secret)
        yield* call(() => stripe.webhookEndpoints.del(endpoint.id))
      }))
  })
})

describe("sandbox Stripe's memory", () => {
  it.live("an idempotency key is forgotten after 24 hours and an event after 30 days, as Stripe forgets them", () =>
    Effect.scoped(Effect.gen(function*() {
      const sandbox = yield* sandboxStripe()
      const stripe = sdk(sandbox)
      const first = yield* call(() => stripe.customers.create({ metadata: { userId: "u1" } }, { idempotencyKey: "customer:u1" }))
      yield* sandbox.control.advanceTime(23 * 3600)
      assert.strictEqual((yield* call(() => stripe.customers.create({ metadata: { userId: "u1" } }, { idempotencyKey: "customer:u1" }))).id, first.id)
      yield* sandbox.control.advanceTime(3600)
      const later = yield* call(() => stripe.customers.create({ metadata: { userId: "u2" } }, { idempotencyKey: "customer:u1" }))
      assert.notStrictEqual(later.id, first.id)
      assert.strictEqual((yield* call(() => stripe.events.list())).data.length, 2)
      yield* sandbox.control.advanceTime(30 * 24 * 3600)
      assert.strictEqual((yield* call(() => stripe.events.list())).data.length, 0)
      assert.deepStrictEqual((yield* call(() => stripe.customers.retrieve(first.id))).id, first.id)
    })))
})

