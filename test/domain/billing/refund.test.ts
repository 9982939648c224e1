// Specification of the refund of a failed order's charges: what is left of each charge goes back, once — an operator
// may have given part of it back already, and a replay gives nothing more.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { refundRecordedCharges } from "../../../domain/billing/refund.ts"
import { recordRefund } from "../../../domain/billing/invoicing/issueDocuments.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { PaymentGateway } from "../../../ports/PaymentGateway.ts"
import { UnitOfWork } from "../../../ports/UnitOfWork.ts"
import { dnsEnv, ordered } from "../../support/dnsEnv.ts"

const refundsOf = (orderId: string) =>
  Effect.map(Effect.flatMap(Ledger, (ledger) => ledger.forOrder(orderId)), (entries) => entries.filter((e) => e.kind === "refund"))

describe("refunding a failed order's charges", () => {
  it.effect("gives back only what is left of a charge an operator partly refunded, and nothing on a replay", () =>
    Effect.gen(function*() {
      const order = yield* ordered("partly-refunded.fr")
      const [charge] = (yield* (yield* Ledger).forOrder(order.id)).filter((e) => e.kind === "charge")
      assert.isDefined(charge)
      if (charge === undefined) return
      // An operator gave a third of it back (as domain/backoffice/refunds.ts records it).
      const partialCents = Math.floor(charge.amountCents / 3)
      const partial = yield* (yield* PaymentGateway).refund({ charge: charge.reference, amountCents: partialCents, idempotencyKey: "operator-goodwill" })
      yield* (yield* UnitOfWork).transaction(recordRefund({
        id: "00000000-0000-4000-8000-0000000000f1",
        userId: charge.userId,
        subscriptionId: charge.subscriptionId,
        orderId: order.id,
        kind: "refund",
        amountCents: partialCents,
        reference: `${charge.reference}:${partial.reference}`,
        createdAt: new Date(yield* Clock.currentTimeMillis)
      }, charge.reference))

      assert.strictEqual(yield* refundRecordedCharges(order.id), 1)
      const refunds = yield* refundsOf(order.id)
      assert.deepStrictEqual(refunds.map((r) => r.amountCents).sort((a, b) => a - b), [partialCents, charge.amountCents - partialCents].sort((a, b) => a - b))
      assert.strictEqual(refunds.reduce((sum, r) => sum + r.amountCents, 0), charge.amountCents)

      yield* refundRecordedCharges(order.id)
      assert.strictEqual((yield* refundsOf(order.id)).length, 2)
    }).pipe(Effect.provide(dnsEnv)))

  it.effect("gives back a whole charge nobody refunded", () =>
    Effect.gen(function*() {
      const order = yield* ordered("whole.fr")
      const [charge] = (yield* (yield* Ledger).forOrder(order.id)).filter((e) => e.kind === "charge")
      yield* refundRecordedCharges(order.id)
      assert.deepStrictEqual((yield* refundsOf(order.id)).map((r) => r.amountCents), [charge!.amountCents])
    }).pipe(Effect.provide(dnsEnv)))
})
