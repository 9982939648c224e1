// The payment provider's notifications received, each once by its id: recording one is its effect's guard.
import { Context, type Effect } from "effect"
import type { PaymentNotification } from "./PaymentGateway.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class PaymentNotifications extends Context.Service<PaymentNotifications, {
  /** Records the notification; false when its id was recorded before (a redelivery: its effect is not repeated). */
  record(notification: PaymentNotification, now: Date): Effect.Effect<boolean, DatabaseUnavailable>
  /** The most refunded of `payment` that the provider has confirmed so far (0 when none). */
  confirmedRefundCents(payment: string): Effect.Effect<number, DatabaseUnavailable>
}>()("zh/ports/PaymentNotifications") {}
