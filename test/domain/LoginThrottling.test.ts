// Specification of sign-in throttling: per account + address and per address in fixed windows (429 until the
// window ends), and per account a ceiling past which guesses are spaced by a doubling pause instead of locked out.
// Attempts are counted before the password check, so concurrent guesses cannot slip past a limit.
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { pauseAfter } from "../../domain/account/LoginThrottle.ts"
import { login } from "../../domain/account/Sessions.ts"
import { domainEnv, HasherCalls, outcome, registered } from "../support/domainEnv.ts"

const stranger = "203.0.113.7"
const owner = "198.51.100.20"

const attempt = (options: { readonly email?: string; readonly password?: string; readonly address?: string } = {}) =>
  login({
    email: options.email ?? "alice@example.com",
    password: Redacted.make(options.password ?? "correct horse"),
    rememberMe: false,
    address: options.address ?? stranger
  })

const wrongPassword = (options: { readonly email?: string; readonly address?: string } = {}) =>
  attempt({ ...options, password: "wrong horse" })

const failTimes = (n: number, options: { readonly email?: string; readonly address?: string } = {}) =>
  Effect.gen(function*() {
    for (let i = 0; i < n; i++) assert.strictEqual(yield* outcome(wrongPassword(options)), "InvalidCredentials")
  })

/** The Retry-After of a refused attempt (fails the test when it was not refused). */
const retryAfter = (effect: ReturnType<typeof attempt>) =>
  Effect.map(Effect.flip(effect), (e) => {
    if (e._tag !== "LoginThrottled") throw new Error(`expected LoginThrottled, got ${e._tag}`)
    return e.retryAfterSeconds
  })

