// Password reset tokens in Postgres: redemption is one conditional UPDATE … RETURNING.
import { Effect, Layer, Option, Result, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { UserId } from "../../domain/account/User.ts"
import { PasswordResets, ResetNotRedeemable } from "../../ports/PasswordResets.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const ResetRow = snakeColumns(Schema.Struct({
  tokenDigest: Schema.String,
  userId: UserId,
  createdAt: Schema.Date,
  expiresAt: Schema.Date
}))
const StateRow = snakeColumns(Schema.Struct({
  userId: UserId,
  usedAt: Schema.NullOr(Schema.Date),
  invalidatedAt: Schema.NullOr(Schema.Date),
  expiresAt: Schema.Date
}))
const Redeem = Schema.Struct({ digest: Schema.String, now: Schema.Date })

/** The owner, when a token in this state can be redeemed at `now`; otherwise why not. */
const redeemable = (state: Option.Option<typeof StateRow.Type>, now: Date): Result.Result<UserId, ResetNotRedeemable> =>
  Option.isNone(state) || state.value.invalidatedAt !== null
    ? Result.fail(new ResetNotRedeemable({ reason: "UNKNOWN" }))
    : state.value.usedAt !== null
    ? Result.fail(new ResetNotRedeemable({ reason: "USED" }))
    : state.value.expiresAt.getTime() <= now.getTime()
    ? Result.fail(new ResetNotRedeemable({ reason: "EXPIRED" }))
    : Result.succeed(state.value.userId)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const stateOf = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: StateRow,
    execute: (digest) =>
      sql`SELECT user_id, used_at, invalidated_at, expires_at FROM password_resets WHERE token_digest = ${digest}`
  })
  const insert = SqlSchema.void({
    Request: ResetRow,
    execute: (row) => sql`INSERT INTO password_resets ${sql.insert(row)}`
  })
  const use = SqlSchema.findOneOption({
    Request: Redeem,
    Result: snakeColumns(Schema.Struct({ userId: UserId })),
    execute: ({ digest, now }) =>
      sql`UPDATE password_resets SET used_at = ${now}
          WHERE token_digest = ${digest} AND used_at IS NULL AND invalidated_at IS NULL AND expires_at > ${now}
          RETURNING user_id`
  })
  return PasswordResets.of({
    check: (digest, now) =>
      stateOf(digest).pipe(
        stored,
        Effect.flatMap((state) => Effect.fromResult(redeemable(state, now)))
      ),
    issue: (reset) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE password_resets SET invalidated_at = ${reset.createdAt}
                   WHERE user_id = ${reset.userId} AND used_at IS NULL AND invalidated_at IS NULL`
        yield* insert(reset)
      })).pipe(stored),
    redeem: (digest, now) =>
      Effect.gen(function*() {
        const won = yield* use({ digest, now })
        if (Option.isSome(won)) return won.value.userId
        // Lost or never valid: say why, for the user's sake. Classifying after the fact cannot let a loser win.
        const why = redeemable(yield* stateOf(digest), now)
        return yield* Result.isFailure(why) ? why.failure : new ResetNotRedeemable({ reason: "EXPIRED" })
      }).pipe(stored)
  })
})

export const layer = Layer.effect(PasswordResets, make)
