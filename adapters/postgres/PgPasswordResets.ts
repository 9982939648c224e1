// Password reset tokens in Postgres: redemption is one conditional UPDATE … RETURNING.
import { Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { UserId } from "../../domain/account/User.ts"
import { PasswordResets, ResetNotRedeemable } from "../../ports/PasswordResets.ts"

const Owner = Schema.Array(Schema.Struct({ user_id: UserId }))
const State = Schema.Array(Schema.Struct({
  user_id: UserId,
  used_at: Schema.NullOr(Schema.Date),
  invalidated_at: Schema.NullOr(Schema.Date),
  expires_at: Schema.Date
}))

/** The owner, when a token in this state can be redeemed at `now`; otherwise why not. */
const redeemable = (state: typeof State.Type[number] | undefined, now: Date): Result.Result<UserId, ResetNotRedeemable> =>
  state === undefined || state.invalidated_at !== null
    ? Result.fail(new ResetNotRedeemable({ reason: "UNKNOWN" }))
    : state.used_at !== null
    ? Result.fail(new ResetNotRedeemable({ reason: "USED" }))
    : state.expires_at.getTime() <= now.getTime()
    ? Result.fail(new ResetNotRedeemable({ reason: "EXPIRED" }))
    : Result.succeed(state.user_id)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const stateOf = (digest: string) =>
    sql`SELECT user_id, used_at, invalidated_at, expires_at FROM password_resets WHERE token_digest = ${digest}`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(State)),
      Effect.map((rows) => rows[0])
    )
  return PasswordResets.of({
    check: (digest, now) =>
      stateOf(digest).pipe(
        Effect.catchTag(["SqlError", "SchemaError"], Effect.die),
        Effect.flatMap((state) => Effect.fromResult(redeemable(state, now)))
      ),
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
        const why = redeemable(yield* stateOf(digest), now)
        return yield* Result.isFailure(why) ? why.failure : new ResetNotRedeemable({ reason: "EXPIRED" })
      }).pipe(Effect.catchTag(["SqlError", "SchemaError"], Effect.die))
  })
})

export const layer = Layer.effect(PasswordResets, make)
