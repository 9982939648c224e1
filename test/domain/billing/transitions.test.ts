// Specification of a subscription's legal moves: every (status, event) pair, the table billing decides with.
import { assert, describe, it } from "@effect/vitest"
import { SubscriptionStatus } from "../../../domain/billing/Billing.ts"
import {
  type SubscriptionEvent,
  subscriptionAfter,
  subscriptionEvents,
  subscriptionSources
} from "../../../domain/billing/transitions.ts"

/** The whole table, written out: `undefined` where the event is refused. */
const expected: { readonly [E in SubscriptionEvent]: { readonly [S in SubscriptionStatus]: SubscriptionStatus | undefined } } = {
  lapsed: { active: "suspended", suspended: undefined, terminated: undefined, failed: undefined },
  renewed: { active: "active", suspended: "active", terminated: undefined, failed: undefined },
  ended: { active: undefined, suspended: "terminated", terminated: undefined, failed: undefined },
  provisioningFailed: { active: "failed", suspended: undefined, terminated: undefined, failed: undefined }
}

describe("a subscription's moves", () => {
  for (const event of subscriptionEvents) {
    for (const from of SubscriptionStatus.literals) {
      const to = expected[event][from]
      it(`${event} from ${from} ${to === undefined ? "is refused" : `leads to ${to}`}`, () => {
        assert.strictEqual(subscriptionAfter(from, event), to)
      })
    }
  }

  it("every event is in the table, and the table's sources are exactly the statuses it accepts", () => {
    assert.sameMembers([...subscriptionEvents], Object.keys(expected))
    for (const event of subscriptionEvents) {
      const accepted = SubscriptionStatus.literals.filter((from) => expected[event][from] !== undefined)
      assert.sameMembers(subscriptionSources(event).map(([from]) => from), accepted)
    }
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
