// One Orders contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgOrders from "../../adapters/postgres/PgOrders.ts"
import * as PgSubscriptions from "../../adapters/postgres/PgSubscriptions.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { Order, OrderId, PlanId, SubscriptionId } from "../../domain/billing/Billing.ts"
import { moveOrder } from "../../domain/billing/orderMoves.ts"
import { Orders } from "../../ports/Orders.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { newUser } from "../support/userMother.ts"

const placedAt = new Date("2026-03-01T10:00:00.000Z")
/** `minutes` after the order was placed. */
const later = (minutes: number) => new Date(placedAt.getTime() + minutes * 60_000)
const options = { templateId: "debian-12", hostname: "web-1.example.com", nested: { tags: ["a", "b"], size: 3 } }

/** A customer of the same backend (the orders table references users), under a unique e-mail. */
const customer = Effect.flatMap(Users, (users) => users.insert(newUser(`orders-${randomUUID()}@example.com`)))

const placeOrder = (userId: string) =>
  Effect.flatMap(Orders, (orders) =>
    orders.create({ id: OrderId.make(randomUUID()), userId, planId: "vps-s", kind: "vps", options, totalSteps: 6, expiresAt: new Date(placedAt.getTime() + 3_600_000), now: placedAt }))

/** An order without options placed `minutes` after the first, with an hour to pay. */
const placeOrderAt = (userId: string, minutes: number) =>
  Effect.flatMap(Orders, (orders) =>
    orders.create({ id: OrderId.make(randomUUID()), userId, planId: "vps-s", kind: "vps", options: {}, totalSteps: 6, expiresAt: later(minutes + 60), now: later(minutes) }))

const current = (id: string) => Effect.map(Effect.flatMap(Orders, (orders) => orders.get(id)), Option.getOrThrow)

const progress = (id: string, step: number, subscriptionId?: SubscriptionId) =>
  moveOrder(id, { event: "progressed", step, stepName: `Step ${step}`, ...(subscriptionId === undefined ? {} : { subscriptionId }) }, later(step))
const pay = (id: string, at: Date) => moveOrder(id, { event: "paid" }, at)
const complete = (id: string, serviceId: string, oneTimeSecret: string | null, at: Date) =>
  moveOrder(id, { event: "provisioned", serviceId, oneTimeSecret }, at)
const fail = (id: string, reason: string, at: Date) => moveOrder(id, { event: "failed", reason }, at)
const expire = (id: string, at: Date) => moveOrder(id, { event: "expired" }, at)

