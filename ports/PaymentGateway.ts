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

export class PaymentGateway extends Context.Service<PaymentGateway, {
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
