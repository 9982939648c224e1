// Taking and giving back money. Idempotency keys make a retried charge or refund happen once.
import { Context, type Effect, type Option, Schema } from "effect"

export class PaymentDeclined extends Schema.TaggedError<PaymentDeclined>()("PaymentDeclined", { reason: Schema.String }) {
  override get message() {
    return `The payment was declined: ${this.reason}`
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

export class PaymentGateway extends Context.Service<PaymentGateway, {
  /**
   * Whether this gateway can take payments at all; asked before anything of an order is created, so an order that
   * could never be paid for leaves nothing behind.
   */
  readonly ready: Effect.Effect<void, PaymentsNotConfigured>
  charge(request: {
    readonly customer: string
    readonly amountCents: number
    readonly description: string
    readonly idempotencyKey: string
  }): Effect.Effect<{ readonly reference: string }, PaymentDeclined | PaymentUnavailable>
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
}>()("zh/ports/PaymentGateway") {}
