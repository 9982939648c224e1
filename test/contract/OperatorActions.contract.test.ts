// The stores of operators' actions, one contract run against the in-memory fakes, embedded PGlite and (when
// configured) real Postgres: holds (one in force per service, lifted once, kept as history) and refund requests
// (reserved against their charge, never above it, the same key the same request, completed once).
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryLedger from "../../adapters/fake/MemoryLedger.ts"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemoryRefundRequests from "../../adapters/fake/MemoryRefundRequests.ts"
import * as MemoryServiceHolds from "../../adapters/fake/MemoryServiceHolds.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgLedger from "../../adapters/postgres/PgLedger.ts"
import * as PgOrders from "../../adapters/postgres/PgOrders.ts"
import * as PgRefundRequests from "../../adapters/postgres/PgRefundRequests.ts"
import * as PgServiceHolds from "../../adapters/postgres/PgServiceHolds.ts"
import * as PgSubscriptions from "../../adapters/postgres/PgSubscriptions.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { ServiceHold } from "../../domain/billing/ServiceHold.ts"
import { Ledger } from "../../ports/Ledger.ts"
import { Orders } from "../../ports/Orders.ts"
import { RefundRequests } from "../../ports/RefundRequests.ts"
import { ServiceHolds } from "../../ports/ServiceHolds.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { subscriptionOf } from "../support/subscriptionMother.ts"
import { newUser } from "../support/userMother.ts"

const at = new Date("2026-03-01T10:00:00.000Z")
const operator = "00000000-0000-4000-8000-0000000a0d11"

/** A customer's subscription with a charge of 1000 cents, in the backend under test. */
const purchase = Effect.gen(function*() {
  const user = yield* (yield* Users).insert(newUser(`ops-${randomUUID()}@example.com`))
  const subscription = yield* subscriptionOf(user.id, { at, periodEnd: new Date(at.getTime() + 31 * 86_400_000) })
  const charge = {
    id: randomUUID(),
    userId: user.id,
    subscriptionId: subscription.id,
    orderId: subscription.orderId,
    kind: "charge" as const,
    amountCents: 1000,
    reference: `pi_${randomUUID()}`,
    createdAt: at
  }
  yield* (yield* Ledger).record(charge)
  return { subscription, charge }
})

const hold = (subscriptionId: string, placedAt = at) =>
  new ServiceHold({
    id: randomUUID(),
    subscriptionId,
    placedBy: operator,
    placedAt,
    facts: "Spam reported.",
    ground: "abuse",
    liftedBy: null,
    liftedAt: null,
    liftReason: null
  })

const request = (chargeId: string, amountCents: number, key = `key-${randomUUID()}`) => ({
  id: randomUUID(),
  chargeId,
  idempotencyKey: key,
  amountCents,
  reason: "goodwill",
  requestedBy: operator,
  requestedAt: at
})

type Services = ServiceHolds | RefundRequests | Ledger | Subscriptions | Orders | Users

const contract = (name: string, impl: Layer.Layer<Services, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("one hold is in force per service, even placed twice at once; lifted once; kept as history", () =>
      Effect.gen(function*() {
        const holds = yield* ServiceHolds
        const { subscription } = yield* purchase
        const placed = yield* Effect.all([holds.place(hold(subscription.id)), holds.place(hold(subscription.id))], { concurrency: "unbounded" })
        assert.deepStrictEqual(placed.map((p) => p.placed).sort(), [false, true])
        assert.strictEqual(placed[0].hold.id, placed[1].hold.id)
        assert.strictEqual(Option.getOrThrow(yield* holds.inForce(subscription.id)).id, placed[0].hold.id)
        const lifted = yield* holds.lift(subscription.id, { by: operator, at: new Date(at.getTime() + 60_000), reason: "Resolved." })
        assert.deepInclude(Option.getOrThrow(lifted), { liftedBy: operator, liftReason: "Resolved." })
        assert.isTrue(Option.isNone(yield* holds.lift(subscription.id, { by: operator, at, reason: "Again." })))
        assert.isTrue(Option.isNone(yield* holds.inForce(subscription.id)))
        const again = yield* holds.place(hold(subscription.id, new Date(at.getTime() + 120_000)))
        assert.isTrue(again.placed)
        assert.deepStrictEqual((yield* holds.history(subscription.id)).map((h) => h.id), [again.hold.id, placed[0].hold.id])
      }))

    it.effect("refund requests are reserved against their charge: never above it, the same key the same request", () =>
      Effect.gen(function*() {
        const requests = yield* RefundRequests
        const { charge } = yield* purchase
        const first = yield* requests.reserve(request(charge.id, 600, `key-first-${charge.id}`))
        assert.strictEqual(first._tag, "Reserved")
        assert.strictEqual(yield* requests.refundable(charge.id), 400)
        assert.deepStrictEqual(yield* requests.reserve(request(charge.id, 401)), { _tag: "Exceeds", refundableCents: 400 })
        const replay = yield* requests.reserve({ ...request(charge.id, 600, `key-first-${charge.id}`) })
        assert.strictEqual(replay._tag, "Replayed")
        if (first._tag === "Reserved" && replay._tag === "Replayed") assert.strictEqual(replay.request.id, first.request.id)
        assert.strictEqual((yield* requests.reserve(request(charge.id, 5, `key-first-${charge.id}`)))._tag, "KeyReused")
        assert.strictEqual((yield* requests.reserve(request(randomUUID(), 5)))._tag, "NoSuchCharge")
      }))

    it.effect("racing requests for most of a charge: one is reserved", () =>
      Effect.gen(function*() {
        const requests = yield* RefundRequests
        const { charge } = yield* purchase
        const outcomes = yield* Effect.all([requests.reserve(request(charge.id, 700)), requests.reserve(request(charge.id, 700))], { concurrency: "unbounded" })
        assert.deepStrictEqual(outcomes.map((o) => o._tag).sort(), ["Exceeds", "Reserved"])
      }))

    it.effect("a completed request counts by its ledger refund, once; completing it again changes nothing", () =>
      Effect.gen(function*() {
        const requests = yield* RefundRequests
        const ledger = yield* Ledger
        const { charge } = yield* purchase
        const reserved = yield* requests.reserve(request(charge.id, 250))
        if (reserved._tag !== "Reserved") return assert.fail(reserved._tag)
        const refund = { ...charge, id: randomUUID(), kind: "refund" as const, amountCents: 250, reference: `${charge.reference}:re_${randomUUID()}` }
        yield* ledger.record(refund)
        assert.isTrue(yield* requests.complete(reserved.request.id, refund.id))
        assert.isFalse(yield* requests.complete(reserved.request.id, refund.id))
        assert.strictEqual(yield* requests.refundable(charge.id), 750)
        assert.deepStrictEqual(Option.getOrThrow(yield* ledger.entry(charge.id)), charge)
      }))
  })

describe("Operators' actions contract", () => {
  contract(
    "in memory",
    Layer.mergeAll(MemoryServiceHolds.layer, MemoryRefundRequests.layer).pipe(
      Layer.provideMerge(Layer.mergeAll(MemoryLedger.layer, MemorySubscriptions.layer, MemoryOrders.layer, MemoryUsers.layer))
    )
  )
  for (const [backend, db] of sqlBackends()) {
    contract(
      backend,
      Layer.mergeAll(PgServiceHolds.layer, PgRefundRequests.layer, PgLedger.layer, PgSubscriptions.layer, PgOrders.layer, PgUsers.layer).pipe(
        Layer.provide(db)
      )
    )
  }
})
