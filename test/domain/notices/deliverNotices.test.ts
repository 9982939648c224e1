// Specification of the Notices service: one e-mail per event key, sent to the user as they are when it is sent, and
// a mail server that fails retried later by the retry pass, with a doubling pause, until it is given up.
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as MemoryMailer from "../../../adapters/fake/MemoryMailer.ts"
import * as MemoryNoticeRecords from "../../../adapters/fake/MemoryNoticeRecords.ts"
import * as MemoryUsers from "../../../adapters/fake/MemoryUsers.ts"
import { type CustomerNotice, Notices } from "../../../domain/notices/CustomerNotice.ts"
import { layer as NoticesLive, retryAt, retryDueNotices } from "../../../domain/notices/deliverNotices.ts"
import { NoticeSettings } from "../../../domain/notices/NoticeSettings.ts"
import { Users } from "../../../ports/Users.ts"
import { newUser } from "../../support/userMother.ts"
import * as FacturXDocuments from "../../../adapters/documents/FacturXDocuments.ts"
import * as MemoryInvoices from "../../../adapters/fake/MemoryInvoices.ts"

const settings: NoticeSettings["Service"] = {
  publicUrl: "https://panel.zh.test",
  lease: Duration.minutes(2),
  retryBaseDelay: Duration.minutes(1),
  maxRetryDelay: Duration.minutes(10),
  maxAttempts: 3
}

const env = () => {
  const deps = Layer.mergeAll(
    MemoryNoticeRecords.layer,
    MemoryUsers.layer,
    MemoryMailer.layer,
    MemoryInvoices.layer,
    FacturXDocuments.layer,
    Layer.succeed(NoticeSettings, settings)
  )
  return Layer.provideMerge(NoticesLive, deps)
}

const ann = newUser("ann@example.com", { firstName: "Ann", language: "fr" })

const service = { subscriptionId: "sub-1", kind: "vps", planName: "VPS S" }
const ready: CustomerNotice = { _tag: "ServiceReady", userId: ann.id, service, address: "203.0.113.10" }

/** Lets the background deliveries run (in memory, none of them waits on anything). */
const settle = Effect.repeat(Effect.yieldNow, { times: 20 })

const subjects = Effect.gen(function*() {
  yield* settle
  return (yield* (yield* MemoryMailer.SentMail).messages).map((m) => `${m.to} ${m.subject}`)
})

const send = (notice: CustomerNotice) => Effect.flatMap(Notices, (n) => n.send(notice))

