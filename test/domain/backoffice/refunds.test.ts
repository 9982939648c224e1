// Specification of an operator's refund (issue 14 §2): in part or in full, in exact cents, never above what is left
// of the charge, with a credit note and the customer's e-mail; the same key is the same refund, even when two clicks
// race; two different refunds racing never give back more than was taken; a gateway outage leaves it reserved, and
// the same request completes it later.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import * as MemoryAuditLog from "../../../adapters/fake/MemoryAuditLog.ts"
import * as MemoryRefundRequests from "../../../adapters/fake/MemoryRefundRequests.ts"
import { UserId } from "../../../domain/account/User.ts"
import type { Operator } from "../../../domain/backoffice/customers.ts"
import { issueRefund } from "../../../domain/backoffice/refunds.ts"
import { AuditLog } from "../../../ports/AuditLog.ts"
import { Invoices } from "../../../ports/Invoices.ts"
import { Ledger } from "../../../ports/Ledger.ts"
import { alice, dnsEnv, ordered } from "../../support/dnsEnv.ts"
import { dnsPlan } from "../../support/dnsZoneProduct.ts"
import { noticesOf } from "../../support/recordedNotices.ts"
import { SimulatedStripe } from "../../support/simulatedStripe.ts"

const env = Layer.mergeAll(MemoryRefundRequests.layer, MemoryAuditLog.layer).pipe(Layer.provideMerge(dnsEnv))
const admin: Operator = { id: UserId.make("00000000-0000-4000-8000-0000000a0d11"), role: "admin", address: "192.0.2.9" }

/** Alice's paid order's charge, invoiced with its payment (VAT included at 20 % for her French billing profile). */
const aCharge = (name: string) =>
  Effect.gen(function*() {
    const order = yield* ordered(name)
    const [charge] = yield* (yield* Ledger).forOrder(order.id)
    assert.strictEqual(charge?.kind, "charge")
    const invoice = Option.getOrThrow(yield* (yield* Invoices).forLedgerEntry("charge", charge!.reference))
    assert.strictEqual(invoice.totalIncludingVatCents, charge!.amountCents)
    return charge!
  })

const refundsOf = (orderId: string | null) =>
  Effect.map(Effect.flatMap(Ledger, (l) => l.forOrder(orderId ?? "")), (all) => all.filter((e) => e.kind === "refund").map((e) => e.amountCents).sort((a, b) => a - b))

const creditNotes = Effect.map(Effect.flatMap(Invoices, (i) => i.forUser(alice, null, 50)), (all) => all.filter((i) => i.kind === "credit_note"))

