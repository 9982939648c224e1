// Forgot / reset password: a single-use, one-hour token delivered by e-mail, stored only as a digest.
import { Clock, Duration, Effect, Option, type Redacted } from "effect"
import { Digest, SecureRandom } from "effect/crypto"
import { LoginAttempts } from "../../ports/LoginAttempts.ts"
import { Mailer } from "../../ports/Mailer.ts"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"
import { PasswordResets, ResetNotRedeemable } from "../../ports/PasswordResets.ts"
import { SessionRecords } from "../../ports/SessionRecords.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { recordAudit } from "../audit/record.ts"
import { ResetTokenExpired, ResetTokenInvalid, ResetTokenUsed } from "./AccountErrors.ts"
import { AccountSettings } from "./AccountSettings.ts"
import { checkPasswordPolicy, normaliseEmail } from "./Credentials.ts"
import { admitReset, signInLifted } from "./LoginThrottle.ts"
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

const mapRefusal = <A, E, R>(effect: Effect.Effect<A, E | ResetNotRedeemable, R>) =>
  Effect.catchIf(effect, (e): e is ResetNotRedeemable => e instanceof ResetNotRedeemable, (e) =>
    Effect.fail(
      e.reason === "EXPIRED" ? new ResetTokenExpired() : e.reason === "USED" ? new ResetTokenUsed() : new ResetTokenInvalid()
    ))

/**
 * Redeems the token once (even under concurrent use), sets the new password and ends every session of the user.
 * Attempts are counted per address first; the token is checked before the password is hashed, so a bogus token
 * costs a lookup, never a hash.
 */
export const resetPassword = Effect.fn("resetPassword")(function*(input: {
  readonly token: string
  readonly password: Redacted.Redacted<string>
  /** The client's address, when known. */
  readonly address: string | undefined
}) {
  yield* admitReset(input.address, new Date(yield* Clock.currentTimeMillis))
  yield* checkPasswordPolicy(input.password)
  if (!/^[0-9a-f]{64}$/.test(input.token)) return yield* new ResetTokenInvalid()
  const digest = yield* digestOf(input.token)
  const resets = yield* PasswordResets
  yield* resets.check(digest, new Date(yield* Clock.currentTimeMillis)).pipe(mapRefusal)
  // The slow part stays outside the transaction; the token is redeemed only once the hash is ready.
  const hash = yield* (yield* PasswordHasher).hash(input.password)
  const users = yield* Users
  const sessions = yield* SessionRecords
  const redeemedAt = new Date(yield* Clock.currentTimeMillis)
  const userId = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    const owner = yield* resets.redeem(digest, redeemedAt)
    yield* users.setPasswordHash(owner, hash)
    const ended = yield* sessions.endAllOf(owner)
    // In the reset's transaction: the log says a reset happened exactly when it did.
    yield* recordAudit({
      actorId: owner,
      actorRole: "customer",
      action: "auth.password_reset",
      subjectUserId: owner,
      address: input.address ?? null,
      details: { sessionsEnded: ended }
    })
    return owner
  })).pipe(mapRefusal)
  const user = yield* users.findById(userId)
  if (Option.isSome(user)) yield* signInLifted(user.value.email, input.address)
})
