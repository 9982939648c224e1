// Payment intents created through the API (a renewal: `off_session: true, confirm: true` with a saved card), their
// authentication page when a confirmation needs the cardholder, and refunds.
import { Effect } from "effect"
import type { PaymentIntent } from "./objects.ts"
import type { PaymentIntentCreate, RefundCreate } from "./params.ts"
import { attemptPayment, failAttempt, newPaymentIntent, refundCharge, succeedAttempt } from "./payments.ts"
import { getCharge, getCustomer, getPaymentIntent, getPaymentMethod } from "./resources.ts"
import type { Store } from "./Store.ts"
import { invalid } from "./StripeFailure.ts"
import { attempt, testCards } from "./testCards.ts"

export const authenticateUrl = (store: Store, pi: PaymentIntent) => `${store.baseUrl}/authenticate/${pi.id}`

export const createPaymentIntent = (store: Store, p: typeof PaymentIntentCreate.Type) =>
  Effect.gen(function*() {
    const offSession = p.off_session !== undefined && p.off_session !== false
    if (p.off_session !== undefined && p.confirm !== true) {
      return yield* invalid("`off_session` can only be used when `confirm` is true.", { param: "off_session" })
    }
    if (p.amount < 50) {
      return yield* invalid(`Amount must be at least 0.50 ${p.currency.toLowerCase()}`, { param: "amount", code: "amount_too_small" })
    }
    if (p.customer !== undefined) yield* getCustomer(store, p.customer, "customer")
    const pm = p.payment_method === undefined ? undefined : yield* getPaymentMethod(store, p.payment_method, "payment_method")
    if (pm !== undefined && pm.customer !== null && pm.customer !== p.customer) {
      return yield* invalid("The provided PaymentMethod belongs to a different Customer; pass that Customer as `customer`.", { param: "payment_method" })
    }
    if (pm !== undefined && pm.customer === null && offSession) {
      return yield* invalid(
        "The provided PaymentMethod was previously used without being attached to a Customer; it cannot be charged off-session.",
        { param: "payment_method", code: "payment_method_unexpected_state" }
      )
    }
    if (p.confirm === true && pm === undefined) {
      return yield* invalid("You cannot confirm this PaymentIntent because it's missing a payment method.", {
        param: "payment_method",
        code: "payment_intent_unexpected_state"
      })
    }
    const pi = yield* newPaymentIntent(store, {
      amount: p.amount,
      currency: p.currency.toLowerCase(),
      customer: p.customer ?? null,
      description: p.description ?? null,
      metadata: { ...p.metadata },
      setupFutureUsage: null
    })
    if (pm === undefined) return pi
    pi.payment_method = pm.id
    if (p.confirm !== true) {
      pi.status = "requires_confirmation"
      return pi
    }
    const card = store.cards.get(pm.id)
    const outcome = attempt(card === undefined ? undefined : testCards[card.number], {
      offSession,
      setUpForOffSession: card?.setUpForOffSession ?? false,
      settingUp: false
    })
    const failure = yield* attemptPayment(store, pi, pm, outcome, authenticateUrl(store, pi), p.return_url ?? null)
    if (failure !== undefined) return yield* failure
    return pi
  })

/** The authentication page of a `requires_action` intent, answered: approve completes the payment, fail fails it. */
export const answerAuthentication = (store: Store, id: string, approve: boolean) =>
  Effect.gen(function*() {
    const pi = yield* getPaymentIntent(store, id)
    const returnUrl = pi.next_action?.redirect_to_url.return_url ?? null
    if (pi.status !== "requires_action") return { pi, answered: false, returnUrl }
    const pm = yield* getPaymentMethod(store, pi.payment_method ?? "")
    if (approve) yield* succeedAttempt(store, pi, pm)
    else yield* failAttempt(store, pi, pm, "payment_intent_authentication_failure", undefined)
    return { pi, answered: true, returnUrl }
  })

export const createRefund = (store: Store, p: typeof RefundCreate.Type) =>
  Effect.gen(function*() {
    if ((p.payment_intent === undefined) === (p.charge === undefined)) {
      return yield* invalid("Exactly one of `payment_intent` or `charge` is required.", { param: "payment_intent", code: "parameter_missing" })
    }
    const charge = p.charge !== undefined
      ? yield* getCharge(store, p.charge, "charge")
      : yield* Effect.gen(function*() {
        const pi = yield* getPaymentIntent(store, p.payment_intent ?? "", "payment_intent")
        if (pi.status !== "succeeded" || pi.latest_charge === null) {
          return yield* invalid(`This PaymentIntent (${pi.id}) does not have a successful charge to refund.`, { param: "payment_intent" })
        }
        return yield* getCharge(store, pi.latest_charge)
      })
    if (charge.status !== "succeeded") return yield* invalid(`Charge ${charge.id} has no successful payment to refund.`, { param: "charge" })
    return yield* refundCharge(store, charge, p.amount, p.reason ?? null, { ...p.metadata })
  })
