// In-memory PasswordResets with the same single-use guarantee (one atomic modify per redemption).
import { Effect, Layer, Ref, Result } from "effect"
import type { UserId } from "../../domain/account/User.ts"
import { PasswordResets, ResetNotRedeemable } from "../../ports/PasswordResets.ts"

interface Row {
  readonly userId: UserId
  readonly expiresAt: Date
  readonly usedAt: Date | null
  readonly invalidated: boolean
}

/** The owner, when the token can be redeemed at `now`; otherwise why not. */
const redeemable = (row: Row | undefined, now: Date): Result.Result<UserId, ResetNotRedeemable> =>
  row === undefined || row.invalidated
    ? Result.fail(new ResetNotRedeemable({ reason: "UNKNOWN" }))
    : row.usedAt !== null
    ? Result.fail(new ResetNotRedeemable({ reason: "USED" }))
    : row.expiresAt.getTime() <= now.getTime()
    ? Result.fail(new ResetNotRedeemable({ reason: "EXPIRED" }))
    : Result.succeed(row.userId)

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, Row>())
  return PasswordResets.of({
    issue: ({ expiresAt, tokenDigest, userId }) =>
      Ref.update(rows, (m) => {
        const next = new Map<string, Row>()
        for (const [digest, row] of m) {
          next.set(digest, row.userId === userId && row.usedAt === null ? { ...row, invalidated: true } : row)
        }
        return next.set(tokenDigest, { userId, expiresAt, usedAt: null, invalidated: false })
      }),
    check: (digest, now) => Effect.flatMap(Ref.get(rows), (m) => Effect.fromResult(redeemable(m.get(digest), now))),
    redeem: (digest, now) =>
      Ref.modify(rows, (m): readonly [Result.Result<UserId, ResetNotRedeemable>, Map<string, Row>] => {
        const row = m.get(digest)
        const result = redeemable(row, now)
        return [result, Result.isSuccess(result) && row !== undefined ? new Map(m).set(digest, { ...row, usedAt: now }) : m]
      }).pipe(Effect.flatMap(Effect.fromResult))
  })
})

export const layer = Layer.effect(PasswordResets, make)
