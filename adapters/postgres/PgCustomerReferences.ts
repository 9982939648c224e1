// The holders of a reference in one statement: an invoice number (unique index, numbers are upper-case), a VPS's or
// a game server's address (the text_pattern_ops indexes of migration 20 serve equality too), newest holder first.
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { CustomerReferences } from "../../ports/CustomerReferences.ts"
import { stored } from "./failures.ts"

const Holder = Schema.Struct({ userId: Schema.String })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return CustomerReferences.of({
    holders: (reference, limit) =>
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: Holder,
        execute: () =>
          sql`SELECT user_id AS "userId" FROM (
                SELECT user_id, issued_at AS at FROM invoices WHERE number = ${reference.toUpperCase()}
                UNION ALL SELECT user_id, created_at AS at FROM vps WHERE address = ${reference}
                UNION ALL SELECT user_id, created_at AS at FROM game_servers WHERE address = ${reference.toLowerCase()}
              ) held GROUP BY user_id ORDER BY max(at) DESC LIMIT ${limit}`
      })(undefined).pipe(Effect.map((rows) => rows.map((r) => r.userId)), stored)
  })
})

export const layer = Layer.effect(CustomerReferences, make)
