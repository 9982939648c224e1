// The Stripe objects the sandbox keeps, in Stripe's own wire shape (snake_case, `object`, `livemode`, unix `created`),
// and what it keeps beside them that Stripe never shows (the card number, whether a card is set up for off-session).
export type Metadata = Record<string, string>

export interface Customer {
  readonly id: string
  readonly object: "customer"
  readonly created: number
  readonly livemode: false
  email: string | null
  name: string | null
  description: string | null
  phone: string | null
  metadata: Metadata
  invoice_settings: { default_payment_method: string | null }
}

export interface LineItem {
  readonly id: string
  readonly object: "item"
  readonly amount_subtotal: number
  readonly amount_total: number
  readonly currency: string
  readonly description: string
  readonly quantity: number
  readonly price: { readonly id: string; readonly object: "price"; readonly currency: string; readonly unit_amount: number; readonly product: string }
}

export interface CheckoutSession {
  readonly id: string
  readonly object: "checkout.session"
  readonly created: number
  readonly livemode: false
  readonly mode: "payment" | "setup"
  status: "open" | "complete" | "expired"
  payment_status: "unpaid" | "paid" | "no_payment_required"
  readonly customer: string | null
  readonly customer_email: string | null
  readonly client_reference_id: string | null
  readonly success_url: string | null
  readonly cancel_url: string | null
  url: string | null
  readonly expires_at: number
  readonly amount_subtotal: number | null
  readonly amount_total: number | null
  readonly currency: string | null
  readonly metadata: Metadata
  payment_intent: string | null
  setup_intent: string | null
}

export interface Card {
  readonly brand: string
  readonly last4: string
  readonly exp_month: number
  readonly exp_year: number
  readonly funding: "credit"
  readonly country: "FR"
  readonly fingerprint: string
}

export interface PaymentMethod {
  readonly id: string
  readonly object: "payment_method"
  readonly created: number
  readonly livemode: false
  readonly type: "card"
  readonly card: Card
  customer: string | null
  readonly metadata: Metadata
  readonly billing_details: { readonly email: null; readonly name: null; readonly phone: null; readonly address: null }
}

export interface StripeErrorObject {
  readonly type: "card_error"
  readonly code: string
  readonly decline_code?: string
  readonly message: string
  readonly payment_method?: PaymentMethod
}

export type PaymentIntentStatus = "requires_payment_method" | "requires_confirmation" | "requires_action" | "succeeded" | "canceled"

export interface PaymentIntent {
  readonly id: string
  readonly object: "payment_intent"
  readonly created: number
  readonly livemode: false
  readonly amount: number
  amount_received: number
  readonly currency: string
  readonly customer: string | null
  payment_method: string | null
  status: PaymentIntentStatus
  readonly client_secret: string
  readonly capture_method: "automatic"
  readonly confirmation_method: "automatic"
  readonly description: string | null
  readonly metadata: Metadata
  readonly setup_future_usage: "off_session" | "on_session" | null
  readonly payment_method_types: ReadonlyArray<string>
  latest_charge: string | null
  last_payment_error: StripeErrorObject | null
  next_action: { readonly type: "redirect_to_url"; readonly redirect_to_url: { readonly url: string; readonly return_url: string | null } } | null
}

export interface Charge {
  readonly id: string
  readonly object: "charge"
  readonly created: number
  readonly livemode: false
  readonly amount: number
  amount_captured: number
  amount_refunded: number
  refunded: boolean
  disputed: boolean
  readonly currency: string
  readonly customer: string | null
  readonly payment_intent: string
  readonly payment_method: string
  readonly status: "succeeded" | "failed"
  readonly paid: boolean
  readonly captured: boolean
  readonly failure_code: string | null
  readonly failure_message: string | null
  readonly outcome: { readonly type: string; readonly network_status: string; readonly reason: string | null; readonly seller_message: string }
  readonly payment_method_details: { readonly type: "card"; readonly card: Card }
  readonly metadata: Metadata
}

export interface SetupIntent {
  readonly id: string
  readonly object: "setup_intent"
  readonly created: number
  readonly livemode: false
  readonly customer: string | null
  payment_method: string | null
  status: "requires_payment_method" | "requires_action" | "succeeded"
  readonly usage: "off_session"
  readonly client_secret: string
  readonly metadata: Metadata
  last_setup_error: StripeErrorObject | null
}

export interface Refund {
  readonly id: string
  readonly object: "refund"
  readonly created: number
  readonly amount: number
  readonly charge: string
  readonly payment_intent: string
  readonly currency: string
  readonly status: "succeeded"
  readonly reason: string | null
  readonly metadata: Metadata
}

export interface Dispute {
  readonly id: string
  readonly object: "dispute"
  readonly created: number
  readonly livemode: false
  readonly amount: number
  readonly currency: string
  readonly charge: string
  readonly payment_intent: string
  readonly reason: string
  readonly status: "needs_response"
  readonly metadata: Metadata
}

export interface StripeEvent {
  readonly id: string
  readonly object: "event"
  readonly api_version: string
  readonly created: number
  readonly livemode: false
  readonly type: string
  readonly data: { readonly object: unknown; readonly previous_attributes?: Record<string, unknown> }
  pending_webhooks: number
  readonly request: { readonly id: string | null; readonly idempotency_key: string | null }
}

export interface WebhookEndpoint {
  readonly id: string
  readonly object: "webhook_endpoint"
  readonly created: number
  readonly livemode: false
  readonly url: string
  readonly enabled_events: ReadonlyArray<string>
  readonly api_version: string | null
  readonly description: string | null
  readonly metadata: Metadata
  readonly status: "enabled"
}

/** Stripe-looking random ids: a prefix and base-62 characters. */
export const randomId = (prefix: string, length = 24): string => {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
  const bytes = crypto.getRandomValues(new Uint8Array(length))
  let out = ""
  for (const b of bytes) out += alphabet[b % 62]
  return `${prefix}_${out}`
}

/** A webhook endpoint's signing secret. */
export const newWebhookSecret = () => `whsec_${randomId("x", 32).slice(2)}`

export interface ListObject<A> {
  readonly object: "list"
  readonly data: ReadonlyArray<A>
  readonly has_more: boolean
  readonly url: string
}

/** Stripe's cursor pagination over newest-first items: `limit` (1–100, default 10), `starting_after`, `ending_before`. */
export const page = <A extends { readonly id: string }>(
  url: string,
  newestFirst: ReadonlyArray<A>,
  options: { readonly limit?: number | undefined; readonly startingAfter?: string | undefined; readonly endingBefore?: string | undefined }
): ListObject<A> => {
  const limit = options.limit ?? 10
  if (options.endingBefore !== undefined) {
    const end = newestFirst.findIndex((a) => a.id === options.endingBefore)
    const before = newestFirst.slice(0, Math.max(end, 0))
    return { object: "list", url, data: before.slice(-limit), has_more: before.length > limit }
  }
  const start = options.startingAfter === undefined ? 0 : newestFirst.findIndex((a) => a.id === options.startingAfter) + 1
  const rest = newestFirst.slice(start)
  return { object: "list", url, data: rest.slice(0, limit), has_more: rest.length > limit }
}
