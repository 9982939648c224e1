// One Ledger contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryLedger from "../../adapters/fake/MemoryLedger.ts"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgLedger from "../../adapters/postgres/PgLedger.ts"
import * as PgOrders from "../../adapters/postgres/PgOrders.ts"
import * as PgSubscriptions from "../../adapters/postgres/PgSubscriptions.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import type { LedgerEntry } from "../../domain/billing/Billing.ts"
import { Ledger } from "../../ports/Ledger.ts"
import { Orders } from "../../ports/Orders.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { subscriptionOf } from "../support/subscriptionMother.ts"
import { newUser } from "../support/userMother.ts"

const paidAt = new Date("2026-03-01T10:00:00.000Z")
const later = (minutes: number) => new Date(paidAt.getTime() + minutes * 60_000)

/** A customer with an order and its subscription, in the same backend (ledger entries reference all three). */
const purchase = Effect.gen(function*() {
  const user = yield* (yield* Users).insert(newUser(`ledger-${randomUUID()}@example.com`))
  const subscription = yield* subscriptionOf(user.id, { at: paidAt, periodEnd: later(60 * 24 * 31) })
  /** An entry of this purchase; `reference` is unique per test run so suites sharing a backend never collide. */
  const entry = (overrides: Partial<LedgerEntry> = {}): LedgerEntry => ({
    id: randomUUID(),
    userId: user.id,
    subscriptionId: subscription.id,
    orderId: subscription.orderId,
    kind: "charge",
    amountCents: 599,
    reference: `ch_${randomUUID()}`,
    createdAt: paidAt,
    ...overrides
  })
  return { orderId: subscription.orderId, subscriptionId: subscription.id, entry }
})

const record = (entry: LedgerEntry) => Effect.flatMap(Ledger, (ledger) => ledger.record(entry))
const forOrder = (orderId: string) => Effect.flatMap(Ledger, (ledger) => ledger.forOrder(orderId))
const forSubscription = (id: string) => Effect.flatMap(Ledger, (ledger) => ledger.forSubscription(id))

