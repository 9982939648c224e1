// Taking and giving back money through a payment provider that keeps the card: a customer per user, a hosted page for
// a first payment (which saves the card) and one to change the card, charges of the saved card while the customer is
// away, refunds, and the provider's verified notifications. Idempotency keys make a retried call happen once.
import { Context, type Effect, type Option, Schema } from "effect"

export class PaymentDeclined extends Schema.TaggedError<PaymentDeclined>()("PaymentDeclined", { reason: Schema.String }) {
  override get message() {
    return `The payment was declined: ${this.reason}`
  }
}

/** The card's issuer wants the customer present to approve this payment: it must be paid on a hosted page. */
export class PaymentAuthenticationRequired
  extends Schema.TaggedError<PaymentAuthenticationRequired>()("PaymentAuthenticationRequired", {})
{
  override get message() {
    return "The bank asks the card holder to approve this payment: it must be paid from the panel."
  }
}

export class PaymentUnavailable extends Schema.TaggedError<PaymentUnavailable>()("PaymentUnavailable", {}) {
  override get message() {
    return "The payment service cannot be reached right now; nothing was charged."
  }
}

/** No payment provider is set up (outside sandbox mode, until one is configured): nothing can be sold. */
export class PaymentsNotConfigured extends Schema.TaggedError<PaymentsNotConfigured>()("PaymentsNotConfigured", {}) {
  override get message() {
    return "Payments are not set up on this platform yet: nothing can be ordered. Nothing was created or charged."
  }
}

/** A notification that does not carry a valid signature of the provider (forged, altered, or too old to trust). */
export class NotificationSignatureInvalid
  extends Schema.TaggedError<NotificationSignatureInvalid>()("NotificationSignatureInvalid", {})
{
  override get message() {
    return "The notification's signature is not valid."
  }
}

/** The card kept for a customer's charges while they are away. */
export interface SavedCard {
  readonly brand: string
  readonly last4: string
  readonly expMonth: number
  readonly expYear: number
}

/**
 * What the provider tells us, verified, in billing's words. `id` is the notification's own id (delivered at least
 * once: the receiver stores it under a unique constraint with the notification's effect).
 */
export type PaymentNotification =
  /** The first payment of an order was taken on the hosted page (its card is now saved for later charges). */
  | { readonly _tag: "OrderPaid"; readonly id: string; readonly orderId: string; readonly payment: string; readonly amountCents: number }
  /** The hosted page of an order was left unpaid until it expired. */
  | { readonly _tag: "CheckoutExpired"; readonly id: string; readonly orderId: string }
  /** A customer saved a new card on the card page. */
  | { readonly _tag: "CardSaved"; readonly id: string; readonly customer: string }
  /** A charge made while the customer was away failed after all (declined, or authentication demanded). */
  | { readonly _tag: "ChargeFailed"; readonly id: string; readonly payment: string; readonly reason: string }
  /** Money given back: `refundedCents` in all, so far, of `payment`. */
  | { readonly _tag: "RefundConfirmed"; readonly id: string; readonly payment: string; readonly refundedCents: number }
  /** A renewal was paid on the hosted page of `paymentLink` (the subscription and period it was made for). */
  | {
    readonly _tag: "RenewalPaidOnPage"
    readonly id: string
    readonly subscriptionId: string
    /** The period paid for, as given to `paymentLink` (an ISO date). */
    readonly periodStart: string
    readonly payment: string
    readonly amountCents: number
  }
  /** Verified, but of a kind billing does not act on. */
  | { readonly _tag: "Ignored"; readonly id: string; readonly type: string }

/** What became of an order's hosted payment page that we closed (or found closed). */
export type CheckoutOutcome =
  /** Closed unpaid: nothing can be paid on it any more. */
  | { readonly _tag: "Expired" }
  /** Paid before it could be closed: the order is paid (`payment` identifies the payment, as in `OrderPaid`). */
  | { readonly _tag: "Paid"; readonly payment: string; readonly amountCents: number }
  /** A payment is under way on it (a delayed method): neither closed nor paid yet; ask again later. */
  | { readonly _tag: "Processing" }

