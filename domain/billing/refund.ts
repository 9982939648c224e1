// Giving the money back when provisioning fails: refund every charge of the order once, and say why it failed.
import { Clock, Effect, Option } from "effect"
import { SecureRandom } from "effect/crypto"
import { Ledger } from "../../ports/Ledger.ts"
import { Orders } from "../../ports/Orders.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"

export const refundOrder = (orderId: string, reason: string) =>
  Effect.gen(function*() {
    const orders = yield* Orders
    const ledger = yield* Ledger
    const order = yield* orders.get(orderId)
    if (Option.isNone(order)) return
    const entries = yield* ledger.forOrder(orderId)
    const refunded = new Set(entries.filter((e) => e.kind === "refund").map((e) => e.reference.split(":")[0]))
    for (const charge of entries.filter((e) => e.kind === "charge" && !refunded.has(e.reference))) {
      // The idempotency key makes a replayed refund a no-op at the gateway.
      const refund = yield* (yield* PaymentGateway).refund({
        charge: charge.reference,
        amountCents: charge.amountCents,
        idempotencyKey: `refund:${charge.id}`
      }).pipe(Effect.retry({ times: 5 }), Effect.orDie)
      yield* ledger.record({
        id: yield* (yield* SecureRandom.SecureRandom).uuidV4(),
        userId: charge.userId,
        subscriptionId: charge.subscriptionId,
        orderId,
        kind: "refund",
        amountCents: charge.amountCents,
        reference: `${charge.reference}:${refund.reference}`,
        createdAt: new Date(yield* Clock.currentTimeMillis)
      })
    }
    if (order.value.subscriptionId !== null) {
      yield* (yield* Subscriptions).setStatus(order.value.subscriptionId, "failed", ["active"])
    }
    yield* orders.fail(orderId, `${reason} Nothing was kept and your payment was refunded.`, new Date(yield* Clock.currentTimeMillis))
  })
