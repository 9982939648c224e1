// One Renewals contract (and the subscriptions the renewal looks after), run against the in-memory fakes, embedded
// PGlite and (when configured) real Postgres: every move of a period's record is a compare-and-set.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemoryRenewals from "../../adapters/fake/MemoryRenewals.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgOrders from "../../adapters/postgres/PgOrders.ts"
import * as PgRenewals from "../../adapters/postgres/PgRenewals.ts"
import * as PgSubscriptions from "../../adapters/postgres/PgSubscriptions.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { Orders } from "../../ports/Orders.ts"
import { Renewals } from "../../ports/Renewals.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { subscriptionOf } from "../support/subscriptionMother.ts"
import { newUser } from "../support/userMother.ts"

const now = new Date("2026-03-01T10:00:00.000Z")
const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000)

/** A subscription of a new customer (the tables reference users and orders), its period ending at `end`. */
const subscribe = (end: Date = now) =>
  Effect.gen(function*() {
    const user = yield* (yield* Users).insert(newUser(`renewals-${randomUUID()}@example.com`))
    return yield* subscriptionOf(user.id, { at: at(-60 * 24 * 30), periodEnd: end })
  })

const opened = (end: Date = now) =>
  Effect.gen(function*() {
    const subscription = yield* subscribe(end)
    const record = yield* (yield* Renewals).open({ subscriptionId: subscription.id, periodStart: end, amountCents: 999, now: at(-60) })
    return { subscription, record }
  })

const contract = (name: string, impl: Layer.Layer<Renewals | Subscriptions | Orders | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a period's record is opened once, scheduled at the period's start", () =>
      Effect.gen(function*() {
        const { record, subscription } = yield* opened()
        assert.deepStrictEqual(record, {
          subscriptionId: subscription.id,
          periodStart: now,
          amountCents: 999,
          status: "scheduled",
          attempts: 0,
          lastFailure: null,
          nextAttemptAt: now,
          payUrl: null,
          chargeReference: null,
          remindedAt: null,
          paidAt: null
        })
        const again = yield* (yield* Renewals).open({ subscriptionId: subscription.id, periodStart: now, amountCents: 1, now })
        assert.deepStrictEqual(again, record)
      }))

    it.effect("an attempt is claimed once it is due, by one of ten claimants at once, and again once the claim lapses", () =>
      Effect.gen(function*() {
        const renewals = yield* Renewals
        const { subscription } = yield* opened()
        assert.isTrue(Option.isNone(yield* renewals.claim(subscription.id, now, at(-1), at(1))))
        const claims = yield* Effect.all(
          Array.from({ length: 10 }, () => renewals.claim(subscription.id, now, now, at(2))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(claims.filter(Option.isSome).length, 1)
        assert.isTrue(Option.isNone(yield* renewals.claim(subscription.id, now, at(1), at(3))))
        assert.isTrue(Option.isSome(yield* renewals.claim(subscription.id, now, at(2), at(4))))
      }))

    it.effect("a failure is recorded once per attempt, releases the claim and sets the next attempt; a paid period moves no more", () =>
      Effect.gen(function*() {
        const renewals = yield* Renewals
        const { subscription } = yield* opened()
        assert.isTrue(Option.isSome(yield* renewals.claim(subscription.id, now, now, at(2))))
        const failure = {
          subscriptionId: subscription.id,
          periodStart: now,
          attempts: 0,
          status: "retrying" as const,
          reason: "insufficient funds",
          nextAttemptAt: at(60 * 24),
          payUrl: null,
          now
        }
        assert.isTrue(yield* renewals.recordFailure(failure))
        assert.isFalse(yield* renewals.recordFailure(failure))
        const retrying = Option.getOrThrow(yield* renewals.get(subscription.id, now))
        assert.deepInclude(retrying, { status: "retrying", attempts: 1, lastFailure: "insufficient funds", nextAttemptAt: at(60 * 24) })
        assert.isTrue(Option.isNone(yield* renewals.claim(subscription.id, now, at(1), at(3))))
        assert.isTrue(Option.isSome(yield* renewals.claim(subscription.id, now, at(60 * 24), at(60 * 24 + 2))))
        assert.isTrue(yield* renewals.recordFailure({ ...failure, attempts: 1, status: "awaiting_authentication", nextAttemptAt: null, payUrl: "https://pay.test/1" }))
        assert.deepInclude(Option.getOrThrow(yield* renewals.get(subscription.id, now)), { status: "awaiting_authentication", attempts: 2, payUrl: "https://pay.test/1" })
        assert.isTrue(yield* renewals.markPaid(subscription.id, now, "pi_1", at(5)))
        assert.isFalse(yield* renewals.markPaid(subscription.id, now, "pi_2", at(6)))
        assert.isFalse(yield* renewals.recordFailure({ ...failure, attempts: 2 }))
        assert.deepInclude(Option.getOrThrow(yield* renewals.get(subscription.id, now)), { status: "paid", chargeReference: "pi_1", paidAt: at(5), nextAttemptAt: null })
      }))

    it.effect("the reminder is marked once; the latest record of each subscription is read", () =>
      Effect.gen(function*() {
        const renewals = yield* Renewals
        const { subscription } = yield* opened()
        assert.isTrue(yield* renewals.markReminded(subscription.id, now, at(-10)))
        assert.isFalse(yield* renewals.markReminded(subscription.id, now, at(-9)))
        yield* renewals.open({ subscriptionId: subscription.id, periodStart: at(60 * 24 * 30), amountCents: 999, now })
        const other = yield* opened()
        const latest = yield* renewals.latest([subscription.id, other.subscription.id])
        assert.deepStrictEqual(
          latest.map((r) => [r.subscriptionId, r.periodStart.getTime()]).sort(),
          [[subscription.id, at(60 * 24 * 30).getTime()], [other.subscription.id, now.getTime()]].sort()
        )
        assert.deepStrictEqual(yield* renewals.latest([]), [])
      }))

    it.effect("the renewal looks after active and suspended subscriptions ending by then, never a cancelled or ended one", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const active = yield* subscribe(at(-5))
        const suspended = yield* subscribe(at(-5))
        assert.isTrue(yield* subscriptions.transition(suspended.id, { from: "active", to: "suspended" }))
        const cancelled = yield* subscribe(at(-5))
        yield* subscriptions.setCancelAtPeriodEnd(cancelled.id, true)
        const terminated = yield* subscribe(at(-5))
        assert.isTrue(yield* subscriptions.transition(terminated.id, { from: "active", to: "failed" }))
        const later = yield* subscribe(at(60))
        const ids = (yield* subscriptions.renewable(now)).map((s) => s.id)
        assert.includeMembers(ids, [active.id, suspended.id])
        for (const excluded of [cancelled.id, terminated.id, later.id]) assert.notInclude(ids, excluded)
      }))
  })

describe("renewals contract", () => {
  contract("in memory", Layer.mergeAll(MemoryRenewals.layer, MemorySubscriptions.layer, MemoryOrders.layer, MemoryUsers.layer))
  for (const [backend, db] of sqlBackends()) {
    contract(backend, Layer.mergeAll(PgRenewals.layer, PgSubscriptions.layer, PgOrders.layer, PgUsers.layer).pipe(Layer.provide(db)))
  }
})
