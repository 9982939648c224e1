// How orders are paid: how long an order waits for its payment, and where the provider's hosted page sends the
// customer back (the panel's order page).
import { Context, Duration } from "effect"

export interface OrderSettingsShape {
  /** An order still unpaid this long after it was placed expires (ORDER_PAYMENT_MINUTES, 1 hour by default). */
  readonly paymentWindow: Duration.Duration
  /** The panel's public origin: the hosted page sends the customer back to `<panelUrl>/orders/<id>`. */
  readonly panelUrl: string
}

export const OrderSettings = Context.Reference<OrderSettingsShape>("zh/domain/billing/OrderSettings", {
  defaultValue: () => ({ paymentWindow: Duration.hours(1), panelUrl: "http://localhost:3000" })
})

/** The panel's page of an order, where the hosted page sends the customer back, paid or not. */
export const orderPageUrl = (panelUrl: string, orderId: string) => `${panelUrl.replace(/\/$/, "")}/orders/${orderId}`
