// Taking and giving back money. Idempotency keys make a retried charge or refund happen once.
import { Context, type Effect, Schema } from "effect"

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
  refund(request: {
    readonly charge: string
    readonly amountCents: number
    readonly idempotencyKey: string
  }): Effect.Effect<{ readonly reference: string }, PaymentUnavailable>
}>()("zh/ports/PaymentGateway") {}
