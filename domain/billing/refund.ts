// Giving the money back when an order fails: every recorded charge of the order refunded once, with its credit note (never a charge that
// was not recorded: only the ledger says what was taken), the subscription failed, and the customer told why.
import { Clock, Effect, Option } from "effect"
import { SecureRandom } from "effect/crypto"
import { Ledger } from "../../ports/Ledger.ts"
import type { LedgerEntry } from "./Billing.ts"
import { Orders } from "../../ports/Orders.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { Notices } from "../notices/CustomerNotice.ts"
import { alert } from "../ops/alert.ts"
import { moveOrder } from "./orderMoves.ts"
import { countPayment } from "../ops/metrics.ts"
import { moveSubscription } from "./subscriptionMoves.ts"
import { describeCause, keepTrying, worthAnAlert } from "../ops/keepTrying.ts"
import { tell } from "./serviceNotices.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { recordRefund } from "./invoicing/issueDocuments.ts"

/**
 * Refunds what is left of each recorded charge of the order that `which` selects (the charge less every refund of it
 * already recorded: an operator may have given part of it back), once (the key `refund:<ledger entry>`); answers how
 * many charges the order has in all.
 */
export const refundRecordedCharges = (orderId: string, which: (charge: LedgerEntry) => boolean = () => true) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    const entries = yield* ledger.forOrder(orderId)
    const charges = entries.filter((e) => e.kind === "charge")
    const refundedCents = new Map<string, number>()
    for (const e of entries) {
      if (e.kind !== "refund") continue
      const charge = e.reference.split(":")[0]!
      refundedCents.set(charge, (refundedCents.get(charge) ?? 0) + e.amountCents)
    }
    for (const charge of charges.filter(which)) {
      const leftCents = charge.amountCents - (refundedCents.get(charge.reference) ?? 0)
      if (leftCents <= 0) continue
      // The idempotency key makes a replayed refund a no-op at the gateway; a gateway that is down delays the
      // refund, it never skips it.
      const refund = yield* keepTrying(
        (yield* PaymentGateway).refund({
          charge: charge.reference,
          amountCents: leftCents,
          idempotencyKey: `refund:${charge.id}`
        }),
        {
          onFailure: (attempt, cause) =>
            worthAnAlert(attempt)
              ? alert(`refunding charge ${charge.reference} of order ${orderId} failed (attempt ${attempt}), retrying: ${describeCause(cause)}`, { orderId, attempt })
              : Effect.logWarning(`refunding charge ${charge.reference} of order ${orderId} failed (attempt ${attempt}), retrying`)
        }
      )
      yield* countPayment("refund", "refunded")
      // The refund, its credit note and its notice, together or not at all (the notice is e-mailed after the commit,
      // with the credit note attached): a retry after a crash refunds again under the same key, gets the same refund
      // back and records and tells it then, so the customer hears of it once, never not at all.
      const entry = {
        id: yield* (yield* SecureRandom.SecureRandom).uuidV4(),
        userId: charge.userId,
        subscriptionId: charge.subscriptionId,
        orderId,
        kind: "refund" as const,
        amountCents: leftCents,
        reference: `${charge.reference}:${refund.reference}`,
        createdAt: new Date(yield* Clock.currentTimeMillis)
      }
      yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
        const credit = yield* recordRefund(entry, charge.reference)
        yield* tell({
          _tag: "RefundIssued",
          userId: charge.userId,
          refundId: refund.reference,
          amountCents: leftCents,
          reason: "order_failed",
          creditNoteId: Option.match(credit, { onNone: () => null, onSome: (c) => c.id })
        })
      }))
    }
    return charges.length
  })

export const refundOrder = (orderId: string, reason: string) =>
  Effect.gen(function*() {
    const orders = yield* Orders
    const order = yield* orders.get(orderId)
    if (Option.isNone(order)) return
    const charges = yield* refundRecordedCharges(orderId)
    if (order.value.subscriptionId !== null) {
      yield* moveSubscription(order.value.subscriptionId, "provisioningFailed")
    }
    const outcome = charges > 0 ? "Nothing was kept and your payment was refunded." : "Nothing was charged."
    yield* moveOrder(orderId, { event: "failed", reason: `${reason} ${outcome}` }, new Date(yield* Clock.currentTimeMillis))
  })
