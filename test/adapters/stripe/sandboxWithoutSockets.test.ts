// The sandbox Stripe without sockets (the fake is the simulator without sockets, DESIGN.md §7): the official SDK over
// the simulation's `fetch` answers as the loopback server does, checkout page included.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import Stripe from "stripe"
import { stripeSimulation } from "../../../adapters/stripe/sandbox/SandboxStripe.ts"
import { call, checkout, payWith } from "./support.ts"

describe("sandbox Stripe without sockets", () => {
  it.live("the SDK pays a checkout session and charges the saved card off-session through the simulation's fetch", () =>
    Effect.scoped(Effect.gen(function*() {
      const simulation = yield* stripeSimulation()
      const stripe = new Stripe(simulation.secretKey, { httpClient: Stripe.createFetchHttpClient(simulation.fetch), maxNetworkRetries: 0 })
      const { customer, session } = yield* checkout(stripe)
      const page = yield* Effect.promise(() => simulation.fetch(session.url ?? ""))
      assert.strictEqual(page.status, 200)
      const paid = yield* payWith(session.url ?? "", "4242424242424242", simulation.fetch)
      assert.strictEqual(paid.status, 303)
      assert.strictEqual(paid.location, `http://panel.test/orders/order-1?session=${session.id}`)
      const done = yield* call(() => stripe.checkout.sessions.retrieve(session.id, { expand: ["payment_intent"] }))
      const pm = (done.payment_intent as Stripe.PaymentIntent).payment_method as string
      const renewal = yield* call(() =>
        stripe.paymentIntents.create({ amount: 1200, currency: "eur", customer: customer.id, payment_method: pm, off_session: true, confirm: true })
      )
      assert.strictEqual(renewal.status, "succeeded")
      const events = yield* simulation.control.events
      assert.includeMembers(events.map((e) => e.type), ["checkout.session.completed", "payment_intent.succeeded"])
    })))

  it.live("a hanging fault without sockets: the SDK's timeout still ends the call", () =>
    Effect.scoped(Effect.gen(function*() {
      const simulation = yield* stripeSimulation()
      const stripe = new Stripe(simulation.secretKey, { httpClient: Stripe.createFetchHttpClient(simulation.fetch), maxNetworkRetries: 0, timeout: 200 })
      yield* simulation.control.hangNextApiCalls({ times: 1 })
      const error = yield* Effect.flip(call(() => stripe.customers.create({})))
      assert.instanceOf(error, Stripe.errors.StripeConnectionError)
      assert.match((yield* call(() => stripe.customers.create({}))).id, /^cus_/)
    })))
})
