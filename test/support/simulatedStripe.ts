// Payments for domain tests: the REAL Stripe gateway over the sandbox Stripe's simulation (no sockets: its `fetch`),
// and paying an order as its customer and Stripe would: the card posted on the order's hosted page, then the
// simulation's `checkout.session.*` event for that order signed with the SDK's own scheme and handed to billing's
// webhook receiver (the real verification path), as the webhook route does.
import { Context, Effect, Layer, Option, Redacted } from "effect"
import Stripe from "stripe"
import * as MemoryPaymentCustomers from "../../adapters/fake/MemoryPaymentCustomers.ts"
import * as MemoryPaymentNotifications from "../../adapters/fake/MemoryPaymentNotifications.ts"
import { stripeSimulation, type StripeSimulation } from "../../adapters/stripe/sandbox/SandboxStripe.ts"
import * as StripePaymentGateway from "../../adapters/stripe/StripePaymentGateway.ts"
import { placeOrder } from "../../domain/billing/Ordering.ts"
import { receivePaymentNotification } from "../../domain/billing/paymentNotifications.ts"
import { Orders } from "../../ports/Orders.ts"
import { billedCustomer } from "./invoicing.ts"

export const WEBHOOK_SECRET = "whsec_domain_tests_simulated_stripe"

/** The card numbers of reference/stripe.md § Test cards that tests use. */
export const Cards = {
  success: "4242424242424242",
  declined: "4000000000000002",
  insufficientFunds: "4000000000009995",
  authenticate: "4000002760003184"
} as const

export class SimulatedStripe extends Context.Service<SimulatedStripe, StripeSimulation>()("zh/test/SimulatedStripe") {}

/** The simulation, the gateway on it, and the in-memory customers and notifications billing keeps. */
// Its expiry sweep runs on the test's clock: hourly, so a test moving the clock by weeks does not run it every second
// (a page asked for expires what is due anyway).
export const simulatedStripeLayer = Layer.effect(SimulatedStripe, stripeSimulation({ expirySweepMs: 3_600_000 })).pipe((simulation) =>
  Layer.mergeAll(
    Layer.unwrap(Effect.map(SimulatedStripe, (s) =>
      StripePaymentGateway.layer({
        credentials: Effect.succeed(Option.some({ secretKey: Redacted.make(s.secretKey), webhookSecrets: [Redacted.make(WEBHOOK_SECRET)] })),
        httpClient: Stripe.createFetchHttpClient(s.fetch),
        maxNetworkRetries: 0
      }))),
    MemoryPaymentCustomers.layer,
    MemoryPaymentNotifications.layer
  ).pipe(Layer.provideMerge(simulation))
)

/** Signs `event` as Stripe does and hands it to billing, as the webhook route would. */
export const deliver = (event: { readonly id: string }) =>
  Effect.suspend(() => {
    const payload = JSON.stringify(event)
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(Date.now() / 1000) })
    return receivePaymentNotification({ payload: new TextEncoder().encode(payload), signature })
  })

/** The simulation's events about the order's checkout session (oldest first). */
export const checkoutEvents = (orderId: string, type = "checkout.session.completed") =>
  Effect.gen(function*() {
    const simulation = yield* SimulatedStripe
    return (yield* simulation.control.events).filter((e) =>
      e.type === type && (e.data.object as { readonly client_reference_id?: string | null }).client_reference_id === orderId
    )
  })

/** Posts `card` on the order's hosted page (the browser's part): nothing is delivered to billing yet. */
export const payOnPage = (orderId: string, card: string = Cards.success) =>
  Effect.gen(function*() {
    const simulation = yield* SimulatedStripe
    const order = Option.getOrThrow(yield* (yield* Orders).get(orderId))
    if (order.checkoutUrl === null) return yield* Effect.die(new Error(`order ${orderId} has no checkout page`))
    const url = order.checkoutUrl
    const response = yield* Effect.promise(() =>
      simulation.fetch(url, {
        method: "POST",
        redirect: "manual",
        body: new URLSearchParams({ card, exp: "12/34", cvc: "123" }),
        headers: { "content-type": "application/x-www-form-urlencoded" }
      })
    )
    yield* Effect.promise(() => response.text())
    return response.status
  })

/** The customer pays the order with the success card and Stripe's `checkout.session.completed` reaches billing. */
export const payOrder = (orderId: string) =>
  Effect.gen(function*() {
    const status = yield* payOnPage(orderId)
    if (status !== 303) return yield* Effect.die(new Error(`the checkout page answered ${status}`))
    for (const event of yield* checkoutEvents(orderId)) yield* deliver(event)
  })

/** Places an order as `userId`, a customer who can pay (billedCustomer: an account with a French billing profile). */
export const placeAs = (userId: string, planId: string, options: unknown) =>
  Effect.flatMap(billedCustomer(userId), (user) => placeOrder(user, planId, options))

/** Places the order as `userId` and pays it on its page; the order as placed (awaiting its payment). */
export const placePaidOrder = (userId: string, planId: string, options: unknown) =>
  Effect.tap(placeAs(userId, planId, options), (order) => payOrder(order.id))

/** The payments Stripe took (PaymentIntents that succeeded), oldest first. */
export const succeededPayments = Effect.gen(function*() {
  const simulation = yield* SimulatedStripe
  return (yield* simulation.control.events).filter((e) => e.type === "payment_intent.succeeded").map((e) => e.data.object as { readonly id: string; readonly amount: number })
})
