// The sandbox payment gateway, kept in memory or in the database: a charge is taken once per idempotency key and found
// again by it; with the database, a second instance (another process) sees what the first took, as every instance
// sees a real provider.
import { NodeCrypto } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as SandboxPaymentGateway from "../../../adapters/payments/SandboxPaymentGateway.ts"
import { SandboxPayments } from "../../../adapters/payments/SandboxPaymentGateway.ts"
import { PaymentGateway } from "../../../ports/PaymentGateway.ts"
import { sqlBackends } from "../../support/databases.ts"

const charge = (key: string, amountCents = 500) =>
  Effect.flatMap(PaymentGateway, (g) => g.charge({ customer: "alice", amountCents, description: "VPS S, first month", idempotencyKey: key }))

const gatewayContract = (name: string, gateway: Layer.Layer<PaymentGateway | SandboxPayments, unknown>) =>
  layer(gateway, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a key charges once: a replay answers the first charge", () =>
      Effect.gen(function*() {
        const key = `order:${randomUUID()}`
        const first = yield* charge(key)
        assert.deepStrictEqual(yield* charge(key, 999), first)
        assert.deepStrictEqual(
          (yield* (yield* SandboxPayments).charges).filter((c) => c.reference === first.reference).map((c) => c.amountCents),
          [500]
        )
      }))

    it.effect("findCharge finds a charge by its key, and nothing for a key never charged or declined", () =>
      Effect.gen(function*() {
        const gateway = yield* PaymentGateway
        const key = `order:${randomUUID()}`
        assert.isTrue(Option.isNone(yield* gateway.findCharge(key)))
        const { reference } = yield* charge(key)
        assert.deepStrictEqual(yield* gateway.findCharge(key), Option.some({ reference, amountCents: 500 }))
        const declined = `order:${randomUUID()}`
        yield* (yield* SandboxPayments).declineNext(1)
        assert.strictEqual((yield* Effect.flip(charge(declined)))._tag, "PaymentDeclined")
        assert.isTrue(Option.isNone(yield* gateway.findCharge(declined)))
      }))

    it.effect("a refund is made once per key and marks its charge refunded", () =>
      Effect.gen(function*() {
        const gateway = yield* PaymentGateway
        const { reference } = yield* charge(`order:${randomUUID()}`)
        const key = `refund:${randomUUID()}`
        const refund = yield* gateway.refund({ charge: reference, amountCents: 500, idempotencyKey: key })
        assert.deepStrictEqual(yield* gateway.refund({ charge: reference, amountCents: 500, idempotencyKey: key }), refund)
        const listed = (yield* (yield* SandboxPayments).charges).find((c) => c.reference === reference)
        assert.isTrue(listed?.refunded)
      }))
  })

const withRandom = <A, E, R>(l: Layer.Layer<A, E, R>) => l.pipe(Layer.provide(NodeCrypto.layerSecureRandom))

/** A second gateway instance on the same database, as another process would have. */
class Other extends Context.Service<Other, PaymentGateway["Service"]>()("test/OtherGateway") {}

describe("SandboxPaymentGateway", () => {
  gatewayContract("in memory", withRandom(SandboxPaymentGateway.layer()))
  for (const [backend, db] of sqlBackends()) {
    gatewayContract(`in ${backend}`, withRandom(SandboxPaymentGateway.layerSql()).pipe(Layer.provide(db)))

    const twoInstances = Layer.merge(
      withRandom(SandboxPaymentGateway.layerSql()),
      Layer.effect(Other, Effect.provide(Effect.service(PaymentGateway), withRandom(SandboxPaymentGateway.layerSql())))
    ).pipe(Layer.provide(db))
    layer(twoInstances, { excludeTestServices: true, timeout: "60 seconds" })(`two instances in ${backend}`, (it) => {
      it.effect("a charge one instance took is found, replayed and refunded by the other", () =>
        Effect.gen(function*() {
          const other = yield* Other
          const key = `order:${randomUUID()}`
          const { reference } = yield* charge(key)
          assert.deepStrictEqual(yield* other.findCharge(key), Option.some({ reference, amountCents: 500 }))
          assert.deepStrictEqual(
            yield* other.charge({ customer: "alice", amountCents: 500, description: "replayed", idempotencyKey: key }),
            { reference }
          )
          yield* other.refund({ charge: reference, amountCents: 500, idempotencyKey: `refund:${key}` })
          const listed = (yield* (yield* SandboxPayments).charges).find((c) => c.reference === reference)
          assert.isTrue(listed?.refunded)
        }))
    })
  }
})
