// What the customer of a failed order must see before any undo is done: the order failed and refunded, its charge
// and refund in the ledger, its subscription failed.
import { assert } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { Order } from "../../domain/billing/Billing.ts"
import { Ledger } from "../../ports/Ledger.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"

export const assertRefunded = (order: Order) =>
  Effect.gen(function*() {
    assert.strictEqual(order.status, "failed")
    assert.include(order.failureReason ?? "", "refunded")
    assert.deepStrictEqual((yield* (yield* Ledger).forOrder(order.id)).map((e) => e.kind).sort(), ["charge", "refund"])
    assert.strictEqual(Option.getOrThrow(yield* (yield* Subscriptions).get(order.subscriptionId!)).status, "failed")
  })