describe("an operator's refund", () => {
  it.effect("gives back part then the rest, each with its credit note and e-mail, and never more than was taken", () =>
    Effect.gen(function*() {
      const charge = yield* aCharge("refund.fr")
      // The plan's price and the French consumer's 20 % VAT.
      assert.strictEqual(charge.amountCents, dnsPlan.priceCents * 1.2)
      const first = yield* issueRefund(admin, { chargeId: charge.id, amountCents: 1, idempotencyKey: "key-one-cent", reason: "goodwill" })
      assert.deepInclude(first, { amountCents: 1, refundableCents: charge.amountCents - 1 })
      assert.isNotNull(first.creditNote)
      const tooMuch = yield* Effect.flip(
        issueRefund(admin, { chargeId: charge.id, amountCents: charge.amountCents, idempotencyKey: "key-too-much", reason: "goodwill" })
      )
      assert.deepInclude(tooMuch, { _tag: "RefundExceedsCharge", refundableCents: charge.amountCents - 1 })
      const rest = yield* issueRefund(admin, {
        chargeId: charge.id,
        amountCents: charge.amountCents - 1,
        idempotencyKey: "key-the-rest",
        reason: "service_problem"
      })
      assert.strictEqual(rest.refundableCents, 0)
      assert.deepStrictEqual(yield* refundsOf(charge.orderId), [1, charge.amountCents - 1].sort((a, b) => a - b))
      const notes = yield* creditNotes
      assert.deepStrictEqual(notes.map((n) => n.totalIncludingVatCents).sort((a, b) => a - b), [1, charge.amountCents - 1].sort((a, b) => a - b))
      assert.deepStrictEqual((yield* noticesOf("RefundIssued")).map((n) => [n.amountCents, n.reason]), [[1, "goodwill"], [charge.amountCents - 1, "service_problem"]])
      const audit = yield* (yield* AuditLog).list({ actions: ["staff.refund_issued"], limit: 10 })
      assert.deepStrictEqual(audit.map((e) => [e.actorId, e.subjectUserId, e.before, e.after]).reverse(), [
        [admin.id, alice, { refundableCents: charge.amountCents }, { refundableCents: charge.amountCents - 1 }],
        [admin.id, alice, { refundableCents: charge.amountCents - 1 }, { refundableCents: 0 }]
      ])
    }).pipe(Effect.provide(env)))

  it.effect("clicked twice at once with the same key, refunds once", () =>
    Effect.gen(function*() {
      const charge = yield* aCharge("double.fr")
      const asked = { chargeId: charge.id, amountCents: 40, idempotencyKey: "the-same-click", reason: "duplicate" } as const
      const [a, b] = yield* Effect.all([issueRefund(admin, asked), issueRefund(admin, asked)], { concurrency: "unbounded" })
      assert.strictEqual(a.requestId, b.requestId)
      assert.deepStrictEqual(a.creditNote, b.creditNote)
      assert.deepStrictEqual(yield* refundsOf(charge.orderId), [40])
      assert.lengthOf(yield* creditNotes, 1)
      assert.lengthOf(yield* (yield* AuditLog).list({ actions: ["staff.refund_issued"], limit: 10 }), 1)
      // The key names that refund: another amount under it is refused.
      const reused = yield* Effect.flip(issueRefund(admin, { ...asked, amountCents: 30 }))
      assert.strictEqual(reused._tag, "RefundKeyReused")
    }).pipe(Effect.provide(env)))

  it.effect("two different refunds racing for most of the charge: one is given, the other refused", () =>
    Effect.gen(function*() {
      const charge = yield* aCharge("race.fr")
      const most = Math.ceil(charge.amountCents * 0.6)
      const outcomes = yield* Effect.all(
        ["key-operator-a", "key-operator-b"].map((key) =>
          Effect.exit(issueRefund(admin, { chargeId: charge.id, amountCents: most, idempotencyKey: key, reason: "goodwill" }))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(outcomes.map(Exit.isSuccess).sort(), [false, true])
      assert.deepStrictEqual(yield* refundsOf(charge.orderId), [most])
    }).pipe(Effect.provide(env)))

  it.effect("with the gateway down stays reserved (no other refund can take its share), and the same request completes it", () =>
    Effect.gen(function*() {
      const charge = yield* aCharge("outage.fr")
      yield* SimulatedStripe.use((stripe) => stripe.control.failNextApiCalls({ times: 1, status: 500, path: /refunds/ }))
      const asked = { chargeId: charge.id, amountCents: charge.amountCents, idempotencyKey: "key-during-outage", reason: "requested_by_customer" } as const
      assert.strictEqual((yield* Effect.flip(issueRefund(admin, asked)))._tag, "RefundPending")
      assert.deepStrictEqual(yield* refundsOf(charge.orderId), [])
      const meanwhile = yield* Effect.flip(issueRefund(admin, { ...asked, amountCents: 1, idempotencyKey: "key-meanwhile" }))
      assert.deepInclude(meanwhile, { _tag: "RefundExceedsCharge", refundableCents: 0 })
      const done = yield* issueRefund(admin, asked)
      assert.strictEqual(done.refundableCents, 0)
      assert.deepStrictEqual(yield* refundsOf(charge.orderId), [charge.amountCents])
    }).pipe(Effect.provide(env)))

  it.effect("of a charge that does not exist is refused", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(
        issueRefund(admin, { chargeId: "00000000-0000-4000-8000-000000000000", amountCents: 1, idempotencyKey: "key-nothing", reason: "goodwill" })
      )
      assert.strictEqual(missing._tag, "ChargeNotFound")
    }).pipe(Effect.provide(env)))
})
