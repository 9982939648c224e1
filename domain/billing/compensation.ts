// When provisioning fails: the customer first (refunded and told at once), then the undo of what was built, tried
// until it succeeds however long the upstream stays down. Both run as durable activities of the product's workflow,
// so a restart carries them on; the order shows as a pending cleanup until the undo is done.
import { Clock, Effect } from "effect"
import { Orders } from "../../ports/Orders.ts"
import { alert } from "../ops/alert.ts"
import { dieOnDatabaseOutage } from "../ops/dieOnDatabaseOutage.ts"
import { describeCause, keepTrying, worthAnAlert } from "../ops/keepTrying.ts"
import { refundOrder } from "./refund.ts"

/** Marks the undo pending (so a crash right after leaves a trace), then refunds and fails the order. */
export const failAndRefund = (orderId: string, reason: string) =>
  Effect.gen(function*() {
    yield* (yield* Orders).cleanupPending(orderId, new Date(yield* Clock.currentTimeMillis))
    yield* refundOrder(orderId, reason)
  })

/** Runs the order's `undo` until it succeeds; each failure is recorded on the order and logged, alerts first. */
export const cleanUp = <E, R>(orderId: string, undo: Effect.Effect<void, E, R>) =>
  Effect.gen(function*() {
    const orders = yield* Orders
    yield* keepTrying(undo, {
      onFailure: (attempt, cause) =>
        Effect.gen(function*() {
          const detail = describeCause(cause)
          yield* dieOnDatabaseOutage(orders.cleanupFailed(orderId, detail))
          const message = `cleanup of failed order ${orderId} failed (attempt ${attempt}), retrying with backoff: ${detail}`
          yield* worthAnAlert(attempt) ? alert(message, { orderId, attempt }) : Effect.logWarning(message)
        })
    })
    yield* orders.cleanupDone(orderId)
  })
