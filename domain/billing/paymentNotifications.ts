// What billing does with the payment provider's verified notifications. Each is recorded under its own id in the
// same transaction as its effect, so a redelivered one changes nothing: an order paid on the hosted checkout moves to
// provisioning with its subscription and its charge (then its provisioning starts), an expired checkout expires its
// order, a renewal paid on its hosted page renews (`RenewalPaidOnPage`, autoRenewal.ts), and a refund confirmation is
// the record itself (how much of a payment the provider confirms refunded).
import { Clock, Effect } from "effect"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { PaymentNotifications } from "../../ports/PaymentNotifications.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { afterPayment, checkoutExpired, settleOrderPayment } from "./Ordering.ts"
import { receiveRenewalPayment } from "./autoRenewal.ts"

export interface NotificationReceipt {
  /** Verified, but of a kind billing does not act on. */
  readonly ignored: boolean
  /** Received before (a redelivery): nothing was changed. */
  readonly duplicate: boolean
}

export const receivePaymentNotification = Effect.fn("receivePaymentNotification")(function*(request: {
  readonly payload: Uint8Array
  readonly signature: string
}) {
  const notification = yield* (yield* PaymentGateway).verifyNotification(request)
  if (notification._tag === "RenewalPaidOnPage") {
    return { ignored: false, ...(yield* receiveRenewalPayment(notification)) } satisfies NotificationReceipt
  }
  const now = new Date(yield* Clock.currentTimeMillis)
  const notifications = yield* PaymentNotifications
  const outcome = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    if (!(yield* notifications.record(notification, now))) return { fresh: false, next: { _tag: "Nothing" } as const }
    switch (notification._tag) {
      case "OrderPaid":
        return { fresh: true, next: yield* settleOrderPayment(notification) }
      case "CheckoutExpired":
        yield* checkoutExpired(notification.orderId)
        return { fresh: true, next: { _tag: "Nothing" } as const }
      default:
        return { fresh: true, next: { _tag: "Nothing" } as const }
    }
  }))
  yield* afterPayment(outcome.next)
  return { ignored: notification._tag === "Ignored", duplicate: !outcome.fresh } satisfies NotificationReceipt
})