export class PaymentGateway extends Context.Service<PaymentGateway, {
  /**
   * Whether this gateway can take payments at all; asked before anything of an order is created, so an order that
   * could never be paid for leaves nothing behind.
   */
  readonly ready: Effect.Effect<void, PaymentsNotConfigured>
  /** A new customer at the provider for one of our users; the key (`customer:<userId>`) makes a retry create one. */
  createCustomer(request: {
    readonly userId: string
    readonly email: string
    readonly idempotencyKey: string
  }): Effect.Effect<{ readonly customer: string }, PaymentUnavailable>
  /**
   * A hosted page where the customer pays an order's first amount; the card is saved for later charges. The order
   * is paid when the `OrderPaid` notification says so, never when the browser comes back to `successUrl`.
   */
  checkout(request: {
    readonly customer: string
    readonly orderId: string
    readonly description: string
    readonly amountCents: number
    readonly successUrl: string
    readonly cancelUrl: string
    /** When the page stops taking the payment, if the provider allows that deadline (ours expires it otherwise). */
    readonly expiresAt?: Date | undefined
    readonly idempotencyKey: string
  }): Effect.Effect<{ readonly session: string; readonly url: string }, PaymentUnavailable>
  /**
   * Closes an order's hosted page so that it can no longer be paid, and says what became of it: an order expired by
   * us while its customer was paying is paid after all when the page turns out paid.
   */
  expireCheckout(session: string): Effect.Effect<CheckoutOutcome, PaymentUnavailable>
  /** A hosted page where the customer saves another card (`CardSaved` when done), then comes back to `returnUrl`. */
  cardPage(request: {
    readonly customer: string
    readonly returnUrl: string
  }): Effect.Effect<{ readonly url: string }, PaymentUnavailable>
  /**
   * A hosted page where the customer pays one renewal while present (the bank asked for authentication, or the saved
   * card was declined); `RenewalPaidOnPage` names the subscription and period once paid. The card used is saved for
   * the next renewals.
   */
  paymentLink(request: {
    readonly customer: string
    readonly amountCents: number
    readonly description: string
    readonly subscriptionId: string
    readonly periodStart: string
    readonly returnUrl: string
    readonly idempotencyKey: string
  }): Effect.Effect<{ readonly url: string }, PaymentUnavailable>
  /** Charges the customer's saved card while they are away (a renewal); `reference` identifies the payment. */
  charge(request: {
    readonly customer: string
    readonly amountCents: number
    readonly description: string
    readonly idempotencyKey: string
  }): Effect.Effect<
    { readonly reference: string },
    PaymentDeclined | PaymentAuthenticationRequired | PaymentUnavailable
  >
  /**
   * The charge made with `idempotencyKey`, if there is one: an order interrupted between its charge and our record of
   * it asks this before deciding (charged → delivered; not charged → failed, nothing to refund). Stripe answers it by
   * searching PaymentIntents on a metadata field set at creation (`metadata['idempotency_key']:'order:…'`); its search
   * index lags by up to a minute, which the order recovery's delay covers.
   */
  findCharge(idempotencyKey: string): Effect.Effect<
    Option.Option<{ readonly reference: string; readonly amountCents: number }>,
    PaymentUnavailable
  >
  refund(request: {
    readonly charge: string
    readonly amountCents: number
    readonly idempotencyKey: string
  }): Effect.Effect<{ readonly reference: string }, PaymentUnavailable>
  /** The card charges would use now, if one is saved. */
  savedCard(customer: string): Effect.Effect<Option.Option<SavedCard>, PaymentUnavailable>
  /** Verifies a notification exactly as received (the raw body, never re-serialised) and says what it means. */
  verifyNotification(request: {
    readonly payload: string | Uint8Array
    readonly signature: string
  }): Effect.Effect<PaymentNotification, NotificationSignatureInvalid | PaymentsNotConfigured>
}>()("zh/ports/PaymentGateway") {}
