// Specification of billing's legal moves: every (status, event) pair of a subscription and of an order, the tables
// billing decides with.
import { assert, describe, it } from "@effect/vitest"
import { SubscriptionStatus } from "../../../domain/billing/Billing.ts"
import {
  type OrderEvent,
  orderAfter,
  orderEvents,
  type OrderLifeStatus,
  orderSources,
  orderStatuses,
  type SubscriptionEvent,
  subscriptionAfter,
  subscriptionEvents,
  subscriptionSources
} from "../../../domain/billing/transitions.ts"

/** One aggregate's table, written out (`undefined` where an event is refused), against its pure functions. */
const specifyTable = <S extends string, E extends string>(table: {
  readonly statuses: ReadonlyArray<S>
  readonly events: ReadonlyArray<E>
  readonly expected: { readonly [K in E]: { readonly [T in S]: S | undefined } }
  readonly after: (from: S, event: E) => S | undefined
  readonly sources: (event: E) => ReadonlyArray<readonly [S, S]>
}) => {
  for (const event of table.events) {
    for (const from of table.statuses) {
      const to = table.expected[event][from]
      it(`${event} from ${from} ${to === undefined ? "is refused" : `leads to ${to}`}`, () => {
        assert.strictEqual(table.after(from, event), to)
      })
    }
  }
  it("every event is in the table, and the table's sources are exactly the statuses each event accepts", () => {
    assert.sameMembers([...table.events], Object.keys(table.expected))
    for (const event of table.events) {
      const accepted = table.statuses.filter((from) => table.expected[event][from] !== undefined)
      assert.sameMembers(table.sources(event).map(([from]) => from), accepted)
    }
  })
}

/** `to` from the statuses listed, nothing from the others. */
const only = <S extends string>(statuses: ReadonlyArray<S>, moves: Partial<Record<S, S>>) =>
  Object.fromEntries(statuses.map((s) => [s, moves[s]])) as { readonly [T in S]: S | undefined }

describe("a subscription's moves", () => {
  const statuses = SubscriptionStatus.literals
  specifyTable<SubscriptionStatus, SubscriptionEvent>({
    statuses,
    events: subscriptionEvents,
    expected: {
      lapsed: only(statuses, { active: "suspended" }),
      renewed: only(statuses, { active: "active", suspended: "active" }),
      ended: only(statuses, { suspended: "terminated" }),
      provisioningFailed: only(statuses, { active: "failed" })
    },
    after: subscriptionAfter,
    sources: subscriptionSources
  })

  it("a renewal is tried from active before suspended: the lapse it can race leads from one to the other", () => {
    assert.deepStrictEqual(subscriptionSources("renewed").map(([from]) => from), ["active", "suspended"])
  })

  it("a terminated or failed subscription never moves again", () => {
    for (const event of subscriptionEvents) {
      assert.isUndefined(subscriptionAfter("terminated", event))
      assert.isUndefined(subscriptionAfter("failed", event))
    }
  })
})

describe("an order's moves", () => {
  specifyTable<OrderLifeStatus, OrderEvent>({
    statuses: orderStatuses,
    events: orderEvents,
    expected: {
      checkoutOpened: only(orderStatuses, { awaiting_payment: "awaiting_payment" }),
      paid: only(orderStatuses, { awaiting_payment: "provisioning" }),
      progressed: only(orderStatuses, { provisioning: "provisioning" }),
      provisioned: only(orderStatuses, { provisioning: "completed" }),
      failed: only(orderStatuses, { awaiting_payment: "failed", provisioning: "failed" }),
      expired: only(orderStatuses, { awaiting_payment: "expired" })
    },
    after: orderAfter,
    sources: orderSources
  })

  it("a completed, failed or expired order never moves again: an expired one is never paid into provisioning", () => {
    for (const event of orderEvents) {
      for (const done of ["completed", "failed", "expired"] as const) assert.isUndefined(orderAfter(done, event))
    }
  })
})
