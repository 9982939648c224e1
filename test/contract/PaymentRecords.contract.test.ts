// One contract for the payment provider's records (each user's customer, the notifications received), run against
// the in-memory fakes, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryPaymentCustomers from "../../adapters/fake/MemoryPaymentCustomers.ts"
import * as MemoryPaymentNotifications from "../../adapters/fake/MemoryPaymentNotifications.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgPaymentCustomers from "../../adapters/postgres/PgPaymentCustomers.ts"
import * as PgPaymentNotifications from "../../adapters/postgres/PgPaymentNotifications.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { PaymentCustomers } from "../../ports/PaymentCustomers.ts"
import { PaymentNotifications } from "../../ports/PaymentNotifications.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { newUser } from "../support/userMother.ts"

const now = new Date("2026-03-01T10:00:00.000Z")

const contract = (name: string, impl: Layer.Layer<PaymentCustomers | PaymentNotifications | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a user's first customer is remembered; a second one (a race) gets the first back", () =>
      Effect.gen(function*() {
        const user = yield* (yield* Users).insert(newUser(`pay-${randomUUID()}@example.com`))
        const customers = yield* PaymentCustomers
        assert.isTrue(Option.isNone(yield* customers.get(user.id)))
        const first = `cus_${randomUUID()}`
        assert.strictEqual(yield* customers.remember(user.id, first, now), first)
        assert.strictEqual(yield* customers.remember(user.id, `cus_${randomUUID()}`, now), first)
        assert.deepStrictEqual(yield* customers.get(user.id), Option.some(first))
      }))

    it.effect("a notification is recorded once by its id; confirmed refunds are the most the provider confirmed", () =>
      Effect.gen(function*() {
        const notifications = yield* PaymentNotifications
        const payment = `pi_${randomUUID()}`
        const partial = { _tag: "RefundConfirmed", id: `evt_${randomUUID()}`, payment, refundedCents: 200 } as const
        assert.strictEqual(yield* notifications.confirmedRefundCents(payment), 0)
        assert.isTrue(yield* notifications.record(partial, now))
        assert.isFalse(yield* notifications.record(partial, now))
        assert.isTrue(yield* notifications.record({ ...partial, id: `evt_${randomUUID()}`, refundedCents: 600 }, now))
        // An older notification delivered late does not lower what is confirmed.
        assert.isTrue(yield* notifications.record({ ...partial, id: `evt_${randomUUID()}`, refundedCents: 200 }, now))
        assert.strictEqual(yield* notifications.confirmedRefundCents(payment), 600)
        assert.isTrue(yield* notifications.record({ _tag: "Ignored", id: `evt_${randomUUID()}`, type: "customer.created" }, now))
      }))
  })

describe("payment records contract", () => {
  contract("in memory", Layer.mergeAll(MemoryPaymentCustomers.layer, MemoryPaymentNotifications.layer, MemoryUsers.layer))
  for (const [backend, db] of sqlBackends()) {
    contract(backend, Layer.mergeAll(PgPaymentCustomers.layer, PgPaymentNotifications.layer, PgUsers.layer).pipe(Layer.provide(db)))
  }
})
