// In-memory PasswordResets with the same single-use guarantee (one atomic modify per redemption).
import { Effect, Layer, Ref } from "effect"
import type { UserId } from "../../domain/account/User.ts"
import { PasswordResets, ResetNotRedeemable } from "../../ports/PasswordResets.ts"

interface Row {
  readonly userId: UserId
  readonly expiresAt: Date
  readonly usedAt: Date | null
  readonly invalidated: boolean
}

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
    redeem: (digest, now) =>
      Ref.modify(rows, (m): readonly [ResetNotRedeemable | UserId, Map<string, Row>] => {
        const row = m.get(digest)
        if (row === undefined || row.invalidated) return [new ResetNotRedeemable({ reason: "UNKNOWN" }), m]
        if (row.usedAt !== null) return [new ResetNotRedeemable({ reason: "USED" }), m]
        if (row.expiresAt.getTime() <= now.getTime()) return [new ResetNotRedeemable({ reason: "EXPIRED" }), m]
        return [row.userId, new Map(m).set(digest, { ...row, usedAt: now })]
      }).pipe(Effect.flatMap((r) => typeof r === "string" ? Effect.succeed(r) : Effect.fail(r)))
  })
})

export const layer = Layer.effect(PasswordResets, make)
