// The customer's saved card, as the provider keeps it, and the provider's page to change it (API.md § Payments).
import { Effect, Option } from "effect"
import { PaymentCustomers } from "../../ports/PaymentCustomers.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { PaymentMethodNotFound } from "./BillingErrors.ts"
import { customerOf } from "./paymentCustomer.ts"

/** The card charges would use now; a user without a customer at the provider has none (nothing is created). */
export const savedCardOf = Effect.fn("savedCardOf")(function*(userId: string) {
  const customer = yield* (yield* PaymentCustomers).get(userId)
  if (Option.isNone(customer)) return yield* new PaymentMethodNotFound()
  const card = yield* (yield* PaymentGateway).savedCard(customer.value)
  if (Option.isNone(card)) return yield* new PaymentMethodNotFound()
  return card.value
})

/** The provider's hosted page where the customer saves another card, then comes back to `returnUrl`. */
export const cardUpdatePage = Effect.fn("cardUpdatePage")(function*(
  user: { readonly id: string; readonly email: string },
  returnUrl: string
) {
  const customer = yield* customerOf(user)
  return yield* (yield* PaymentGateway).cardPage({ customer, returnUrl })
})
