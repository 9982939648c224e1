// The payment gateway outside sandbox mode while no payment provider is configured: it takes no money, so
// `ready` refuses every order up front (503 PAYMENTS_NOT_CONFIGURED) and a renewal's charge finds the service
// unavailable. A real provider's adapter replaces it in the wiring.
import { Effect, Layer, Option } from "effect"
import { PaymentGateway, PaymentsNotConfigured, PaymentUnavailable } from "../../ports/PaymentGateway.ts"

export const layer: Layer.Layer<PaymentGateway> = Layer.succeed(PaymentGateway, PaymentGateway.of({
  ready: Effect.fail(new PaymentsNotConfigured()),
  createCustomer: () => Effect.fail(new PaymentUnavailable()),
  checkout: () => Effect.fail(new PaymentUnavailable()),
  expireCheckout: () => Effect.fail(new PaymentUnavailable()),
  cardPage: () => Effect.fail(new PaymentUnavailable()),
  paymentLink: () => Effect.fail(new PaymentUnavailable()),
  charge: () => Effect.fail(new PaymentUnavailable()),
  savedCard: () => Effect.succeed(Option.none()),
  verifyNotification: () => Effect.fail(new PaymentsNotConfigured()),
  // Nothing was ever charged through it: an interrupted order is settled as unpaid.
  findCharge: () => Effect.succeed(Option.none()),
  refund: () => Effect.fail(new PaymentUnavailable())
}))
