// Money moving: a card saved as a payment method, one attempt on a payment intent (a charge that succeeds or fails,
// or a wait for the cardholder's authentication), and refunds of a charge. Each change emits the events Stripe sends.
import { Effect } from "effect"
import type { Charge, Dispute, PaymentIntent, PaymentMethod, Refund, StripeErrorObject } from "./objects.ts"
import { randomId } from "./objects.ts"
import { clientSecret, emit, nowSeconds, stamp, type Store } from "./Store.ts"
import { invalid, StripeFailure } from "./StripeFailure.ts"
import { brandOf, type CardDetails, declineMessages, type Outcome } from "./testCards.ts"

export const savePaymentMethod = (store: Store, card: CardDetails) =>
  Effect.gen(function*() {
    const pm: PaymentMethod = {
      ...(yield* stamp(store, randomId("pm"), "payment_method")),
      type: "card",
      card: {
        brand: brandOf(card.number),
        last4: card.number.slice(-4),
        exp_month: card.expMonth,
        exp_year: card.expYear,
        funding: "credit",
        country: "FR",
        // Stripe's fingerprint names the card number, the same across saves.
        fingerprint: card.number.split("").reverse().join("").slice(0, 16)
      },
      customer: null,
      metadata: {},
      billing_details: { email: null, name: null, phone: null, address: null }
    }
    store.paymentMethods.set(pm.id, pm)
    store.cards.set(pm.id, { number: card.number, setUpForOffSession: false })
    return pm
  })

/** Attaches the card to the customer for later payments (`setup_future_usage`, or a setup-mode session). */
export const keepForLater = (store: Store, pm: PaymentMethod, customer: string | null, offSession: boolean) =>
  Effect.gen(function*() {
    const card = store.cards.get(pm.id)
    if (card !== undefined && offSession) card.setUpForOffSession = true
    if (customer === null || pm.customer === customer) return
    pm.customer = customer
    yield* emit(store, "payment_method.attached", pm)
  })

export const cardError = (code: string, declineCode: string | undefined, pm: PaymentMethod | undefined): StripeErrorObject => ({
  type: "card_error",
  code,
  ...(declineCode === undefined ? {} : { decline_code: declineCode }),
  message: declineMessages[declineCode ?? code] ?? declineMessages["generic_decline"]!,
  ...(pm === undefined ? {} : { payment_method: structuredClone(pm) })
})

const makeCharge = (store: Store, pi: PaymentIntent, pm: PaymentMethod, failure: StripeErrorObject | undefined) =>
  Effect.gen(function*() {
    const charge: Charge = {
      ...(yield* stamp(store, randomId("ch"), "charge")),
      amount: pi.amount,
      amount_captured: failure === undefined ? pi.amount : 0,
      amount_refunded: 0,
      refunded: false,
      disputed: false,
      currency: pi.currency,
      customer: pi.customer,
      payment_intent: pi.id,
      payment_method: pm.id,
      status: failure === undefined ? "succeeded" : "failed",
      paid: failure === undefined,
      captured: failure === undefined,
      failure_code: failure?.code ?? null,
      failure_message: failure?.message ?? null,
      outcome: failure === undefined
        ? { type: "authorized", network_status: "approved_by_network", reason: null, seller_message: "Payment complete." }
        : { type: "issuer_declined", network_status: "declined_by_network", reason: failure.decline_code ?? null, seller_message: "The bank did not return any further details with this decline." },
      payment_method_details: { type: "card", card: pm.card },
      metadata: {}
    }
    store.charges.set(charge.id, charge)
    pi.latest_charge = charge.id
    return charge
  })

/** The attempt failed: a failed charge, the intent back to `requires_payment_method`, and the 402 to answer. */
export const failAttempt = (store: Store, pi: PaymentIntent, pm: PaymentMethod, code: string, declineCode: string | undefined) =>
  Effect.gen(function*() {
    const error = cardError(code, declineCode, pm)
    const charge = code === "payment_intent_authentication_failure" ? undefined : yield* makeCharge(store, pi, pm, error)
    pi.status = "requires_payment_method"
    pi.next_action = null
    pi.last_payment_error = error
    if (charge !== undefined) yield* emit(store, "charge.failed", charge)
    yield* emit(store, "payment_intent.payment_failed", pi)
    return new StripeFailure({
      status: 402,
      type: "card_error",
      code,
      message: error.message,
      paymentIntent: structuredClone(pi),
      ...(declineCode === undefined ? {} : { declineCode })
    })
  })