describe("throttling per account and address", () => {
  it.effect("after 5 wrong passwords from one address, the 6th from it is refused until the window ends, even right", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* failTimes(5)
      yield* TestClock.adjust("5 minutes")
      assert.strictEqual(yield* retryAfter(attempt()), 10 * 60)
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(yield* outcome(attempt()), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("the owner signs in from another address meanwhile: a stranger's guesses lock nobody out", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* failTimes(5)
      for (let i = 0; i < 10; i++) assert.strictEqual(yield* outcome(wrongPassword()), "LoginThrottled")
      assert.strictEqual(yield* outcome(attempt({ address: owner })), "Success")
      // And again later in the same window: the owner's address never shared the stranger's count.
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* outcome(attempt({ address: owner })), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a refused attempt does not reach the password check", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* failTimes(5)
      yield* Effect.flip(attempt())
      yield* Effect.flip(attempt())
      assert.strictEqual((yield* (yield* HasherCalls).verified).length, 5)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a successful sign-in clears its address's failures on the account", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* failTimes(4)
      yield* attempt()
      yield* failTimes(5)
      assert.strictEqual(yield* outcome(attempt()), "LoginThrottled")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("failures count against the account whatever the case of the e-mail typed", () =>
    Effect.gen(function*() {
      yield* registered()
      for (const email of ["alice@example.com", "Alice@example.com", "ALICE@EXAMPLE.COM", " alice@Example.com", "aLiCe@example.com"]) {
        assert.strictEqual(yield* outcome(wrongPassword({ email })), "InvalidCredentials")
      }
      assert.strictEqual(yield* outcome(attempt()), "LoginThrottled")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("one account's failures do not throttle another account from the same address", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* registered({ email: "bob@example.com" })
      yield* failTimes(5)
      assert.strictEqual(yield* outcome(attempt()), "LoginThrottled")
      assert.strictEqual(yield* outcome(attempt({ email: "bob@example.com" })), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("20 concurrent wrong passwords from one address: 5 reach the password check, the other 15 are refused", () =>
    Effect.gen(function*() {
      yield* registered()
      const outcomes = yield* Effect.all(
        Array.from({ length: 20 }, () => outcome(wrongPassword())),
        { concurrency: "unbounded" }
      )
      assert.strictEqual((yield* (yield* HasherCalls).verified).length, 5)
      assert.strictEqual(outcomes.filter((o) => o === "InvalidCredentials").length, 5)
      assert.strictEqual(outcomes.filter((o) => o === "LoginThrottled").length, 15)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a client without a known address is counted as one address, not let through", () =>
    Effect.gen(function*() {
      yield* registered()
      const anonymous = (password: string) =>
        login({ email: "alice@example.com", password: Redacted.make(password), rememberMe: false, address: undefined })
      for (let i = 0; i < 5; i++) assert.strictEqual(yield* outcome(anonymous("wrong horse")), "InvalidCredentials")
      assert.strictEqual(yield* outcome(anonymous("correct horse")), "LoginThrottled")
    }).pipe(Effect.provide(domainEnv())))
})

describe("throttling per client address", () => {
  const settings = { maxFailuresPerAddress: 3 }

  it.effect("failures on different accounts from one address add up to the address limit", () =>
    Effect.gen(function*() {
      for (const email of ["a@example.com", "b@example.com", "c@example.com", "d@example.com"]) {
        yield* registered({ email })
      }
      for (const email of ["a@example.com", "b@example.com", "c@example.com"]) {
        assert.strictEqual(yield* outcome(wrongPassword({ email })), "InvalidCredentials")
      }
      assert.strictEqual(yield* outcome(attempt({ email: "d@example.com" })), "LoginThrottled")
    }).pipe(Effect.provide(domainEnv({ settings }))))

  it.effect("another address is not throttled by them", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* registered({ email: "b@example.com" })
      yield* failTimes(3, { email: "b@example.com" })
      assert.strictEqual(yield* outcome(attempt()), "LoginThrottled")
      assert.strictEqual(yield* outcome(attempt({ address: owner })), "Success")
    }).pipe(Effect.provide(domainEnv({ settings }))))

  it.effect("successful sign-ins from an address do not count toward its limit", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* registered({ email: "b@example.com" })
      for (let i = 0; i < 5; i++) yield* attempt()
      yield* failTimes(3, { email: "b@example.com" })
      assert.strictEqual(yield* outcome(attempt()), "LoginThrottled")
    }).pipe(Effect.provide(domainEnv({ settings }))))
})

describe("the account's ceiling: guesses from many addresses are slowed, never locked out", () => {
  const settings = { maxFailuresPerAccount: 4, maxLoginDelay: Duration.seconds(8) }
  /** A guess from a new address each time, as a botnet makes them. */
  let next = 0
  const fromBotnet = () => wrongPassword({ address: `192.0.2.${++next % 250}` })

  it.effect("up to the ceiling guesses go on at once; beyond it each waits a pause that doubles up to the cap", () =>
    Effect.gen(function*() {
      yield* registered()
      for (let i = 0; i < 4; i++) assert.strictEqual(yield* outcome(fromBotnet()), "InvalidCredentials")
      // The first guess beyond goes on and opens a 1 s pause; then 2 s, 4 s, and 8 s (the cap) from there on.
      for (const pause of [1, 2, 4, 8, 8]) {
        assert.strictEqual(yield* outcome(fromBotnet()), "InvalidCredentials")
        assert.strictEqual(yield* retryAfter(fromBotnet()), pause)
        yield* TestClock.adjust(Duration.seconds(pause - 1))
        assert.strictEqual(yield* outcome(fromBotnet()), "LoginThrottled")
        yield* TestClock.adjust("1 second")
      }
    }).pipe(Effect.provide(domainEnv({ settings }))))

  it.effect("the owner, from another address, waits at most the cap and then signs in", () =>
    Effect.gen(function*() {
      yield* registered()
      for (let i = 0; i < 12; i++) yield* outcome(fromBotnet())
      const wait = yield* retryAfter(attempt({ address: owner }))
      assert.isAtMost(wait, 8)
      yield* TestClock.adjust(Duration.seconds(wait))
      assert.strictEqual(yield* outcome(attempt({ address: owner })), "Success")
    }).pipe(Effect.provide(domainEnv({ settings }))))

  it.effect("refused attempts do not lengthen the pause: only guesses that reach the password check do", () =>
    Effect.gen(function*() {
      yield* registered()
      for (let i = 0; i < 5; i++) yield* outcome(fromBotnet())
      // The 1 s pause is open: a hundred refused attempts meanwhile leave the next pause at 2 s.
      for (let i = 0; i < 100; i++) assert.strictEqual(yield* outcome(fromBotnet()), "LoginThrottled")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* outcome(fromBotnet()), "InvalidCredentials")
      assert.strictEqual(yield* retryAfter(fromBotnet()), 2)
    }).pipe(Effect.provide(domainEnv({ settings }))))

  it.effect("20 concurrent guesses from 20 addresses beyond the ceiling: exactly one reaches the password check", () =>
    Effect.gen(function*() {
      yield* registered()
      for (let i = 0; i < 4; i++) yield* outcome(fromBotnet())
      const verifiedBefore = (yield* (yield* HasherCalls).verified).length
      const outcomes = yield* Effect.all(Array.from({ length: 20 }, () => outcome(fromBotnet())), { concurrency: "unbounded" })
      assert.strictEqual(outcomes.filter((o) => o === "InvalidCredentials").length, 1)
      assert.strictEqual((yield* (yield* HasherCalls).verified).length, verifiedBefore + 1)
    }).pipe(Effect.provide(domainEnv({ settings }))))

  it.effect("the window's end forgets the account's guesses", () =>
    Effect.gen(function*() {
      yield* registered()
      for (let i = 0; i < 6; i++) yield* outcome(fromBotnet())
      yield* TestClock.adjust("15 minutes")
      for (let i = 0; i < 4; i++) assert.strictEqual(yield* outcome(fromBotnet()), "InvalidCredentials")
    }).pipe(Effect.provide(domainEnv({ settings }))))

  it("the pause doubles from 1 s and never exceeds the cap", () => {
    const cap = Duration.minutes(1)
    assert.deepStrictEqual([1, 2, 3, 6, 7, 100, 10_000].map((over) => pauseAfter(over, cap)), [1_000, 2_000, 4_000, 32_000, 60_000, 60_000, 60_000])
  })
})
