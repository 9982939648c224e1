// Operators' holds in Postgres: the partial unique index keeps one in force per service; a lift is a compare-and-set.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { ServiceHold } from "../../domain/billing/ServiceHold.ts"
import { ServiceHolds } from "../../ports/ServiceHolds.ts"
import { snakeColumns } from "./columns.ts"
import { stored } from "./failures.ts"

const HoldRow = snakeColumns(ServiceHold)
const NewHoldRow = snakeColumns(Schema.Struct(ServiceHold.fields))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const insert = SqlSchema.findAll({
    Request: NewHoldRow,
    Result: HoldRow,
    execute: (row) =>
      sql`INSERT INTO service_holds ${sql.insert(row)}
          ON CONFLICT (subscription_id) WHERE lifted_at IS NULL DO NOTHING RETURNING *`
  })
  const inForce = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: HoldRow,
    execute: (id) => sql`SELECT * FROM service_holds WHERE subscription_id = ${id} AND lifted_at IS NULL`
  })
  const lift = SqlSchema.findOneOption({
    Request: Schema.Struct({ subscriptionId: Schema.String, by: Schema.String, at: Schema.Date, reason: Schema.String }),
    Result: HoldRow,
    execute: ({ at, by, reason, subscriptionId }) =>
      sql`UPDATE service_holds SET lifted_by = ${by}, lifted_at = ${at}, lift_reason = ${reason}
          WHERE subscription_id = ${subscriptionId} AND lifted_at IS NULL RETURNING *`
  })
  const history = SqlSchema.findAll({
    Request: Schema.String,
    Result: HoldRow,
    execute: (id) => sql`SELECT * FROM service_holds WHERE subscription_id = ${id} ORDER BY placed_at DESC, id DESC`
  })
  return ServiceHolds.of({
    place: (hold) =>
      Effect.gen(function*() {
        const [placed] = yield* insert(hold)
        if (placed !== undefined) return { hold: placed, placed: true }
        // Another hold won the index; it may be lifted again by now, so the answer is whatever is in force.
        const current = yield* inForce(hold.subscriptionId)
        return Option.isSome(current) ? { hold: current.value, placed: false } : { hold, placed: false }
      }).pipe(stored),
    lift: (subscriptionId, { at, by, reason }) => lift({ subscriptionId, by, at, reason }).pipe(stored),
    inForce: (subscriptionId) => inForce(subscriptionId).pipe(stored),
    history: (subscriptionId) => history(subscriptionId).pipe(stored)
  })
})

export const layer = Layer.effect(ServiceHolds, make)
