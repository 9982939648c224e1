// Specification of the account's trail in the audit log: a sign-in, a failed one (on the account, or for an address
// that names none), a password reset and "log out everywhere" each leave one row, with who, when and from where; a
// customer's security events are theirs only, newest first.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { requestPasswordReset, resetPassword } from "../../../domain/account/PasswordReset.ts"
import { endAllSessions, login } from "../../../domain/account/Sessions.ts"
import { securityEvents } from "../../../domain/backoffice/auditTrail.ts"
import { AuditLog } from "../../../ports/AuditLog.ts"
import { domainEnv, mailedResetToken, registered } from "../../support/domainEnv.ts"

const home = "198.51.100.1"
const at = new Date("2026-03-02T09:00:00.000Z")

const signIn = (password = "correct horse", email = "alice@example.com") =>
  login({ email, password: Redacted.make(password), rememberMe: false, address: home })

const everything = Effect.flatMap(AuditLog, (log) => log.list({ limit: 100 }))

describe("the account's trail", () => {
  it.effect("a sign-in is recorded with its time, address and session, by the user on their own account", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at.getTime())
      const alice = yield* registered()
      const session = yield* signIn()
      const [event, ...rest] = yield* everything
      assert.strictEqual(rest.length, 0)
      assert.strictEqual(event!.action, "auth.sign_in")
      assert.strictEqual(event!.actorId, alice.id)
      assert.strictEqual(event!.actorRole, "customer")
      assert.strictEqual(event!.subjectUserId, alice.id)
      assert.strictEqual(event!.address, home)
      assert.deepStrictEqual(event!.at, at)
      assert.deepStrictEqual(event!.details, { rememberMe: false, session: session.id })
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a failed sign-in joins the account's trail; one for an unknown address keeps the address tried", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      yield* Effect.flip(signIn("wrong password"))
      yield* Effect.flip(signIn("whatever", "nobody@example.com"))
      const [unknown, wrong] = yield* everything
      assert.strictEqual(wrong!.action, "auth.sign_in_failed")
      assert.strictEqual(wrong!.subjectUserId, alice.id)
      assert.strictEqual(wrong!.actorRole, "anonymous")
      assert.isNull(wrong!.actorId)
      assert.isNull(wrong!.details)
      assert.strictEqual(unknown!.action, "auth.sign_in_failed")
      assert.isNull(unknown!.subjectUserId)
      assert.deepStrictEqual(unknown!.details, { email: "nobody@example.com" })
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a password reset is recorded with how many sessions it ended", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      yield* signIn()
      yield* signIn()
      yield* requestPasswordReset("alice@example.com")
      yield* resetPassword({ token: yield* mailedResetToken, password: Redacted.make("battery staple"), address: home })
      const reset = (yield* everything).find((e) => e.action === "auth.password_reset")
      assert.strictEqual(reset?.subjectUserId, alice.id)
      assert.strictEqual(reset?.address, home)
      assert.deepStrictEqual(reset?.details, { sessionsEnded: 2 })
    }).pipe(Effect.provide(domainEnv())))

  it.effect("log out everywhere is recorded with the address it came from", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      yield* signIn()
      yield* endAllSessions(alice, "203.0.113.9")
      const [event] = yield* everything
      assert.strictEqual(event!.action, "auth.logout_all")
      assert.strictEqual(event!.address, "203.0.113.9")
      assert.deepStrictEqual(event!.details, { sessionsEnded: 1 })
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a customer's security events are their own account's only, newest first, paged", () =>
    Effect.gen(function*() {
      const alice = yield* registered()
      const bob = yield* registered({ email: "bob@example.com" })
      yield* signIn()
      yield* Effect.flip(signIn("wrong"))
      yield* signIn("correct horse", "bob@example.com")
      yield* endAllSessions(alice, home)
      const first = yield* securityEvents(alice.id, { limit: 2 })
      assert.deepStrictEqual(first.events.map((e) => e.action), ["auth.logout_all", "auth.sign_in_failed"])
      const second = yield* securityEvents(alice.id, { before: first.next, limit: 2 })
      assert.deepStrictEqual(second.events.map((e) => e.action), ["auth.sign_in"])
      assert.isUndefined(second.next)
      const bobs = yield* securityEvents(bob.id, { limit: 10 })
      assert.deepStrictEqual(bobs.events.map((e) => e.subjectUserId), [bob.id])
    }).pipe(Effect.provide(domainEnv())))
})
