// Specification of signing in and of the per-request session check: credentials, constant-time unknown
// accounts, rehashing, lifetimes, sliding expiry with an absolute cap, server-side records (logout, log out
// everywhere, a reset end them; "last seen" written at most once a minute), tampering.
import { NodeCrypto } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Option, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as FastPasswordHasher from "../../adapters/fake/FastPasswordHasher.ts"
import * as JoseSessionTokens from "../../adapters/crypto/JoseSessionTokens.ts"
import { requestPasswordReset, resetPassword } from "../../domain/account/PasswordReset.ts"
import type { SessionId } from "../../domain/account/SessionRecord.ts"
import { authenticate, endAllSessions, endSession, login, sessionIsLive } from "../../domain/account/Sessions.ts"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"
import { SessionRecords } from "../../ports/SessionRecords.ts"
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
const rejection = (token: string | undefined) =>
  Effect.map(Effect.flip(authenticate(token)), (e) => e._tag === "Unauthenticated" ? e.reason : e._tag)

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
      yield* resetPassword({ token, password: Redacted.make("battery staple"), address: undefined })
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

  it.effect("every token issued before endAllSessions, as REVOKED", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      const phone = yield* signIn({ rememberMe: true })
      const laptop = yield* signIn()
      yield* endAllSessions(alice, undefined)
      assert.strictEqual(yield* rejection(phone.token), "REVOKED")
      assert.strictEqual(yield* rejection(laptop.token), "REVOKED")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a session opened after endAllSessions works", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      yield* signIn()
      yield* endAllSessions(alice, undefined)
      yield* authenticate((yield* signIn()).token)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("every token issued before a password reset, as REVOKED", () =>
    Effect.gen(function*() {
      yield* registered()
      const before = yield* signIn()
      yield* requestPasswordReset("alice@example.com")
      yield* resetPassword({ token: yield* mailedResetToken, password: Redacted.make("battery staple"), address: undefined })
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
      const session = yield* signIn()
      const otherKey = Redacted.make(new TextEncoder().encode("someone-else's-32-byte-signing-k"))
      const foreign = yield* (yield* JoseSessionTokens.make(otherKey).pipe(Effect.provide(NodeCrypto.layerMac))).issue(
        { sessionId: session.id, userId: alice.id, rememberMe: true, signedInAt: 0, expiresAt: 3600 },
        new Date(0)
      )
      assert.strictEqual(yield* rejection(foreign), "INVALID")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("garbage, as INVALID", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* rejection("not-a-jwt"), "INVALID")
    }).pipe(Effect.provide(domainEnv())))
})

describe("server-side sessions", () => {
  const record = (id: SessionId) => Effect.flatMap(SessionRecords, (s) => s.find(id))

  it.effect("signing in keeps a record: when, until when at most, the browser and the address", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      yield* TestClock.adjust("1 hour")
      const session = yield* login({
        email: "alice@example.com",
        password: Redacted.make("correct horse"),
        rememberMe: true,
        address: "198.51.100.4",
        userAgent: "Mozilla/5.0 (X11; Linux x86_64)\u0000 " + "x".repeat(400)
      })
      const stored = Option.getOrThrow(yield* record(session.id))
      assert.strictEqual(stored.userId, alice.id)
      assert.isTrue(stored.rememberMe)
      assert.deepStrictEqual(stored.createdAt, new Date(3600_000))
      assert.deepStrictEqual(stored.lastSeenAt, new Date(3600_000))
      assert.deepStrictEqual(stored.expiresAt, new Date(3600_000 + 7 * 24 * 3600_000))
      assert.strictEqual(stored.address, "198.51.100.4")
      assert.strictEqual(stored.userAgent?.length, 256)
      assert.isTrue(stored.userAgent?.startsWith("Mozilla/5.0 (X11; Linux x86_64) x"))
    }).pipe(Effect.provide(domainEnv())))

  it.effect("logging out ends that session only: its token is refused, the user's other sessions go on", () =>
    Effect.gen(function*() {
      yield* registered()
      const laptop = yield* signIn()
      const phone = yield* signIn({ rememberMe: true })
      yield* endSession(laptop.token)
      assert.strictEqual(yield* rejection(laptop.token), "REVOKED")
      assert.isTrue(Option.isNone(yield* record(laptop.id)))
      yield* authenticate(phone.token)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("logging out with an expired token still ends its session, so a refreshed copy of it stops too", () =>
    Effect.gen(function*() {
      yield* registered()
      const first = yield* signIn()
      // A copy of the token kept fresh elsewhere (a stolen cookie in use) while this browser sat idle.
      let copy = first.token
      for (let i = 0; i < 3; i++) {
        yield* TestClock.adjust("1 hour")
        copy = (yield* authenticate(copy)).token
      }
      assert.strictEqual(yield* rejection(first.token), "EXPIRED")
      yield* endSession(first.token)
      assert.strictEqual(yield* rejection(copy), "REVOKED")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("logging out with a forged, foreign or missing token ends nothing", () =>
    Effect.gen(function*() {
      yield* registered()
      const session = yield* signIn()
      const [header, payload] = session.token.split(".")
      yield* endSession(`${header}.${payload}.${"A".repeat(43)}`)
      yield* endSession("garbage")
      yield* endSession(undefined)
      yield* authenticate(session.token)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("\"last seen\" is written at most once a minute however often the session is used", () =>
    Effect.gen(function*() {
      yield* registered()
      const session = yield* signIn()
      const touches = yield* Ref.make(0)
      const sessions = yield* SessionRecords
      const counted = SessionRecords.of({ ...sessions, touch: (id, at) => Effect.andThen(Ref.update(touches, (n) => n + 1), sessions.touch(id, at)) })
      const check = (token: string) => authenticate(token).pipe(Effect.provideService(SessionRecords, counted))
      let token = session.token
      // Four requests a second for three minutes.
      for (let i = 0; i < 720; i++) {
        yield* TestClock.adjust("250 millis")
        token = (yield* check(token)).token
      }
      assert.strictEqual(yield* Ref.get(touches), 3)
      assert.deepStrictEqual(Option.getOrThrow(yield* record(session.id)).lastSeenAt, new Date(180_000))
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a session ends at its absolute cap for consoles too", () =>
    Effect.gen(function*() {
      yield* registered()
      const session = yield* signIn({ rememberMe: true })
      yield* TestClock.adjust("167 hours")
      assert.isTrue(yield* sessionIsLive(session.id))
      yield* TestClock.adjust("1 hour")
      assert.isFalse(yield* sessionIsLive(session.id))
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a sign-in forgets sessions past their cap, anyone's", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* registered({ email: "bob@example.com" })
      const old = yield* signIn({ email: "bob@example.com" })
      yield* TestClock.adjust("169 hours")
      const current = yield* signIn()
      assert.isTrue(Option.isNone(yield* record(old.id)))
      assert.isTrue(Option.isSome(yield* record(current.id)))
    }).pipe(Effect.provide(domainEnv())))
})
