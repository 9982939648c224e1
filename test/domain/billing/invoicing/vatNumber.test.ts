// Specification of VAT numbers: the French key from a SIREN, normalisation, and what goes to VIES.
import { assert, describe, it } from "@effect/vitest"
import { frenchVatNumber, parseVatNumber } from "../../../../domain/billing/invoicing/vatNumber.ts"

describe("VAT numbers", () => {
  it("derives the French number from a SIREN: FR + (12 + 3 × (SIREN mod 97)) mod 97 + SIREN", () => {
    assert.strictEqual(frenchVatNumber("552081317"), "FR03552081317") // EDF's published number
    assert.strictEqual(frenchVatNumber("443061841"), "FR64443061841") // 443061841 mod 97 = 82; (12 + 246) mod 97 = 64
    assert.strictEqual(frenchVatNumber("000000097"), "FR12000000097") // SIREN mod 97 = 0: the key is 12
  })

  it("normalises what a customer types and splits it for VIES", () => {
    assert.deepStrictEqual(parseVatNumber("be 0123.456.749", "BE"), { countryCode: "BE", number: "0123456749" })
    assert.deepStrictEqual(parseVatNumber("EL094259216", "GR"), { countryCode: "EL", number: "094259216" })
  })

  it("refuses a number of another country, a malformed one, and a French one whose key does not match its SIREN", () => {
    assert.strictEqual(parseVatNumber("DE123456789", "BE"), null)
    assert.strictEqual(parseVatNumber("BE1", "BE"), null)
    assert.strictEqual(parseVatNumber("CHE123456789", "CH"), null)
    assert.strictEqual(parseVatNumber("FR04552081317", "FR"), null)
    assert.deepStrictEqual(parseVatNumber("FR03 552 081 317", "FR"), { countryCode: "FR", number: "03552081317" })
  })
})
