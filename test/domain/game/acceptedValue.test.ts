// A customer's game setting against what the egg accepts: the answer they read before paying.
import { assert, describe, it } from "@effect/vitest"
import { problemWith } from "../../../domain/game/acceptedValue.ts"

describe("a game setting against what it accepts", () => {
  it("a required setting left empty is refused, an optional one is not checked", () => {
    assert.strictEqual(problemWith({ required: true, checks: [] }, ""), "is required")
    assert.isUndefined(problemWith({ required: false, checks: [{ _tag: "WholeNumber" }] }, undefined))
  })

  it("the first check a value fails is its problem", () => {
    const port = { required: true, checks: [{ _tag: "WholeNumber" }, { _tag: "Between", low: 1, high: 65535, of: "value" }] } as const
    assert.strictEqual(problemWith(port, "http"), "must be a whole number")
    assert.strictEqual(problemWith(port, "70000"), "must be between 1 and 65535")
    assert.isUndefined(problemWith(port, "25565"))
  })

  it("a length bound counts characters, not bytes", () => {
    const name = { required: true, checks: [{ _tag: "AtMost", bound: 3, of: "length" }] } as const
    assert.isUndefined(problemWith(name, "été"))
    assert.strictEqual(problemWith(name, "étés"), "must be at most 3 characters")
  })

  it("a value outside a list or a pattern is named as such", () => {
    assert.strictEqual(problemWith({ required: true, checks: [{ _tag: "OneOf", values: ["easy", "hard"] }] }, "peaceful"), "must be one of easy, hard")
    assert.strictEqual(problemWith({ required: true, checks: [{ _tag: "Matches", pattern: /\.jar$/ }] }, "x.zip"), "has an invalid format")
  })
})
