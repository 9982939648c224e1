// The panel's Laravel rule strings, decoded into what a game setting accepts (reference/pterodactyl.md §2.9).
import { assert, describe, it } from "@effect/vitest"
import { decodeEggRules } from "../../../adapters/pterodactyl/eggRules.ts"

describe("egg rules as what a setting accepts", () => {
  it("a bound applies to the length of text and to the value of a number", () => {
    assert.deepStrictEqual(decodeEggRules("required|string|max:20"), {
      required: true,
      checks: [{ _tag: "AtMost", bound: 20, of: "length" }]
    })
    assert.deepStrictEqual(decodeEggRules("nullable|integer|between:1,64"), {
      required: false,
      checks: [{ _tag: "WholeNumber" }, { _tag: "Between", low: 1, high: 64, of: "value" }]
    })
  })

  it("a pipe inside a regex belongs to the regex, and its PHP flags the engine lacks are dropped", () => {
    const accepts = decodeEggRules("required|regex:/^(a|b)$/ix|in:a,b")
    assert.deepStrictEqual(accepts.checks, [
      { _tag: "Matches", pattern: /^(a|b)$/i },
      { _tag: "OneOf", values: ["a", "b"] }
    ])
  })

  it("a rule it cannot say is left to the panel", () => {
    assert.deepStrictEqual(decodeEggRules("required|regex:/(/|date|alpha_dash|boolean"), {
      required: true,
      checks: [{ _tag: "LettersAndDigits", dashes: true }, { _tag: "TrueOrFalse" }]
    })
  })
})
