// One Subscriptions contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgOrders from "../../adapters/postgres/PgOrders.ts"
import * as PgSubscriptions from "../../adapters/postgres/PgSubscriptions.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { addMonth, PlanId, Subscription, type SubscriptionStatus } from "../../domain/billing/Billing.ts"
import { lapsedFor, stillDue } from "../../domain/billing/lapse.ts"
import { moveSubscription } from "../../domain/billing/subscriptionMoves.ts"
import { Orders } from "../../ports/Orders.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { subscriptionOf } from "../support/subscriptionMother.ts"
import { newUser } from "../support/userMother.ts"

const startedAt = new Date("2026-01-31T12:00:00.000Z")
const periodEnd = addMonth(startedAt)
const afterEnd = (millis: number) => new Date(periodEnd.getTime() + millis)

/** A customer of the same backend (the tables reference users), under a unique e-mail. */
const customer = Effect.map(
  Effect.flatMap(Users, (users) => users.insert(newUser(`subscriptions-${randomUUID()}@example.com`))),
  (user) => user.id
)

/** A subscription opened by its own order (subscriptions reference orders), ending at `end`. */
const subscribe = (userId: string, end: Date = periodEnd, now: Date = startedAt, kind = "vps") =>
  subscriptionOf(userId, { at: now, periodEnd: end, plan: { id: "vps-m", kind, steps: 6 } })

const current = (id: string) => Effect.map(Effect.flatMap(Subscriptions, (s) => s.get(id)), Option.getOrThrow)

const withStatus = (userId: string, status: SubscriptionStatus) =>
  Effect.gen(function*() {
    const subscription = yield* subscribe(userId)
    if (status !== "active") assert.isTrue(yield* (yield* Subscriptions).transition(subscription.id, { from: "active", to: status }))
    return subscription
  })

