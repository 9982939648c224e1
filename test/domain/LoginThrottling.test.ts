// Specification of login throttling: per account and per client address, in fixed windows, counted
// before the password check so that concurrent guesses cannot slip past the limit.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { login } from "../../domain/account/Sessions.ts"
import { domainEnv, HasherCalls, outcome, registered } from "../support/domainEnv.ts"

const attempt = (options: { readonly email?: string; readonly password?: string; readonly address?: string } = {}) =>
  login({
    email: options.email ?? "alice@example.com",
    password: Redacted.make(options.password ?? "correct horse"),
    rememberMe: false,
    address: options.address
  })

const wrongPassword = (options: { readonly email?: string; readonly address?: string } = {}) =>
  attempt({ ...options, password: "wrong horse" })

const failTimes = (n: number, options: { readonly email?: string; readonly address?: string } = {}) =>
  Effect.gen(function*() {
    for (let i = 0; i < n; i++) assert.strictEqual(yield* outcome(wrongPassword(options)), "InvalidCredentials")
  })

describe("throttling per account", () => {
  it.effect("after 5 wrong passwords, the 6th attempt is throttled even with the right password", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* failTimes(5)
      yield* TestClock.adjust("5 minutes")
      const error = yield* Effect.flip(attempt())
      assert.isTrue(error._tag === "LoginThrottled" && error.retryAfterSeconds === 10 * 60)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a throttled attempt does not reach the password check", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* failTimes(5)
      yield* Effect.flip(attempt())
      yield* Effect.flip(attempt())
      assert.strictEqual((yield* (yield* HasherCalls).verified).length, 5)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("once the 15-minute window has passed, the right password works again", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* failTimes(5)
      assert.strictEqual(yield* outcome(attempt()), "LoginThrottled")
      yield* TestClock.adjust("15 minutes")
      assert.strictEqual(yield* outcome(attempt()), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a successful login clears the account's failures", () =>
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

  it.effect("one account's failures do not throttle another account", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* registered({ email: "bob@example.com" })
      yield* failTimes(5)
      assert.strictEqual(yield* outcome(attempt()), "LoginThrottled")
      assert.strictEqual(yield* outcome(attempt({ email: "bob@example.com" })), "Success")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("20 concurrent wrong passwords: 5 reach the password check, the other 15 are throttled", () =>
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
})

describe("throttling per client address", () => {
  const settings = { maxFailuresPerAddress: 3 }
  const address = "203.0.113.7"

  it.effect("failures on different accounts from one address add up to the address limit", () =>
    Effect.gen(function*() {
      for (const email of ["a@example.com", "b@example.com", "c@example.com", "d@example.com"]) {
        yield* registered({ email })
      }
      for (const email of ["a@example.com", "b@example.com", "c@example.com"]) {
        assert.strictEqual(yield* outcome(wrongPassword({ email, address })), "InvalidCredentials")
      }
      assert.strictEqual(yield* outcome(attempt({ email: "d@example.com", address })), "LoginThrottled")
    }).pipe(Effect.provide(domainEnv({ settings }))))

  it.effect("another address is not throttled by them", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* registered({ email: "b@example.com" })
      yield* failTimes(3, { email: "b@example.com", address })
      assert.strictEqual(yield* outcome(attempt({ address })), "LoginThrottled")
      assert.strictEqual(yield* outcome(attempt({ address: "198.51.100.20" })), "Success")
    }).pipe(Effect.provide(domainEnv({ settings }))))

  it.effect("successful logins from an address do not count toward its limit", () =>
    Effect.gen(function*() {
      yield* registered()
      yield* registered({ email: "b@example.com" })
      for (let i = 0; i < 5; i++) yield* attempt({ address })
      yield* failTimes(3, { email: "b@example.com", address })
      assert.strictEqual(yield* outcome(attempt({ address })), "LoginThrottled")
    }).pipe(Effect.provide(domainEnv({ settings }))))
})
