// What billing does with the payment provider's verified notifications. Each is recorded under its own id in the
// same transaction as its effect, so a redelivered one changes nothing. Handled so far: the record itself, which is
// the refund confirmation (`RefundConfirmed`: how much of a payment the provider confirms refunded), and a renewal
// paid on its hosted page (`RenewalPaidOnPage`, autoRenewal.ts). Orders paid on the
// hosted checkout, expired checkouts, saved cards and failed off-session charges are recorded and acted on by the
// order flow of issue 12 §2.
import { Clock, Effect } from "effect"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { PaymentNotifications } from "../../ports/PaymentNotifications.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
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
  const fresh = yield* (yield* UnitOfWork).transaction((yield* PaymentNotifications).record(notification, now))
  return { ignored: notification._tag === "Ignored", duplicate: !fresh } satisfies NotificationReceipt
})
