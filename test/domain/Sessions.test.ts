// Specification of signing in and of the per-request session check: credentials, constant-time unknown
// accounts, rehashing, lifetimes, sliding expiry with an absolute cap, revocation, tampering.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import * as FastPasswordHasher from "../../adapters/fake/FastPasswordHasher.ts"
import * as JoseSessionTokens from "../../adapters/crypto/JoseSessionTokens.ts"
import { requestPasswordReset, resetPassword } from "../../domain/account/PasswordReset.ts"
import { authenticate, login, revokeAllSessions } from "../../domain/account/Sessions.ts"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"
import { Users } from "../../ports/Users.ts"
import { domainEnv, HasherCalls, mailedResetToken, outcome, registered } from "../support/domainEnv.ts"

const signIn = (options: { readonly email?: string; readonly password?: string; readonly rememberMe?: boolean } = {}) =>
  login({
    email: options.email ?? "alice@example.com",
    password: Redacted.make(options.password ?? "correct horse"),
    rememberMe: options.rememberMe ?? false,
    address: undefined
  })

/** Why `authenticate` refuses the token. */
const rejection = (token: string | undefined) => Effect.map(Effect.flip(authenticate(token)), (e) => e.reason)

const storedHash = Effect.flatMap(Users, (users) => users.findByEmail("alice@example.com")).pipe(
  Effect.map((u) => Option.getOrThrow(u).passwordHash)
)

