// In-memory PaymentCustomers: like the table's primary key, the first customer remembered for a user holds.
import { Effect, Layer, Option, Ref } from "effect"
import { PaymentCustomers } from "../../ports/PaymentCustomers.ts"

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make<ReadonlyMap<string, string>>(new Map())
  return PaymentCustomers.of({
    get: (userId) => Effect.map(Ref.get(rows), (m) => Option.fromNullishOr(m.get(userId))),
    remember: (userId, customer) =>
      Ref.modify(rows, (m): readonly [string, ReadonlyMap<string, string>] => {
        const known = m.get(userId)
        return known === undefined ? [customer, new Map(m).set(userId, customer)] : [known, m]
      })
  })
})

export const layer = Layer.effect(PaymentCustomers, make)
