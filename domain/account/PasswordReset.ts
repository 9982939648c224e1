// Forgot / reset password: a single-use, one-hour token delivered by e-mail, stored only as a digest.
import { Clock, Duration, Effect, Option, type Redacted } from "effect"
import { Digest, SecureRandom } from "effect/crypto"
import { LoginAttempts } from "../../ports/LoginAttempts.ts"
import { Mailer } from "../../ports/Mailer.ts"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"
import { PasswordResets } from "../../ports/PasswordResets.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { ResetTokenExpired, ResetTokenInvalid, ResetTokenUsed } from "./AccountErrors.ts"
import { AccountSettings } from "./AccountSettings.ts"
import { checkPasswordPolicy, normaliseEmail } from "./Credentials.ts"
import { resetPasswordMail } from "./ResetMail.ts"

const encoder = new TextEncoder()
const toHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

const digestOf = (token: string) =>
  Effect.flatMap(Digest.Digest, (d) => d.digestHex(Digest.sha256, encoder.encode(token)))

/**
 * For an existing account: a new token (32 random bytes, hex) replaces any older unused one and is
 * mailed as a link. For an unknown e-mail nothing happens; callers answer the same either way.
 */
export const requestPasswordReset = Effect.fn("requestPasswordReset")(function*(emailInput: string) {
  const settings = yield* AccountSettings
  const found = yield* (yield* Users).findByEmail(normaliseEmail(emailInput))
  if (Option.isNone(found)) return
  const user = found.value
  const createdAt = new Date(yield* Clock.currentTimeMillis)
  // Nobody can flood someone's mailbox through this form; the answer does not change, so it reveals nothing.
  const requests = yield* (yield* LoginAttempts).hit(
    `reset:${user.id}`,
    createdAt,
    Duration.toMillis(settings.resetTokenLifetime)
  )
  if (requests.count > settings.maxResetRequestsPerAccount) {
    return yield* Effect.logWarning("password reset requests over the limit for one account; not sending")
  }
  const token = toHex(yield* (yield* SecureRandom.SecureRandom).randomBytes(32))
  const expiresAt = new Date(createdAt.getTime() + Duration.toMillis(settings.resetTokenLifetime))
  yield* (yield* PasswordResets).issue({ userId: user.id, tokenDigest: yield* digestOf(token), createdAt, expiresAt })
  const link = `${settings.publicUrl}/reset-password?token=${token}`
  yield* (yield* Mailer).send(resetPasswordMail({
    to: user.email,
    firstName: user.firstName,
    language: user.language,
    link,
    validityMinutes: Math.round(Duration.toMinutes(settings.resetTokenLifetime))
  }))
})

/** Redeems the token once (even under concurrent use), sets the new password and revokes every session. */
export const resetPassword = Effect.fn("resetPassword")(function*(token: string, password: Redacted.Redacted<string>) {
  yield* checkPasswordPolicy(password)
  if (!/^[0-9a-f]{64}$/.test(token)) return yield* new ResetTokenInvalid()
  // Hash first: the slow part stays outside the transaction.
  const hash = yield* (yield* PasswordHasher).hash(password)
  const digest = yield* digestOf(token)
  const now = new Date(yield* Clock.currentTimeMillis)
  const users = yield* Users
  const resets = yield* PasswordResets
  const userId = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    const owner = yield* resets.redeem(digest, now)
    yield* users.setPasswordHash(owner, hash, { revokeSessions: true })
    return owner
  })).pipe(Effect.mapError((e) =>
    e.reason === "EXPIRED" ? new ResetTokenExpired() : e.reason === "USED" ? new ResetTokenUsed() : new ResetTokenInvalid()
  ))
  // Whoever locked the account out by guessing is no longer a reason to keep its owner out.
  const user = yield* users.findById(userId)
  if (Option.isSome(user)) yield* (yield* LoginAttempts).clear(`account:${user.value.email}`)
})