describe("login", () => {
  it.effect("with the right password returns a session whose token authenticate accepts", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      const session = yield* signIn()
      assert.strictEqual(session.user.id, alice.id)
      const current = yield* authenticate(session.token)
      assert.strictEqual(current.user.id, alice.id)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with a wrong password fails InvalidCredentials", () =>
    Effect.gen(function*() {
      yield* registered()
      assert.strictEqual((yield* Effect.flip(signIn({ password: "wrong horse" })))._tag, "InvalidCredentials")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with an unknown e-mail fails the same InvalidCredentials", () =>
    Effect.gen(function*() {
      yield* registered()
      assert.strictEqual((yield* Effect.flip(signIn({ email: "bob@example.com" })))._tag, "InvalidCredentials")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with an unknown e-mail still spends one password check, against the decoy hash", () =>
    Effect.gen(function*() {
      const hasher = yield* PasswordHasher
      yield* Effect.flip(signIn({ email: "nobody@example.com" }))
      assert.deepStrictEqual(yield* (yield* HasherCalls).verified, [hasher.decoy])
    }).pipe(Effect.provide(domainEnv())))

  it.effect("matches the e-mail whatever its case and surrounding spaces", () =>
    Effect.gen(function*() {
      const alice = yield* registered({ email: "Alice@Example.com" })
      const session = yield* signIn({ email: "  ALICE@example.COM " })
      assert.strictEqual(session.user.id, alice.id)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("rehashes a password stored at a lower cost than the configured one", () =>
    Effect.gen(function*() {
      yield* registered().pipe(Effect.provideService(PasswordHasher, FastPasswordHasher.make(8)))
      assert.match(yield* storedHash, /^fake\$8\$/)
      yield* signIn()
      assert.match(yield* storedHash, /^fake\$12\$/)
      yield* signIn()
    }).pipe(Effect.provide(domainEnv({ cost: 12 }))))

  it.effect("does not rehash a password stored at the configured cost", () =>
    Effect.gen(function*() {
      yield* registered()
      const calls = yield* HasherCalls
      const hashesAfterRegistration = yield* calls.hashes
      yield* signIn()
      assert.strictEqual(yield* calls.hashes, hashesAfterRegistration)
    }).pipe(Effect.provide(domainEnv({ cost: 12 }))))

  it.effect("a rehash keeps earlier sessions valid", () =>
    Effect.gen(function*() {
      yield* registered().pipe(Effect.provideService(PasswordHasher, FastPasswordHasher.make(8)))
      const first = yield* signIn().pipe(Effect.provideService(PasswordHasher, FastPasswordHasher.make(8)))
      yield* signIn()
      assert.match(yield* storedHash, /^fake\$12\$/)
      yield* authenticate(first.token)
    }).pipe(Effect.provide(domainEnv({ cost: 12 }))))
})

describe("login racing a password reset", () => {
  it.effect("a rehashing login that overlaps a password reset does not bring the old password back", () =>
    Effect.gen(function*() {
      yield* registered().pipe(Effect.provideService(PasswordHasher, FastPasswordHasher.make(8)))
      yield* requestPasswordReset("alice@example.com")
      const token = yield* mailedResetToken
      // A hasher whose rehash of the old password waits until the reset has gone through,
      // as a slow bcrypt rehash would.
      const rehashing = yield* Deferred.make<void>()
      const resetDone = yield* Deferred.make<void>()
      const fast = FastPasswordHasher.make(12)
      const slowRehash = PasswordHasher.of({
        ...fast,
        hash: (password) =>
          Redacted.value(password) === "correct horse"
            ? Deferred.succeed(rehashing, undefined).pipe(
              Effect.andThen(Deferred.await(resetDone)),
              Effect.andThen(fast.hash(password))
            )
            : fast.hash(password)
      })
      const oldLogin = yield* signIn().pipe(Effect.provideService(PasswordHasher, slowRehash), Effect.forkChild)
      yield* Deferred.await(rehashing)
      yield* resetPassword(token, Redacted.make("battery staple"))
      yield* Deferred.succeed(resetDone, undefined)
      yield* Fiber.await(oldLogin)
      assert.strictEqual(yield* outcome(signIn({ password: "battery staple" })), "Success")
      assert.strictEqual(yield* outcome(signIn()), "InvalidCredentials")
    }).pipe(Effect.provide(domainEnv({ cost: 12 }))))
})

describe("session lifetimes", () => {
  it.effect("a remember-me session lasts 12 hours", () =>
    Effect.gen(function*() {
      yield* registered()
      const session = yield* signIn({ rememberMe: true })
      assert.isTrue(session.rememberMe)
      assert.strictEqual(Duration.toMillis(session.lifetime), Duration.toMillis(Duration.hours(12)))
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a browser session lasts the idle lifetime, 2 hours by default", () =>
    Effect.gen(function*() {
      yield* registered()
      const session = yield* signIn()
      assert.isFalse(session.rememberMe)
      assert.strictEqual(Duration.toMillis(session.lifetime), Duration.toMillis(Duration.hours(2)))
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a remember-me token still works after 3 idle hours, when a browser session's would not", () =>
    Effect.gen(function*() {
      yield* registered()
      const remembered = yield* signIn({ rememberMe: true })
      const browser = yield* signIn()
      yield* TestClock.adjust("3 hours")
      yield* authenticate(remembered.token)
      assert.strictEqual(yield* rejection(browser.token), "EXPIRED")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("authenticate slides the expiry: a session used every 30 minutes outlives its first token", () =>
    Effect.gen(function*() {
      yield* registered()
      const first = yield* signIn()
      let token = first.token
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust("30 minutes")
        token = (yield* authenticate(token)).token
      }
      // 2.5 h after sign-in: the first token has expired, the refreshed one has not.
      assert.strictEqual(yield* rejection(first.token), "EXPIRED")
      const current = yield* authenticate(token)
      assert.strictEqual(Duration.toMillis(current.lifetime), Duration.toMillis(Duration.hours(2)))
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a browser-session token left idle 2 hours and 1 second is rejected as EXPIRED", () =>
    Effect.gen(function*() {
      yield* registered()
      const { token } = yield* signIn()
      yield* TestClock.adjust("1 hour")
      const refreshed = (yield* authenticate(token)).token
      yield* TestClock.adjust(Duration.sum(Duration.hours(2), Duration.seconds(1)))
      assert.strictEqual(yield* rejection(refreshed), "EXPIRED")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a token idle just under its lifetime is still accepted", () =>
    Effect.gen(function*() {
      yield* registered()
      const { token } = yield* signIn()
      yield* TestClock.adjust(Duration.subtract(Duration.hours(2), Duration.seconds(1)))
      yield* authenticate(token)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("the absolute lifetime caps sliding: refreshed every hour, a session ends 7 days after sign-in", () =>
    Effect.gen(function*() {
      yield* registered()
      let token = (yield* signIn()).token
      const sevenDaysInHours = 7 * 24
      for (let hour = 1; hour < sevenDaysInHours; hour++) {
        yield* TestClock.adjust("1 hour")
        token = (yield* authenticate(token)).token
      }
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(yield* rejection(token), "EXPIRED")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("near the absolute cap the refreshed session reports only the time left", () =>
    Effect.gen(function*() {
      yield* registered()
      const { token } = yield* signIn({ rememberMe: true })
      let current = token
      for (let i = 0; i < 16; i++) {
        yield* TestClock.adjust("10 hours")
        current = (yield* authenticate(current)).token
      }
      // 160 h after sign-in, 8 h before the 168 h cap: less than the 12 h remember-me lifetime.
      const last = yield* authenticate(current)
      assert.strictEqual(Duration.toMillis(last.lifetime), Duration.toMillis(Duration.hours(8)))
    }).pipe(Effect.provide(domainEnv())))
})

describe("authenticate refuses", () => {
  it.effect("a missing token as MISSING", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* rejection(undefined), "MISSING")
      assert.strictEqual(yield* rejection(""), "MISSING")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("every token issued before revokeAllSessions, as REVOKED", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      const phone = yield* signIn({ rememberMe: true })
      const laptop = yield* signIn()
      yield* revokeAllSessions(alice.id)
      assert.strictEqual(yield* rejection(phone.token), "REVOKED")
      assert.strictEqual(yield* rejection(laptop.token), "REVOKED")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a session opened after revokeAllSessions works", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      yield* signIn()
      yield* revokeAllSessions(alice.id)
      yield* authenticate((yield* signIn()).token)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("every token issued before a password reset, as REVOKED", () =>
    Effect.gen(function*() {
      yield* registered()
      const before = yield* signIn()
      yield* requestPasswordReset("alice@example.com")
      yield* resetPassword(yield* mailedResetToken, Redacted.make("battery staple"))
      assert.strictEqual(yield* rejection(before.token), "REVOKED")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a token whose claims were altered, as INVALID", () =>
    Effect.gen(function*() {
      yield* registered()
      const { token } = yield* signIn()
      const [header, payload, signature] = token.split(".")
      const claims = Buffer.from(payload ?? "", "base64url").toString("utf8")
      const upgraded = claims.replace('"rm":false', '"rm":true')
      assert.notStrictEqual(upgraded, claims)
      const forged = Buffer.from(upgraded).toString("base64url")
      assert.strictEqual(yield* rejection(`${header}.${forged}.${signature}`), "INVALID")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a token signed with another key, as INVALID", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      const otherKey = Redacted.make(new TextEncoder().encode("someone-else's-32-byte-signing-k"))
      const foreign = yield* JoseSessionTokens.make(otherKey).issue(
        { userId: alice.id, sessionVersion: 0, rememberMe: true, signedInAt: 0, expiresAt: 3600 },
        new Date(0)
      )
      assert.strictEqual(yield* rejection(foreign), "INVALID")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("garbage, as INVALID", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* rejection("not-a-jwt"), "INVALID")
    }).pipe(Effect.provide(domainEnv())))
})
