// Specification of forgot / reset password: one mailed link per request, a one-hour single-use token
// stored only as its SHA-256, the newest request wins, a reset revokes sessions and lifts throttling, and a reset
// attempt costs no hashing unless its token is good, and is throttled per address.
import { createHash } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { SentMail } from "../../adapters/fake/MemoryMailer.ts"
import { requestPasswordReset, resetPassword } from "../../domain/account/PasswordReset.ts"
import { login } from "../../domain/account/Sessions.ts"
import { PasswordResets } from "../../ports/PasswordResets.ts"
import { domainEnv, HasherCalls, mailedResetToken, outcome, publicUrl, registered } from "../support/domainEnv.ts"

const sentMail = Effect.flatMap(SentMail, (sent) => sent.messages)

/** Alice's own address, where she signs in and resets from unless a test says otherwise. */
const home = "198.51.100.1"

const signIn = (password: string, address = home) =>
  login({ email: "alice@example.com", password: Redacted.make(password), rememberMe: false, address })

const reset = (token: string, password = "battery staple", address = home) =>
  resetPassword({ token, password: Redacted.make(password), address })

/** Registers Alice, asks for a reset, and returns the token from the mailed link. */
const aliceAsksForAReset = Effect.gen(function*() {
  yield* registered()
  yield* requestPasswordReset("alice@example.com")
  return yield* mailedResetToken
})

