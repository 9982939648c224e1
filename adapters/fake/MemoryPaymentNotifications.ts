// In-memory PaymentNotifications: like the table's primary key, a notification id is recorded once.
import { Effect, Layer, Ref } from "effect"
import type { PaymentNotification } from "../../ports/PaymentGateway.ts"
import { PaymentNotifications } from "../../ports/PaymentNotifications.ts"

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make<ReadonlyMap<string, PaymentNotification>>(new Map())
  return PaymentNotifications.of({
    record: (notification) =>
      Ref.modify(rows, (m): readonly [boolean, ReadonlyMap<string, PaymentNotification>] =>
        m.has(notification.id) ? [false, m] : [true, new Map(m).set(notification.id, notification)]),
    confirmedRefundCents: (payment) =>
      Effect.map(Ref.get(rows), (m) =>
        Math.max(0, ...[...m.values()].map((n) => n._tag === "RefundConfirmed" && n.payment === payment ? n.refundedCents : 0)))
  })
})

export const layer = Layer.effect(PaymentNotifications, make)
