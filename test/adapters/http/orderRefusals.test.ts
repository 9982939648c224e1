// An order a product refuses before anything is charged gets a stable code at the edge, from the one error table.
import { assert, describe, it } from "@effect/vitest"
import { SoldOut } from "../../../domain/billing/BillingErrors.ts"
import { answerOf } from "../../../adapters/http/errorMapping.ts"

describe("an order refused for want of room", () => {
  it("answers 409 PLAN_SOLD_OUT, saying nothing was charged", () => {
    const answer = answerOf(new SoldOut({ planId: "vps-huge" }))
    assert.deepInclude(answer, { status: 409, code: "PLAN_SOLD_OUT" })
    assert.include(answer.message, "Nothing was charged")
  })
})