describe("requesting a password reset", () => {
  it.effect("for an unknown e-mail sends nothing and does not fail", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* requestPasswordReset("nobody@example.com")
      assert.deepStrictEqual(yield* sentMail, [])
    }).pipe(Effect.provide(domainEnv())))

  it.effect("for a known e-mail, typed in any case, sends one mail to the account's address", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* requestPasswordReset("  ALICE@Example.com ")
      const messages = yield* sentMail
      assert.strictEqual(messages.length, 1)
      assert.strictEqual(messages[0]?.to, "alice@example.com")
    }).pipe(Effect.provide(domainEnv())))

  for (const [language, subject] of [["fr", "Réinitialisation de votre mot de passe ZH"], ["en", "Reset your ZH password"]] as const) {
    it.effect(`writes to a user whose language is ${language} in that language`, () =>
      Effect.gen(function*() {
        yield* registered({ language })
        yield* requestPasswordReset("alice@example.com")
        assert.strictEqual((yield* sentMail)[0]?.subject, subject)
      }).pipe(Effect.provide(domainEnv())))
  }

  it.effect("sends at most five mails per account per hour, silently, then again after the hour", () =>
    Effect.gen(function*() {
      yield* registered()
      for (let i = 0; i < 8; i++) yield* requestPasswordReset("alice@example.com")
      assert.strictEqual((yield* sentMail).length, 5)
      yield* TestClock.adjust("61 minutes")
      yield* requestPasswordReset("alice@example.com")
      assert.strictEqual((yield* sentMail).length, 6)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("puts the same link, with a 64-hex-character token, in the text and the HTML", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      const link = `${publicUrl}/reset-password?token=${token}`
      const [message] = yield* sentMail
      assert.match(token, /^[0-9a-f]{64}$/)
      assert.include(message?.text, link)
      assert.include(message?.html, `href="${link}"`)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("mails a different token each time", () =>
    Effect.gen(function*() {
      const first = yield* aliceAsksForAReset
      yield* requestPasswordReset("alice@example.com")
      assert.notStrictEqual(yield* mailedResetToken, first)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("stores only the token's SHA-256, never the token itself", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      yield* requestPasswordReset("alice@example.com")
      const token = yield* mailedResetToken
      const resets = yield* PasswordResets
      const now = new Date(yield* Clock.currentTimeMillis)
      const refused = yield* Effect.flip(resets.redeem(token, now))
      assert.strictEqual(refused._tag === "ResetNotRedeemable" ? refused.reason : refused._tag, "UNKNOWN")
      const digest = createHash("sha256").update(token).digest("hex")
      assert.strictEqual(yield* resets.redeem(digest, now), alice.id)
    }).pipe(Effect.provide(domainEnv())))
})

describe("resetting the password with the mailed token", () => {
  it.effect("sets the new password: it signs in, the old one no longer does", () =>
    Effect.gen(function*() {
      yield* reset(yield* aliceAsksForAReset, "battery staple")
      assert.strictEqual(yield* outcome(signIn("battery staple")), "Success")
      assert.strictEqual(yield* outcome(signIn("correct horse")), "InvalidCredentials")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("works only once: the second use fails ResetTokenUsed", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      yield* reset(token, "battery staple")
      assert.strictEqual(yield* outcome(reset(token, "mallory's choice")), "ResetTokenUsed")
      assert.strictEqual(yield* outcome(signIn("battery staple")), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("still works 59 minutes after the request", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      yield* TestClock.adjust("59 minutes")
      assert.strictEqual(yield* outcome(reset(token)), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("fails ResetTokenExpired 1 hour and 1 second after the request, and the password stays", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      yield* TestClock.adjust("3601 seconds")
      assert.strictEqual(yield* outcome(reset(token)), "ResetTokenExpired")
      assert.strictEqual(yield* outcome(signIn("correct horse")), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a newer request invalidates the older unused token", () =>
    Effect.gen(function*() {
      const older = yield* aliceAsksForAReset
      yield* requestPasswordReset("alice@example.com")
      const newer = yield* mailedResetToken
      assert.strictEqual(yield* outcome(reset(older)), "ResetTokenInvalid")
      assert.strictEqual(yield* outcome(reset(newer)), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("refuses a malformed token with ResetTokenInvalid", () =>
    Effect.gen(function*() {
      yield* aliceAsksForAReset
      assert.strictEqual(yield* outcome(reset("not-a-token")), "ResetTokenInvalid")
      assert.strictEqual(yield* outcome(reset("")), "ResetTokenInvalid")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("refuses a well-formed token that was never issued with ResetTokenInvalid", () =>
    Effect.gen(function*() {
      yield* aliceAsksForAReset
      assert.strictEqual(yield* outcome(reset("ab".repeat(32))), "ResetTokenInvalid")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("refuses the token's own digest in place of the token", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      const digest = createHash("sha256").update(token).digest("hex")
      assert.strictEqual(yield* outcome(reset(digest)), "ResetTokenInvalid")
      assert.strictEqual(yield* outcome(reset(token)), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("refuses a weak new password with PasswordPolicyViolation and leaves the token usable", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      const error = yield* Effect.flip(reset(token, "short"))
      assert.isTrue(error._tag === "PasswordPolicyViolation" && error.problem === "TOO_SHORT")
      assert.strictEqual(yield* outcome(reset(token, "battery staple")), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("used twice at the same time, succeeds exactly once; the other use fails ResetTokenUsed", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      const outcomes = yield* Effect.all(
        [outcome(reset(token, "first password")), outcome(reset(token, "second password"))],
        { concurrency: "unbounded" }
      )
      assert.sameMembers([...outcomes], ["Success", "ResetTokenUsed"])
      const winner = outcomes[0] === "Success" ? "first password" : "second password"
      assert.strictEqual(yield* outcome(signIn(winner)), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("lifts the login throttle of the owner's own address", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      for (let i = 0; i < 5; i++) yield* Effect.flip(signIn("wrong horse"))
      assert.strictEqual(yield* outcome(signIn("correct horse")), "LoginThrottled")
      yield* reset(token, "battery staple")
      assert.strictEqual(yield* outcome(signIn("battery staple")), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("lifts the pause that guesses from many addresses put on the account", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      // Past the account's ceiling of 3, each guess must wait: the first one beyond goes on and opens a pause.
      for (let i = 0; i < 4; i++) yield* Effect.flip(signIn("wrong horse", `203.0.113.${i}`))
      assert.strictEqual(yield* outcome(signIn("correct horse")), "LoginThrottled")
      yield* reset(token, "battery staple")
      assert.strictEqual(yield* outcome(signIn("battery staple")), "Success")
    }).pipe(Effect.provide(domainEnv({ settings: { maxFailuresPerAccount: 3 } }))))
})

describe("what a reset attempt costs", () => {
  it.effect("a token that cannot be redeemed is refused before any password is hashed", () =>
    Effect.gen(function*() {
      const used = yield* aliceAsksForAReset
      yield* reset(used)
      yield* requestPasswordReset("alice@example.com")
      const expiring = yield* mailedResetToken
      yield* TestClock.adjust("61 minutes")
      const calls = yield* HasherCalls
      const before = yield* calls.hashes
      assert.strictEqual(yield* outcome(reset("ab".repeat(32))), "ResetTokenInvalid")
      assert.strictEqual(yield* outcome(reset(used)), "ResetTokenUsed")
      assert.strictEqual(yield* outcome(reset(expiring)), "ResetTokenExpired")
      assert.strictEqual(yield* calls.hashes, before)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("16 concurrent resets with bogus tokens hash nothing", () =>
    Effect.gen(function*() {
      yield* aliceAsksForAReset
      const calls = yield* HasherCalls
      const before = yield* calls.hashes
      const outcomes = yield* Effect.all(
        Array.from({ length: 16 }, (_, i) => outcome(reset(i.toString(16).padStart(64, "c"), "battery staple", `203.0.113.${i}`))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(new Set(outcomes), new Set(["ResetTokenInvalid"]))
      assert.strictEqual(yield* calls.hashes, before)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("past 10 attempts from one address in the window, the next is refused with the time left; other addresses are not", () =>
    Effect.gen(function*() {
      const token = yield* aliceAsksForAReset
      for (let i = 0; i < 10; i++) assert.strictEqual(yield* outcome(reset("ab".repeat(32), "x", "203.0.113.9")), "PasswordPolicyViolation")
      yield* TestClock.adjust("5 minutes")
      const refused = yield* Effect.flip(reset(token, "battery staple", "203.0.113.9"))
      assert.isTrue(refused._tag === "ResetThrottled" && refused.retryAfterSeconds === 10 * 60, JSON.stringify(refused))
      assert.strictEqual(yield* outcome(reset(token, "battery staple", "198.51.100.77")), "Success")
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(yield* outcome(reset("ab".repeat(32), "battery staple", "203.0.113.9")), "ResetTokenInvalid")
    }).pipe(Effect.provide(domainEnv())))
})