const contract = (name: string, impl: Layer.Layer<Ledger | Subscriptions | Orders | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a recorded charge reads back whole, by its order and by its subscription", () =>
      Effect.gen(function*() {
        const { entry, orderId, subscriptionId } = yield* purchase
        const charge = entry()
        yield* record(charge)
        assert.deepStrictEqual(yield* forOrder(orderId), [charge])
        assert.deepStrictEqual(yield* forSubscription(subscriptionId), [charge])
        assert.deepStrictEqual(yield* forOrder(randomUUID()), [])
      }))

    it.effect("a customer's entries read back newest first, at most the limit, and no one else's", () =>
      Effect.gen(function*() {
        const { entry } = yield* purchase
        const charge = entry()
        const refund = entry({ kind: "refund", amountCents: 100, createdAt: later(5) })
        const renewal = entry({ createdAt: later(10) })
        for (const e of [charge, refund, renewal]) yield* record(e)
        yield* record((yield* purchase).entry())
        const forUser = (limit: number, after: { at: Date; id: string } | null = null) =>
          Effect.flatMap(Ledger, (ledger) => ledger.forUser(charge.userId, after, limit))
        assert.deepStrictEqual(yield* forUser(10), [renewal, refund, charge])
        assert.deepStrictEqual(yield* forUser(2), [renewal, refund])
        // The next page starts strictly after the last one shown: nothing twice, nothing skipped.
        assert.deepStrictEqual(yield* forUser(2, { at: refund.createdAt, id: refund.id }), [charge])
        assert.deepStrictEqual(yield* forUser(2, { at: charge.createdAt, id: charge.id }), [])
      }))

    it.effect("entries of the same instant are paged by id, none twice, none skipped", () =>
      Effect.gen(function*() {
        const { entry } = yield* purchase
        const first = entry()
        const same = Array.from({ length: 4 }, () => entry({ createdAt: first.createdAt }))
        for (const e of [first, ...same]) yield* record(e)
        const seen: Array<string> = []
        let after: { at: Date; id: string } | null = null
        for (let page = 0; page < 10; page++) {
          const rows: ReadonlyArray<LedgerEntry> = yield* Effect.flatMap(Ledger, (ledger) => ledger.forUser(first.userId, after, 2))
          const last = rows[rows.length - 1]
          if (last === undefined) break
          seen.push(...rows.map((r) => r.id))
          after = { at: last.createdAt, id: last.id }
        }
        assert.deepStrictEqual(seen, [first, ...same].map((e) => e.id).sort().reverse())
      }))

    it.effect("a charge recorded twice under the same reference is one entry, the first, and the replay says so", () =>
      Effect.gen(function*() {
        const { entry, orderId } = yield* purchase
        const charge = entry()
        assert.isTrue(yield* record(charge))
        assert.isFalse(yield* record({ ...charge, id: randomUUID(), amountCents: 1, createdAt: later(1) }))
        assert.deepStrictEqual(yield* forOrder(orderId), [charge])
      }))

    it.effect("ten replays of one refund at the same time are recorded once", () =>
      Effect.gen(function*() {
        const { entry, orderId } = yield* purchase
        const reference = `ch_${randomUUID()}:re_1`
        const recorded = yield* Effect.all(
          Array.from({ length: 10 }, () => record(entry({ kind: "refund", reference }))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(recorded.filter((isNew) => isNew).length, 1)
        const entries = yield* forOrder(orderId)
        assert.deepStrictEqual(entries.map((e) => [e.kind, e.reference]), [["refund", reference]])
      }))

    it.effect("a charge and a refund may share a reference: uniqueness is per kind", () =>
      Effect.gen(function*() {
        const { entry, orderId } = yield* purchase
        const charge = entry()
        const refund = entry({ kind: "refund", reference: charge.reference, createdAt: later(5) })
        yield* record(charge)
        yield* record(refund)
        assert.deepStrictEqual(yield* forOrder(orderId), [charge, refund])
      }))

    it.effect("entries are listed oldest first; a renewal shows under its subscription, not under the order", () =>
      Effect.gen(function*() {
        const { entry, orderId, subscriptionId } = yield* purchase
        const first = entry()
        const renewal = entry({ orderId: null, createdAt: later(60 * 24 * 31) })
        const refund = entry({ kind: "refund", reference: `${first.reference}:re_9`, createdAt: later(2) })
        yield* record(renewal)
        yield* record(refund)
        yield* record(first)
        assert.deepStrictEqual(yield* forOrder(orderId), [first, refund])
        assert.deepStrictEqual(yield* forSubscription(subscriptionId), [first, refund, renewal])
      }))

    it.effect("an order was paid when the charge that started its subscription was recorded; an unusable payment is no payment", () =>
      Effect.gen(function*() {
        const ledger = yield* Ledger
        const paid = yield* purchase
        const unpaid = yield* purchase
        // A payment the order could not use (recorded without a subscription, refunded) first, then the one it used.
        yield* record(paid.entry({ subscriptionId: null, createdAt: later(-5) }))
        yield* record(paid.entry({ createdAt: later(1) }))
        yield* record(paid.entry({ kind: "refund", createdAt: later(3) }))
        yield* record(unpaid.entry({ subscriptionId: null }))
        const found = yield* ledger.paidAt([paid.orderId, unpaid.orderId, randomUUID()])
        assert.deepStrictEqual([...found], [[paid.orderId, later(1)]])
        assert.strictEqual((yield* ledger.paidAt([])).size, 0)
      }))

    it.effect("a charge with no subscription yet is found by its order only", () =>
      Effect.gen(function*() {
        const { entry, orderId, subscriptionId } = yield* purchase
        const charge = entry({ subscriptionId: null, amountCents: 0 })
        yield* record(charge)
        assert.deepStrictEqual(yield* forOrder(orderId), [charge])
        assert.deepStrictEqual(yield* forSubscription(subscriptionId), [])
      }))
  })

describe("Ledger contract", () => {
  contract("in memory", Layer.mergeAll(MemoryLedger.layer, MemorySubscriptions.layer, MemoryOrders.layer, MemoryUsers.layer))
  for (const [backend, db] of sqlBackends()) {
    contract(
      backend,
      Layer.mergeAll(PgLedger.layer, PgSubscriptions.layer, PgOrders.layer, PgUsers.layer).pipe(Layer.provide(db))
    )
  }
})
