// Stripe's webhook events in billing's words (reference/stripe.md § Which design): the types we subscribe to and
// what each means; any other verified event is ignored (a 4xx would make Stripe retry it for days).
import type Stripe from "stripe"
import type { PaymentNotification } from "../../ports/PaymentGateway.ts"

/** The events the webhook endpoint is registered for (`npm run admin -- stripe register-webhook URL`). */
export const HANDLED_EVENTS = [
  "checkout.session.completed",
  "checkout.session.async_payment_succeeded",
  "checkout.session.expired",
  "payment_intent.payment_failed",
  "charge.refunded"
] as const

const idOf = (field: string | { readonly id: string } | null): string | null =>
  field === null ? null : typeof field === "string" ? field : field.id

const ignored = (event: Stripe.Event): PaymentNotification => ({ _tag: "Ignored", id: event.id, type: event.type })

const sessionNotification = (event: Stripe.Event, session: Stripe.Checkout.Session): PaymentNotification => {
  const orderId = session.client_reference_id
  const customer = idOf(session.customer)
  if (event.type === "checkout.session.expired") {
    return orderId === null ? ignored(event) : { _tag: "CheckoutExpired", id: event.id, orderId }
  }
  if (session.mode === "setup") {
    return session.status === "complete" && customer !== null ? { _tag: "CardSaved", id: event.id, customer } : ignored(event)
  }
  const payment = idOf(session.payment_intent)
  const renewal = session.metadata ?? {}
  const subscriptionId = renewal["subscriptionId"]
  const periodStart = renewal["periodStart"]
  // A renewal paid on its hosted page (`paymentLink`): its metadata name the subscription and the period.
  if (subscriptionId !== undefined && periodStart !== undefined) {
    return payment === null || session.payment_status !== "paid"
      ? ignored(event)
      : { _tag: "RenewalPaidOnPage", id: event.id, subscriptionId, periodStart, payment, amountCents: session.amount_total ?? 0 }
  }
  // A completed session with a delayed method is not paid yet: `async_payment_succeeded` follows.
  if (orderId === null || payment === null || session.payment_status !== "paid") return ignored(event)
  return { _tag: "OrderPaid", id: event.id, orderId, payment, amountCents: session.amount_total ?? 0 }
}

export const notificationOf = (event: Stripe.Event): PaymentNotification => {
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded":
    case "checkout.session.expired":
      return sessionNotification(event, event.data.object)
    case "payment_intent.payment_failed": {
      const pi = event.data.object
      const error = pi.last_payment_error
      return {
        _tag: "ChargeFailed",
        id: event.id,
        payment: pi.id,
        reason: (error?.decline_code ?? error?.code ?? "card_declined").replace(/_/g, " ")
      }
    }
    case "charge.refunded": {
      const charge = event.data.object
      const payment = idOf(charge.payment_intent)
      return payment === null
        ? ignored(event)
        : { _tag: "RefundConfirmed", id: event.id, payment, refundedCents: charge.amount_refunded }
    }
    default:
      return ignored(event)
  }
}
