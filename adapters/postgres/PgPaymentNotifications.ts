// The provider's notifications in Postgres: the primary key on the notification's id makes a redelivery a no-op.
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { PaymentNotification } from "../../ports/PaymentGateway.ts"
import { stored } from "./failures.ts"
import { PaymentNotifications } from "../../ports/PaymentNotifications.ts"

const Refunded = Schema.Array(Schema.Struct({ refunded: Schema.NullOr(Schema.Int) }))

const rowOf = (n: PaymentNotification, now: Date) => ({
  id: n.id,
  kind: n._tag,
  payment: "payment" in n ? n.payment : null,
  order_id: "orderId" in n ? n.orderId : null,
  refunded_cents: n._tag === "RefundConfirmed" ? n.refundedCents : null,
  received_at: now
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return PaymentNotifications.of({
    record: (notification, now) =>
      sql`INSERT INTO payment_notifications ${sql.insert(rowOf(notification, now))} ON CONFLICT (id) DO NOTHING RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        stored
      ),
    confirmedRefundCents: (payment) =>
      sql`SELECT max(refunded_cents) AS refunded FROM payment_notifications
          WHERE payment = ${payment} AND kind = 'RefundConfirmed'`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Refunded)),
        Effect.map((rows) => rows[0]?.refunded ?? 0),
        stored
      )
  })
})

export const layer = Layer.effect(PaymentNotifications, make)
