// Billing profiles in Postgres: one row per user, replaced whole by each save.
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BillingProfile } from "../../domain/billing/invoicing/BillingProfile.ts"
import { BillingProfiles } from "../../ports/BillingProfiles.ts"
import { stored } from "./failures.ts"
import { fromRow, rowOf } from "./jsonRows.ts"

const toRow = rowOf(BillingProfile, ["address", "vatCheck"])
const toProfile = fromRow(BillingProfile)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return BillingProfiles.of({
    get: (userId) =>
      sql`SELECT * FROM billing_profiles WHERE user_id = ${userId}`.pipe(
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.succeedNone : Effect.map(toProfile(rows[0]), Option.some)),
        stored
      ),
    save: (profile) => {
      const row = toRow(profile)
      return sql`INSERT INTO billing_profiles ${sql.insert(row)}
                 ON CONFLICT (user_id) DO UPDATE SET ${sql.update(row, ["user_id"])}`.pipe(Effect.asVoid, stored)
    }
  })
})

export const layer = Layer.effect(BillingProfiles, make)