const contract = (name: string, impl: Layer.Layer<Subscriptions | Orders | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a new subscription is active until its period end, not cancelled, with no service yet", () =>
      Effect.gen(function*() {
        const userId = yield* customer
        const subscription = yield* subscribe(userId)
        assert.deepStrictEqual(
          subscription,
          new Subscription({
            id: subscription.id,
            userId,
            planId: PlanId.make("vps-m"),
            kind: "vps",
            orderId: subscription.orderId,
            status: "active",
            currentPeriodEnd: periodEnd,
            cancelAtPeriodEnd: false,
            serviceId: null,
            withdrawnAt: null,
            createdAt: startedAt
          })
        )
        assert.deepStrictEqual(yield* current(subscription.id), subscription)
        assert.isTrue(Option.isNone(yield* (yield* Subscriptions).get(randomUUID())))
      }))

    it.effect("an order and a subscription of any product's kind are kept, not only a VPS's or a game server's", () =>
      Effect.gen(function*() {
        const subscription = yield* subscribe(yield* customer, periodEnd, startedAt, "dns-zone")
        assert.strictEqual((yield* current(subscription.id)).kind, "dns-zone")
        assert.strictEqual(Option.getOrThrow(yield* (yield* Orders).get(subscription.orderId)).kind, "dns-zone")
      }))

    it.effect("a user's list holds their subscriptions, oldest first, and nobody else's", () =>
      Effect.gen(function*() {
        const userId = yield* customer
        const newer = yield* subscribe(userId, periodEnd, afterEnd(-1000))
        const older = yield* subscribe(userId, periodEnd, startedAt)
        yield* subscribe(yield* customer)
        const listed = yield* (yield* Subscriptions).forUser(userId)
        assert.deepStrictEqual(listed.map((s) => s.id), [older.id, newer.id])
        assert.deepStrictEqual(yield* (yield* Subscriptions).forUser(randomUUID()), [])
      }))

    it.effect("a user's list read a page at a time: oldest first, the same instant by id, each once, nobody else's", () =>
      Effect.gen(function*() {
        const userId = yield* customer
        const made = [
          yield* subscribe(userId, periodEnd, afterEnd(-1000)),
          ...(yield* Effect.forEach([1, 2, 3], () => subscribe(userId, periodEnd, startedAt)))
        ]
        yield* subscribe(yield* customer)
        const expected = [...made].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1))
        const seen: Array<string> = []
        let after: { at: Date; id: string } | null = null
        for (let page = 0; page < 10; page++) {
          const rows: ReadonlyArray<Subscription> = yield* (yield* Subscriptions).pageForUser(userId, after, 3)
          const last = rows[rows.length - 1]
          if (last === undefined) break
          seen.push(...rows.map((r) => r.id))
          after = { at: last.createdAt, id: last.id }
        }
        assert.deepStrictEqual(seen, expected.map((s) => s.id))
      }))

    it.effect("attaching the service and cancelling at period end are recorded, and cancelling can be undone", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const subscription = yield* subscribe(yield* customer)
        const serviceId = randomUUID()
        yield* subscriptions.attachService(subscription.id, serviceId)
        yield* subscriptions.setCancelAtPeriodEnd(subscription.id, true)
        const cancelled = yield* current(subscription.id)
        assert.deepStrictEqual([cancelled.serviceId, cancelled.cancelAtPeriodEnd, cancelled.status], [serviceId, true, "active"])
        yield* subscriptions.setCancelAtPeriodEnd(subscription.id, false)
        assert.isFalse((yield* current(subscription.id)).cancelAtPeriodEnd)
      }))

    it.effect("extend moves the period end from the expected one and makes a suspended subscription active", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const subscription = yield* withStatus(yield* customer, "suspended")
        const next = addMonth(periodEnd)
        assert.isTrue(yield* subscriptions.extend(subscription.id, periodEnd, next))
        const renewed = yield* current(subscription.id)
        assert.deepStrictEqual([renewed.status, renewed.currentPeriodEnd], ["active", next])
      }))

    it.effect("extend with a period end that is no longer current changes nothing", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const subscription = yield* subscribe(yield* customer)
        assert.isTrue(yield* subscriptions.extend(subscription.id, periodEnd, addMonth(periodEnd)))
        assert.isFalse(yield* subscriptions.extend(subscription.id, periodEnd, afterEnd(1)))
        assert.deepStrictEqual((yield* current(subscription.id)).currentPeriodEnd, addMonth(periodEnd))
        assert.isFalse(yield* subscriptions.extend(randomUUID(), periodEnd, addMonth(periodEnd)))
      }))

    it.effect("a terminated or failed subscription is never extended", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const userId = yield* customer
        for (const status of ["terminated", "failed"] as const) {
          const subscription = yield* withStatus(userId, status)
          assert.isFalse(yield* subscriptions.extend(subscription.id, periodEnd, addMonth(periodEnd)))
          const after = yield* current(subscription.id)
          assert.deepStrictEqual([after.status, after.currentPeriodEnd], [status, periodEnd])
        }
      }))

    it.effect("of ten renewals of the same period at the same time, exactly one extends", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const subscription = yield* subscribe(yield* customer)
        const results = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => subscriptions.extend(subscription.id, periodEnd, afterEnd((i + 1) * 1000))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((won) => won).length, 1)
        const winner = results.indexOf(true)
        assert.deepStrictEqual((yield* current(subscription.id)).currentPeriodEnd, afterEnd((winner + 1) * 1000))
      }))

    it.effect("a transition applies only from its status", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const subscription = yield* subscribe(yield* customer)
        assert.isFalse(yield* subscriptions.transition(subscription.id, { from: "suspended", to: "terminated" }))
        assert.strictEqual((yield* current(subscription.id)).status, "active")
        assert.isTrue(yield* subscriptions.transition(subscription.id, { from: "active", to: "suspended" }))
        assert.isTrue(yield* subscriptions.transition(subscription.id, { from: "suspended", to: "terminated" }))
        assert.isFalse(yield* subscriptions.transition(subscription.id, { from: "suspended", to: "active" }))
        assert.strictEqual((yield* current(subscription.id)).status, "terminated")
        assert.isFalse(yield* subscriptions.transition(randomUUID(), { from: "active", to: "failed" }))
      }))

    it.effect("a transition guarded by a period end applies only to that very period, and moves it when told", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const subscription = yield* subscribe(yield* customer)
        assert.isTrue(yield* subscriptions.extend(subscription.id, periodEnd, afterEnd(5_000)))
        const lapse = (end: Date) => subscriptions.transition(subscription.id, { from: "active", to: "suspended", periodEnd: end })
        assert.isFalse(yield* lapse(periodEnd))
        assert.strictEqual((yield* current(subscription.id)).status, "active")
        assert.isTrue(yield* lapse(afterEnd(5_000)))
        assert.strictEqual((yield* current(subscription.id)).status, "suspended")
        assert.isFalse(yield* lapse(afterEnd(5_000)))
        const back = { from: "suspended", to: "active", periodEnd: afterEnd(5_000), nextPeriodEnd: afterEnd(9_000) } as const
        assert.isTrue(yield* subscriptions.transition(subscription.id, back))
        assert.deepStrictEqual(yield* Effect.map(current(subscription.id), (s) => [s.status, s.currentPeriodEnd]), ["active", afterEnd(9_000)])
      }))

    it.effect("a renewal and the lapse of the same period, at once: exactly one of them applies", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        for (let i = 0; i < 10; i++) {
          const subscription = yield* subscribe(yield* customer)
          const [renewed, suspended] = yield* Effect.all([
            subscriptions.extend(subscription.id, periodEnd, afterEnd(60_000)),
            moveSubscription(subscription.id, "lapsed", { periodEnd })
          ], { concurrency: "unbounded" })
          const now = yield* current(subscription.id)
          if (suspended) {
            // Suspended first; the renewal then brought it back with the new period.
            assert.isTrue(renewed)
          }
          assert.strictEqual(now.status, "active")
          assert.deepStrictEqual(now.currentPeriodEnd, afterEnd(60_000))
        }
      }))

    it.effect("of concurrent moves from the same status, exactly one applies", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const subscription = yield* subscribe(yield* customer)
        const results = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) =>
            subscriptions.transition(subscription.id, { from: "active", to: i % 2 === 0 ? "suspended" : "failed" })),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((moved) => moved).length, 1)
      }))

    it.effect("due lists active subscriptions whose period has ended by now, earliest first", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const userId = yield* customer
        const endsNow = yield* subscribe(userId, periodEnd)
        const endedBefore = yield* subscribe(userId, afterEnd(-60_000))
        yield* subscribe(userId, afterEnd(1))
        const suspended = yield* withStatus(userId, "suspended")
        const terminated = yield* withStatus(userId, "terminated")
        const due = (yield* subscriptions.due(periodEnd)).filter((s) => s.userId === userId)
        assert.deepStrictEqual(due.map((s) => s.id), [endedBefore.id, endsNow.id])
        assert.isFalse(due.some((s) => s.id === suspended.id || s.id === terminated.id))
      }))

    it.effect("suspended lists the suspended subscriptions only", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const userId = yield* customer
        const suspended = yield* withStatus(userId, "suspended")
        yield* withStatus(userId, "active")
        yield* withStatus(userId, "failed")
        const mine = (yield* subscriptions.suspended).filter((s) => s.userId === userId)
        assert.deepStrictEqual(mine.map((s) => [s.id, s.status]), [[suspended.id, "suspended"]])
      }))

    it.effect("of ten concurrent withdrawals exactly one applies: terminated, withdrawn then, unsettled until settled", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const subscription = yield* subscribe(yield* customer)
        const at = new Date(startedAt.getTime() + 3 * 86_400_000)
        const results = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => subscriptions.withdraw(subscription.id, new Date(at.getTime() + i))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((moved) => moved).length, 1)
        const withdrawn = yield* current(subscription.id)
        assert.strictEqual(withdrawn.status, "terminated")
        assert.isTrue(withdrawn.withdrawnAt !== null && withdrawn.withdrawnAt.getTime() - at.getTime() < 10)
        assert.isTrue((yield* subscriptions.unsettledWithdrawals).some((s) => s.id === subscription.id))
        yield* subscriptions.withdrawalSettled(subscription.id, at)
        assert.isFalse((yield* subscriptions.unsettledWithdrawals).some((s) => s.id === subscription.id))
        assert.isFalse(yield* subscriptions.withdraw(subscription.id, at))
      }))

    it.effect("a suspended, terminated or failed subscription cannot be withdrawn from", () =>
      Effect.gen(function*() {
        const subscriptions = yield* Subscriptions
        const userId = yield* customer
        for (const status of ["suspended", "terminated", "failed"] as const) {
          const subscription = yield* withStatus(userId, status)
          assert.isFalse(yield* subscriptions.withdraw(subscription.id, startedAt))
          assert.strictEqual((yield* current(subscription.id)).withdrawnAt, null)
        }
      }))
  })