describe("Notices", () => {
  it.effect("an event told twenty times at once is e-mailed once", () =>
    Effect.gen(function*() {
      yield* (yield* Users).insert(ann)
      yield* Effect.all(Array.from({ length: 20 }, () => send(ready)), { concurrency: "unbounded" })
      yield* send(ready)
      assert.deepStrictEqual(yield* subjects, ["ann@example.com Votre service VPS S est prêt"])
    }).pipe(Effect.provide(env())))

  it.effect("two events of one service are two e-mails", () =>
    Effect.gen(function*() {
      yield* (yield* Users).insert(ann)
      const suspended = (periodEnd: string): CustomerNotice => ({
        _tag: "ServiceSuspended",
        userId: ann.id,
        service,
        periodEnd: new Date(periodEnd),
        endsAt: new Date(Date.parse(periodEnd) + 7 * 86_400_000)
      })
      yield* send(suspended("2026-03-01T00:00:00Z"))
      yield* send(suspended("2026-04-01T00:00:00Z"))
      yield* send(suspended("2026-03-01T00:00:00Z"))
      assert.strictEqual((yield* subjects).length, 2)
    }).pipe(Effect.provide(env())))

  it.effect("a mail server that fails leaves the notice unsent; the retry pass sends it once, after the pause", () =>
    Effect.gen(function*() {
      yield* (yield* Users).insert(ann)
      const mail = yield* MemoryMailer.SentMail
      yield* mail.failNext("SMTP 421")
      yield* send(ready)
      assert.deepStrictEqual(yield* subjects, [])
      yield* retryDueNotices
      assert.deepStrictEqual(yield* subjects, [], "not before its pause is over")
      yield* TestClock.adjust("1 minute")
      yield* retryDueNotices
      yield* retryDueNotices
      yield* send(ready)
      assert.deepStrictEqual(yield* subjects, ["ann@example.com Votre service VPS S est prêt"])
      yield* TestClock.adjust("1 hour")
      yield* retryDueNotices
      assert.strictEqual((yield* subjects).length, 1)
    }).pipe(Effect.provide(env())))

  it.effect("the e-mail is in the language the user has when it is finally sent", () =>
    Effect.gen(function*() {
      const users = yield* Users
      yield* users.insert(ann)
      yield* (yield* MemoryMailer.SentMail).failNext("SMTP 421")
      yield* send(ready)
      yield* users.setLanguage(ann.id, "en")
      yield* TestClock.adjust("1 minute")
      yield* retryDueNotices
      assert.deepStrictEqual(yield* subjects, ["ann@example.com Your VPS S is ready"])
    }).pipe(Effect.provide(env())))

  it.effect("a notice that keeps failing is given up after its last attempt", () =>
    Effect.gen(function*() {
      yield* (yield* Users).insert(ann)
      const mail = yield* MemoryMailer.SentMail
      yield* mail.failNext("SMTP 421")
      yield* send(ready)
      for (const pause of ["1 minute", "2 minutes"] as const) {
        yield* settle
        yield* mail.failNext("SMTP 421")
        yield* TestClock.adjust(pause)
        yield* retryDueNotices
      }
      yield* settle
      yield* TestClock.adjust("1 day")
      yield* retryDueNotices
      assert.deepStrictEqual(yield* subjects, [])
    }).pipe(Effect.provide(env())))

  it.effect("a notice for an account that does not exist is given up without an e-mail", () =>
    Effect.gen(function*() {
      yield* send({ ...ready, userId: "00000000-0000-4000-8000-0000000000ff" })
      yield* TestClock.adjust("1 day")
      yield* retryDueNotices
      assert.deepStrictEqual(yield* subjects, [])
    }).pipe(Effect.provide(env())))

  it.effect("a notice whose delivery keeps dying (a bug, an unreadable account) is given up after its last attempt", () =>
    Effect.gen(function*() {
      const lookups = yield* Ref.make(0)
      const dying = Layer.effect(Users, Effect.map(MemoryUsers.make, (users) => Users.of({
        ...users,
        findById: () => Effect.andThen(Ref.update(lookups, (n) => n + 1), Effect.die(new Error("unreadable row")))
      })))
      const layer = Layer.provideMerge(NoticesLive, Layer.mergeAll(
        MemoryNoticeRecords.layer,
        dying,
        MemoryMailer.layer,
        MemoryInvoices.layer,
        FacturXDocuments.layer,
        Layer.succeed(NoticeSettings, settings)
      ))
      yield* Effect.gen(function*() {
        yield* send(ready)
        for (const pause of ["1 minute", "2 minutes", "1 day", "1 day"] as const) {
          yield* settle
          yield* TestClock.adjust(pause)
          yield* retryDueNotices
        }
        yield* settle
        assert.strictEqual(yield* Ref.get(lookups), settings.maxAttempts)
        assert.deepStrictEqual(yield* subjects, [])
      }).pipe(Effect.provide(layer))
    }))

  it("waits 1, 2, 4 … minutes between attempts, at most the longest pause, and gives up after the last", () => {
    const base = Date.UTC(2026, 0, 1)
    const long = { ...settings, maxAttempts: 10 }
    assert.deepStrictEqual(
      [1, 2, 3, 4, 5].map((attempt) => (retryAt(long, attempt, base)!.getTime() - base) / 60_000),
      [1, 2, 4, 8, 10]
    )
    assert.isNull(retryAt(settings, 3, base))
  })
})