const contract = (name: string, impl: Layer.Layer<Orders | Subscriptions | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a new order awaits its payment at step 0 of its total, with the customer's options and its deadline", () =>
      Effect.gen(function*() {
        const user = yield* customer
        const order = yield* placeOrder(user.id)
        assert.deepStrictEqual(
          order,
          new Order({
            id: order.id,
            userId: user.id,
            planId: PlanId.make("vps-s"),
            kind: "vps",
            options,
            status: "awaiting_payment",
            step: 0,
            totalSteps: 6,
            stepName: "Payment",
            failureReason: null,
            subscriptionId: null,
            serviceId: null,
            checkoutSession: null,
            checkoutUrl: null,
            expiresAt: later(60),
            expressStartRequestedAt: null,
            retryOf: null,
            retriedAs: null,
            createdAt: placedAt,
            updatedAt: placedAt
          })
        )
        assert.deepStrictEqual(yield* current(order.id), order)
        assert.isTrue(Option.isNone(yield* (yield* Orders).get(randomUUID())))
      }))

    it.effect("progress moves a provisioning order along and keeps its subscription once given; not an unpaid one", () =>
      Effect.gen(function*() {
        const user = yield* customer
        const order = yield* placeOrder(user.id)
        yield* progress(order.id, 3)
        assert.deepStrictEqual(yield* current(order.id), order)
        yield* pay(order.id, placedAt)
        const subscription = yield* (yield* Subscriptions).create({
          id: SubscriptionId.make(randomUUID()),
          userId: user.id,
          planId: PlanId.make("vps-s"),
          kind: "vps",
          orderId: order.id,
          currentPeriodEnd: later(60 * 24 * 31),
          now: placedAt
        })
        yield* progress(order.id, 0, subscription.id)
        yield* progress(order.id, 2)
        const moved = yield* current(order.id)
        assert.deepStrictEqual(
          [moved.status, moved.step, moved.stepName, moved.subscriptionId, moved.updatedAt],
          ["provisioning", 2, "Step 2", subscription.id, later(2)]
        )
        assert.deepStrictEqual(moved.createdAt, placedAt)
      }))

    it.effect("a completed order completes once: later progress, completion or failure change nothing", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const order = yield* placeOrder(user.id)
        yield* pay(order.id, later(1))
        yield* progress(order.id, 6)
        const serviceId = randomUUID()
        yield* complete(order.id, serviceId, "sealed-secret", later(10))
        const completed = yield* current(order.id)
        assert.deepStrictEqual(
          [completed.status, completed.serviceId, completed.step, completed.updatedAt],
          ["completed", serviceId, 6, later(10)]
        )
        yield* progress(order.id, 3)
        yield* complete(order.id, randomUUID(), "another-secret", later(11))
        yield* fail(order.id, "too late", later(12))
        assert.deepStrictEqual(yield* current(order.id), completed)
        assert.deepStrictEqual(yield* orders.takeOneTimeSecret(order.id), Option.some("sealed-secret"))
      }))

    it.effect("a failed order fails once, with its reason, and is never completed or moved afterwards", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const order = yield* placeOrder(user.id)
        yield* fail(order.id, "Your payment was declined.", later(1))
        const failed = yield* current(order.id)
        assert.deepStrictEqual(
          [failed.status, failed.failureReason, failed.step, failed.updatedAt],
          ["failed", "Your payment was declined.", 0, later(1)]
        )
        yield* fail(order.id, "another reason", later(2))
        yield* complete(order.id, randomUUID(), "secret", later(3))
        yield* progress(order.id, 4)
        assert.deepStrictEqual(yield* current(order.id), failed)
        assert.isTrue(Option.isNone(yield* orders.takeOneTimeSecret(order.id)))
      }))

    it.effect("the one-time secret is given to its first reader only", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const order = yield* placeOrder(user.id)
        assert.isTrue(Option.isNone(yield* orders.takeOneTimeSecret(order.id)))
        yield* pay(order.id, later(1))
        yield* complete(order.id, randomUUID(), "v1:sealed", later(5))
        assert.deepStrictEqual(yield* orders.takeOneTimeSecret(order.id), Option.some("v1:sealed"))
        assert.isTrue(Option.isNone(yield* orders.takeOneTimeSecret(order.id)))
        assert.strictEqual((yield* current(order.id)).status, "completed")
        assert.isTrue(Option.isNone(yield* orders.takeOneTimeSecret(randomUUID())))
      }))

    it.effect("an order completed without a secret has none to give", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const order = yield* placeOrder((yield* customer).id)
        yield* pay(order.id, later(1))
        yield* complete(order.id, randomUUID(), null, later(5))
        assert.isTrue(Option.isNone(yield* orders.takeOneTimeSecret(order.id)))
      }))

    it.effect("of ten readers of the one-time secret at the same time, exactly one gets it", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const order = yield* placeOrder((yield* customer).id)
        yield* pay(order.id, later(1))
        yield* complete(order.id, randomUUID(), "v1:raced", later(5))
        const taken = yield* Effect.all(
          Array.from({ length: 10 }, () => orders.takeOneTimeSecret(order.id)),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(taken.filter(Option.isSome), [Option.some("v1:raced")])
      }))

    it.effect("unfinished lists orders awaiting payment and provisioning, oldest first, not finished ones", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const create = (minutes: number) => placeOrderAt(user.id, minutes)
        const provisioning = yield* create(2)
        const pending = yield* create(1)
        const completed = yield* create(3)
        const failed = yield* create(4)
        const expired = yield* create(0)
        yield* pay(provisioning.id, later(5))
        yield* progress(provisioning.id, 1)
        yield* expire(expired.id, later(5))
        yield* pay(completed.id, later(5))
        yield* complete(completed.id, randomUUID(), null, later(5))
        yield* fail(failed.id, "no capacity", later(5))
        const mine = (yield* orders.unfinished).filter((o) => o.userId === user.id)
        assert.deepStrictEqual(mine.map((o) => [o.id, o.status]), [[pending.id, "awaiting_payment"], [provisioning.id, "provisioning"]])
      }))

    it.effect("startProvisioning moves an order awaiting its payment to provisioning once; of five racing, one wins", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const order = yield* placeOrder(user.id)
        const won = yield* Effect.all(
          Array.from({ length: 5 }, () => pay(order.id, later(1))),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(won.filter((w) => w).length, 1)
        assert.deepInclude(yield* current(order.id), { status: "provisioning", step: 0, stepName: "Queued", updatedAt: later(1) })
        assert.isFalse(yield* pay(order.id, later(2)))
        const failed = yield* placeOrder(user.id)
        yield* fail(failed.id, "declined", later(1))
        assert.isFalse(yield* pay(failed.id, later(2)))
        assert.strictEqual((yield* current(failed.id)).status, "failed")
      }))

    it.effect("the checkout page is kept while the order awaits its payment; expire and startProvisioning exclude each other", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const order = yield* placeOrder(user.id)
        yield* moveOrder(order.id, { event: "checkoutOpened", session: "cs_test_1", url: "https://pay.example/cs_test_1" }, later(1))
        assert.deepInclude(yield* current(order.id), { checkoutSession: "cs_test_1", checkoutUrl: "https://pay.example/cs_test_1" })
        const raced = yield* Effect.all([expire(order.id, later(61)), pay(order.id, later(61))], { concurrency: "unbounded" })
        assert.strictEqual(raced.filter((won) => won).length, 1)
        assert.isFalse(yield* expire(order.id, later(62)))
        const paid = yield* placeOrder(user.id)
        yield* pay(paid.id, later(1))
        assert.isFalse(yield* expire(paid.id, later(61)))
        assert.strictEqual((yield* current(paid.id)).status, "provisioning")
      }))

    it.effect("dueForExpiry lists the orders awaiting payment past their deadline, earliest deadline first", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const create = (minutes: number) => placeOrderAt(user.id, minutes)
        const second = yield* create(2)
        const first = yield* create(1)
        const notYet = yield* create(30)
        const paid = yield* create(0)
        yield* pay(paid.id, later(1))
        const due = (yield* orders.dueForExpiry(later(62))).filter((o) => o.userId === user.id)
        assert.deepStrictEqual(due.map((o) => o.id), [first.id, second.id])
        assert.isFalse(due.some((o) => o.id === notYet.id))
      }))

    it.effect("transition is a compare-and-set on the status it leaves: of twelve identical moves at once exactly one applies", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const order = yield* placeOrder((yield* customer).id)
        const move = { from: "awaiting_payment", to: "provisioning", now: later(1), recorded: { step: 0, stepName: "Queued" } } as const
        const won = yield* Effect.all(Array.from({ length: 12 }, () => orders.transition(order.id, move)), { concurrency: "unbounded" })
        assert.strictEqual(won.filter((w) => w).length, 1)
        assert.deepInclude(yield* current(order.id), { status: "provisioning", stepName: "Queued", updatedAt: later(1) })
        // A move from a status the order has left changes nothing; nor does one of an unknown order.
        assert.isFalse(yield* orders.transition(order.id, { ...move, now: later(2), recorded: { stepName: "Stale" } }))
        assert.isFalse(yield* orders.transition(randomUUID(), move))
        assert.deepInclude(yield* current(order.id), { stepName: "Queued", updatedAt: later(1) })
      }))

    it.effect("a move records only what it says: the other columns and the one-time secret are left as they are", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const order = yield* placeOrder((yield* customer).id)
        yield* moveOrder(order.id, { event: "checkoutOpened", session: "cs_kept", url: "https://pay.example/cs_kept" }, later(1))
        yield* pay(order.id, later(2))
        const serviceId = randomUUID()
        yield* complete(order.id, serviceId, "v1:kept", later(3))
        assert.isTrue(yield* orders.transition(order.id, { from: "completed", to: "completed", now: later(4), recorded: { stepName: "Done" } }))
        assert.deepInclude(yield* current(order.id), {
          status: "completed",
          checkoutSession: "cs_kept",
          checkoutUrl: "https://pay.example/cs_kept",
          step: 0,
          stepName: "Done",
          serviceId,
          failureReason: null,
          updatedAt: later(4)
        })
        assert.deepStrictEqual(yield* orders.takeOneTimeSecret(order.id), Option.some("v1:kept"))
      }))

    it.effect("an unpaid order raced by eight payments and eight expiries at once moves exactly once, to its winner's status", () =>
      Effect.gen(function*() {
        const order = yield* placeOrder((yield* customer).id)
        const racers = Array.from({ length: 16 }, (_, i) =>
          Effect.map(i % 2 === 0 ? pay(order.id, later(61)) : expire(order.id, later(61)), (won) => won ? (i % 2 === 0 ? "provisioning" : "expired") : undefined))
        const winners = (yield* Effect.all(racers, { concurrency: "unbounded" })).filter((w) => w !== undefined)
        assert.strictEqual(winners.length, 1)
        assert.strictEqual((yield* current(order.id)).status, winners[0])
      }))

    it.effect("of five completions of a provisioning order at once, exactly one applies, with its service and secret", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const order = yield* placeOrder((yield* customer).id)
        yield* pay(order.id, later(1))
        const services = Array.from({ length: 5 }, () => randomUUID())
        const won = yield* Effect.all(
          services.map((service, i) => Effect.map(complete(order.id, service, `v1:secret-${i}`, later(5)), (w) => w ? i : -1)),
          { concurrency: "unbounded" }
        )
        const winners = won.filter((i) => i >= 0)
        assert.strictEqual(winners.length, 1)
        const winner = winners[0] ?? -1
        assert.deepInclude(yield* current(order.id), { status: "completed", serviceId: services[winner] ?? null })
        assert.deepStrictEqual(yield* orders.takeOneTimeSecret(order.id), Option.some(`v1:secret-${winner}`))
      }))

    it.effect("a failed order retried by eight at once gets one retry, which every other one finds; both show the link", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const failed = yield* placeOrder(user.id)
        yield* fail(failed.id, "no capacity", later(1))
        const retries = Array.from({ length: 8 }, () => OrderId.make(randomUUID()))
        const outcomes = yield* Effect.all(
          retries.map((id) =>
            orders.createRetry({
              id,
              userId: user.id,
              planId: "vps-s",
              kind: "vps",
              options,
              totalSteps: 6,
              expiresAt: later(120),
              expressStartRequestedAt: later(0),
              retryOf: failed.id,
              now: later(60)
            })
          ),
          { concurrency: "unbounded" }
        )
        const created = outcomes.filter((o) => o.created)
        assert.strictEqual(created.length, 1)
        const retry = created[0]!.order
        assert.deepStrictEqual(outcomes.map((o) => o.order.id), retries.map(() => retry.id))
        assert.deepInclude(retry, { status: "awaiting_payment", retryOf: failed.id, retriedAs: null, expressStartRequestedAt: later(0), options })
        assert.deepInclude(yield* current(failed.id), { status: "failed", retriedAs: retry.id, retryOf: null })
        assert.deepInclude(yield* current(retry.id), { retryOf: failed.id })
        // The losers made nothing.
        for (const id of retries.filter((id) => id !== retry.id)) assert.isTrue(Option.isNone(yield* orders.get(id)))
      }))

    it.effect("a customer's orders read newest first, a page at a time after a cursor, and only theirs", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const other = yield* customer
        const placed = yield* Effect.forEach([0, 1, 2, 3, 4], (minutes) => placeOrderAt(user.id, minutes))
        // Two at the same moment: the id breaks the tie.
        const twin = yield* placeOrderAt(user.id, 4)
        yield* placeOrderAt(other.id, 2)
        const newestFirst = [...placed, twin].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
        const first = yield* orders.ofCustomer(user.id, null, 4)
        assert.deepStrictEqual(first.map((o) => o.id), newestFirst.slice(0, 4).map((o) => o.id))
        const last = first[3]!
        const rest = yield* orders.ofCustomer(user.id, { at: last.createdAt, id: last.id }, 4)
        assert.deepStrictEqual(rest.map((o) => o.id), newestFirst.slice(4).map((o) => o.id))
      }))

    it.effect("a pending cleanup is listed from its first mark, counts its failed attempts, and goes once done", () =>
      Effect.gen(function*() {
        const orders = yield* Orders
        const user = yield* customer
        const order = yield* placeOrder(user.id)
        const mine = Effect.map(orders.pendingCleanups, (all) => all.filter((c) => c.orderId === order.id))
        // A failure recorded before any mark is not a pending cleanup.
        yield* orders.cleanupFailed(order.id, "too early")
        assert.deepStrictEqual(yield* mine, [])
        yield* fail(order.id, "no capacity", later(1))
        yield* orders.cleanupPending(order.id, later(1))
        yield* orders.cleanupPending(order.id, later(9))
        yield* orders.cleanupFailed(order.id, "VirtualizationUnavailable: 596")
        yield* orders.cleanupFailed(order.id, "TaskFailed: locked")
        assert.deepStrictEqual(yield* mine, [
          { orderId: order.id, kind: "vps", since: later(1), attempts: 2, lastError: "TaskFailed: locked" }
        ])
        yield* orders.cleanupDone(order.id)
        assert.deepStrictEqual(yield* mine, [])
        assert.strictEqual((yield* current(order.id)).status, "failed")
      }))
  })

describe("Orders contract", () => {
  contract("in memory", Layer.mergeAll(MemoryOrders.layer, MemorySubscriptions.layer, MemoryUsers.layer))
  for (const [backend, db] of sqlBackends()) {
    contract(
      backend,
      Layer.mergeAll(PgOrders.layer, PgSubscriptions.layer, PgUsers.layer).pipe(Layer.provide(db))
    )
  }
})