describe("Subscriptions contract", () => {
  contract("in memory", Layer.mergeAll(MemorySubscriptions.layer, MemoryOrders.layer, MemoryUsers.layer))
  for (const [backend, db] of sqlBackends()) {
    contract(backend, Layer.mergeAll(PgSubscriptions.layer, PgOrders.layer, PgUsers.layer).pipe(Layer.provide(db)))
  }
})

// timestamptz keeps microseconds; a JavaScript Date (and so every period end the domain holds) keeps milliseconds.
describe("Subscriptions in PostgreSQL: a period end written with microseconds", () => {
  for (const [backend, db] of sqlBackends()) {
    layer(Layer.mergeAll(PgSubscriptions.layer, PgOrders.layer, PgUsers.layer).pipe(Layer.provideMerge(db)), {
      excludeTestServices: true,
      timeout: "60 seconds"
    })(backend, (it) => {
      /** A subscription whose period end is rewritten by SQL with microseconds, as read back by the port. */
      const withMicroseconds = Effect.gen(function*() {
        const created = yield* subscribe(yield* customer)
        yield* (yield* SqlClient.SqlClient)`UPDATE subscriptions SET current_period_end = '2026-02-28T12:00:00.123456Z'
                                            WHERE id = ${created.id}`
        return Option.getOrThrow(yield* (yield* Subscriptions).get(created.id))
      })

      it.effect("is due, and its lapse suspends it (it is not taken for a racing renewal)", () =>
        Effect.gen(function*() {
          const subscription = yield* withMicroseconds
          const periodEnd = subscription.currentPeriodEnd.toISOString()
          assert.strictEqual(periodEnd, "2026-02-28T12:00:00.123Z")
          assert.isTrue(yield* stillDue(subscription.id, periodEnd))
          assert.isTrue(yield* lapsedFor(subscription.id, periodEnd))
          assert.strictEqual(Option.getOrThrow(yield* (yield* Subscriptions).get(subscription.id)).status, "suspended")
        }))

      it.effect("is extended by a renewal that read it", () =>
        Effect.gen(function*() {
          const subscription = yield* withMicroseconds
          const next = addMonth(subscription.currentPeriodEnd)
          assert.isTrue(yield* (yield* Subscriptions).extend(subscription.id, subscription.currentPeriodEnd, next))
          assert.deepStrictEqual(Option.getOrThrow(yield* (yield* Subscriptions).get(subscription.id)).currentPeriodEnd, next)
        }))
    })
  }
})
