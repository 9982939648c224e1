// Password reset tokens in Postgres: redemption is one conditional UPDATE … RETURNING.
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { UserId } from "../../domain/account/User.ts"
import { PasswordResets, ResetNotRedeemable } from "../../ports/PasswordResets.ts"

const Owner = Schema.Array(Schema.Struct({ user_id: UserId }))
const State = Schema.Array(Schema.Struct({ used_at: Schema.NullOr(Schema.Date), invalidated_at: Schema.NullOr(Schema.Date) }))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return PasswordResets.of({
    issue: ({ createdAt, expiresAt, tokenDigest, userId }) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE password_resets SET invalidated_at = ${createdAt}
                   WHERE user_id = ${userId} AND used_at IS NULL AND invalidated_at IS NULL`
        yield* sql`INSERT INTO password_resets ${sql.insert({
          token_digest: tokenDigest,
          user_id: userId,
          created_at: createdAt,
          expires_at: expiresAt
        })}`
      })).pipe(Effect.orDie),
    redeem: (digest, now) =>
      Effect.gen(function*() {
        const won = yield* sql`UPDATE password_resets SET used_at = ${now}
                   WHERE token_digest = ${digest} AND used_at IS NULL AND invalidated_at IS NULL
                     AND expires_at > ${now}
                   RETURNING user_id`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Owner)))
        const owner = won[0]
        if (owner !== undefined) return owner.user_id
        // Lost or never valid: say why, for the user's sake. Classifying after the fact cannot let a loser win.
        const state = (yield* sql`SELECT used_at, invalidated_at FROM password_resets WHERE token_digest = ${digest}`.pipe(
          Effect.flatMap(Schema.decodeUnknownEffect(State))
        ))[0]
        const reason = state === undefined || state.invalidated_at !== null
          ? "UNKNOWN"
          : state.used_at !== null
          ? "USED"
          : "EXPIRED"
        return yield* new ResetNotRedeemable({ reason })
      }).pipe(Effect.catchTag(["SqlError", "SchemaError"], Effect.die))
  })
})

export const layer = Layer.effect(PasswordResets, make)