export const succeedAttempt = (store: Store, pi: PaymentIntent, pm: PaymentMethod) =>
  Effect.gen(function*() {
    const charge = yield* makeCharge(store, pi, pm, undefined)
    pi.status = "succeeded"
    pi.amount_received = pi.amount
    pi.next_action = null
    pi.last_payment_error = null
    yield* emit(store, "charge.succeeded", charge)
    yield* emit(store, "payment_intent.succeeded", pi)
  })

/**
 * One attempt of `pm` on `pi` with the card's outcome: `undefined` when it succeeded or now waits for authentication
 * (`requires_action`, authenticated at `authenticateUrl`), the 402 to answer when it was declined.
 */
export const attemptPayment = (store: Store, pi: PaymentIntent, pm: PaymentMethod, outcome: Outcome, authenticateUrl: string, returnUrl: string | null) =>
  Effect.gen(function*() {
    pi.payment_method = pm.id
    switch (outcome.kind) {
      case "pass":
        yield* succeedAttempt(store, pi, pm)
        return undefined
      case "decline":
        return yield* failAttempt(store, pi, pm, outcome.declineCode === "authentication_required" ? "authentication_required" : "card_declined", outcome.declineCode)
      case "challenge":
        pi.status = "requires_action"
        pi.next_action = { type: "redirect_to_url", redirect_to_url: { url: authenticateUrl, return_url: returnUrl } }
        yield* emit(store, "payment_intent.requires_action", pi)
        return undefined
    }
  })

/** The cardholder disputes the charge with their bank: a dispute needing a response, `charge.dispute.created`. */
export const disputeCharge = (store: Store, charge: Charge, reason: string) =>
  Effect.gen(function*() {
    if (charge.status !== "succeeded") return yield* invalid(`Charge ${charge.id} was not paid: there is nothing to dispute.`)
    const dispute: Dispute = {
      ...(yield* stamp(store, randomId("dp"), "dispute")),
      amount: charge.amount_captured - charge.amount_refunded,
      currency: charge.currency,
      charge: charge.id,
      payment_intent: charge.payment_intent,
      reason,
      status: "needs_response",
      metadata: {}
    }
    store.disputes.set(dispute.id, dispute)
    charge.disputed = true
    yield* emit(store, "charge.dispute.created", dispute)
    return dispute
  })

/** Refunds `amount` (default: what is left) of the intent's successful charge; never more than was captured. */
export const refundCharge = (store: Store, charge: Charge, amount: number | undefined, reason: string | null, metadata: Record<string, string>) =>
  Effect.gen(function*() {
    const left = charge.amount_captured - charge.amount_refunded
    if (charge.refunded || left <= 0) {
      return yield* invalid(`Charge ${charge.id} has already been refunded.`, { code: "charge_already_refunded" })
    }
    const value = amount ?? left
    if (value <= 0) return yield* invalid("Refund amount must be positive.", { param: "amount", code: "parameter_invalid_integer" })
    if (value > left) {
      return yield* invalid(
        `Refund amount (${(value / 100).toFixed(2)} ${charge.currency}) is greater than unrefunded amount on charge (${(left / 100).toFixed(2)} ${charge.currency})`,
        { param: "amount", code: "amount_too_large" }
      )
    }
    const refund: Refund = {
      id: randomId("re"),
      object: "refund",
      created: yield* nowSeconds(store),
      amount: value,
      charge: charge.id,
      payment_intent: charge.payment_intent,
      currency: charge.currency,
      status: "succeeded",
      reason,
      metadata
    }
    store.refunds.set(refund.id, refund)
    const previous = { amount_refunded: charge.amount_refunded, refunded: charge.refunded }
    charge.amount_refunded += value
    charge.refunded = charge.amount_refunded >= charge.amount_captured
    yield* emit(store, "refund.created", refund)
    yield* emit(store, "charge.refunded", charge, previous)
    return refund
  })

export const newPaymentIntent = (
  store: Store,
  p: {
    readonly amount: number
    readonly currency: string
    readonly customer: string | null
    readonly description: string | null
    readonly metadata: Record<string, string>
    readonly setupFutureUsage: "off_session" | "on_session" | null
  }
) =>
  Effect.gen(function*() {
    const id = randomId("pi")
    const pi: PaymentIntent = {
      ...(yield* stamp(store, id, "payment_intent")),
      amount: p.amount,
      amount_received: 0,
      currency: p.currency,
      customer: p.customer,
      payment_method: null,
      status: "requires_payment_method",
      client_secret: clientSecret(id),
      capture_method: "automatic",
      confirmation_method: "automatic",
      description: p.description,
      metadata: { ...p.metadata },
      setup_future_usage: p.setupFutureUsage,
      payment_method_types: ["card"],
      latest_charge: null,
      last_payment_error: null,
      next_action: null
    }
    store.paymentIntents.set(pi.id, pi)
    yield* emit(store, "payment_intent.created", pi)
    return pi
  })
