// The provider's customer of each user in Postgres: the primary key on user_id keeps one per user.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { PaymentCustomers } from "../../ports/PaymentCustomers.ts"
import { stored } from "./failures.ts"

const Rows = Schema.Array(Schema.Struct({ customer: Schema.String }))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const get = (userId: string) =>
    sql`SELECT customer FROM payment_customers WHERE user_id = ${userId}`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Rows)),
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => r.customer)),
      stored
    )
  return PaymentCustomers.of({
    get,
    remember: (userId, customer, now) =>
      sql`INSERT INTO payment_customers ${sql.insert({ user_id: userId, customer, created_at: now })}
          ON CONFLICT (user_id) DO NOTHING`.pipe(
        stored,
        Effect.andThen(get(userId)),
        Effect.map(Option.getOrElse(() => customer))
      )
  })
})

export const layer = Layer.effect(PaymentCustomers, make)
