// A user's customer at the payment provider: created the first time billing needs one, then remembered. The
// creation's key is the user's id, so two first orders at once create one customer at the provider.
import { Clock, Effect, Option } from "effect"
import { PaymentCustomers } from "../../ports/PaymentCustomers.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"

export const customerOf = Effect.fn("customerOf")(function*(user: { readonly id: string; readonly email: string }) {
  const customers = yield* PaymentCustomers
  const known = yield* customers.get(user.id)
  if (Option.isSome(known)) return known.value
  const created = yield* (yield* PaymentGateway).createCustomer({
    userId: user.id,
    email: user.email,
    idempotencyKey: `customer:${user.id}`
  })
  return yield* customers.remember(user.id, created.customer, new Date(yield* Clock.currentTimeMillis))
})
