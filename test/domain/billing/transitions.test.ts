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
import { orderMove } from "../../../domain/billing/orderMoves.ts"

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
      provisioningFailed: only(statuses, { active: "failed" }),
      withdrawn: only(statuses, { active: "terminated" }),
      endedByOperator: only(statuses, { active: "terminated", suspended: "terminated" })
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

describe("what an order's move records", () => {
  const at = new Date("2026-03-01T10:00:00.000Z")

  it("each event records its own columns, and only those, with the status it leads to", () => {
    assert.deepStrictEqual(orderMove("awaiting_payment", { event: "checkoutOpened", session: "cs_1", url: "https://pay.example/cs_1" }, at), {
      from: "awaiting_payment",
      to: "awaiting_payment",
      now: at,
      recorded: { checkoutSession: "cs_1", checkoutUrl: "https://pay.example/cs_1" }
    })
    assert.deepStrictEqual(orderMove("awaiting_payment", { event: "paid" }, at)?.recorded, { step: 0, stepName: "Queued" })
    assert.deepStrictEqual(orderMove("provisioning", { event: "progressed", step: 3, stepName: "Sizing the disk" }, at)?.recorded, {
      step: 3,
      stepName: "Sizing the disk"
    })
    assert.deepStrictEqual(
      orderMove("provisioning", { event: "provisioned", serviceId: "s-1", oneTimeSecret: null }, at),
      { from: "provisioning", to: "completed", now: at, recorded: { serviceId: "s-1", oneTimeSecret: null } }
    )
    assert.deepStrictEqual(orderMove("awaiting_payment", { event: "failed", reason: "Declined." }, at)?.recorded, { failureReason: "Declined." })
    assert.deepStrictEqual(orderMove("awaiting_payment", { event: "expired" }, at)?.to, "expired")
  })

  it("a move the table refuses is no move at all", () => {
    assert.isUndefined(orderMove("completed", { event: "failed", reason: "too late" }, at))
    assert.isUndefined(orderMove("awaiting_payment", { event: "provisioned", serviceId: "s-1", oneTimeSecret: "v1:x" }, at))
    assert.isUndefined(orderMove("expired", { event: "paid" }, at))
  })
})
