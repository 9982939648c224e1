// Specification of the VAT decision (reference/billing-fr.md §2): the figure's table of buyers, each with the
// category, rate, mentions and totals of a 10.00 € (excluding VAT) month, plus the threshold's edges.
import { assert, describe, it } from "@effect/vitest"
import { computeAmounts } from "../../../../domain/billing/invoicing/amounts.ts"
import {
  decideVat,
  ossDecides,
  type OssTotals,
  type VatBuyer,
  type VatRules
} from "../../../../domain/billing/invoicing/vatDecision.ts"

const rules: VatRules = {
  frenchRateBasisPoints: 2000,
  ossThresholdCents: 1_000_000,
  memberStateRates: new Map([["BE", 2100], ["DE", 1900]])
}
const below: OssTotals = { currentYearCents: 400_000, previousYearCents: 300_000 }
const above: OssTotals = { currentYearCents: 1_000_500, previousYearCents: 300_000 }

const month = 1000

const row = (buyer: VatBuyer, oss: OssTotals = below) => {
  const decision = decideVat(buyer, rules, oss, month)
  const amounts = computeAmounts([{
    description: "VPS S",
    quantity: 1,
    unitPriceExcludingVatCents: month,
    vatCategory: decision.category,
    vatRateBasisPoints: decision.rateBasisPoints
  }])
  return {
    category: decision.category,
    rate: decision.rateBasisPoints,
    taxCountry: decision.taxCountry,
    mentions: decision.mentions,
    buyerVatNumber: decision.printBuyerVatNumber,
    oss: decision.countsTowardsOss,
    recheck: decision.recheckVatNumber,
    totals: [amounts.totalExcludingVatCents, amounts.vatCents, amounts.totalIncludingVatCents]
  }
}

describe("the VAT of one month, by buyer (issue 13 §4 table)", () => {
  const table: ReadonlyArray<readonly [string, VatBuyer, OssTotals, ReturnType<typeof row>]> = [
    ["French consumer", { country: "FR", business: false, vatCheck: "none" }, below,
      { category: "S", rate: 2000, taxCountry: "FR", mentions: [], buyerVatNumber: false, oss: false, recheck: false, totals: [1000, 200, 1200] }],
    ["French company (VIES confirmed its number): no reverse charge between French companies", { country: "FR", business: true, vatCheck: "valid" }, below,
      { category: "S", rate: 2000, taxCountry: "FR", mentions: [], buyerVatNumber: true, oss: false, recheck: false, totals: [1000, 200, 1200] }],
    ["Belgian company with a valid number: reverse charge", { country: "BE", business: true, vatCheck: "valid" }, below,
      { category: "AE", rate: 0, taxCountry: null, mentions: ["reverse_charge"], buyerVatNumber: true, oss: false, recheck: false, totals: [1000, 0, 1000] }],
    ["Belgian company whose number VIES rejects: VAT as for a consumer", { country: "BE", business: true, vatCheck: "invalid" }, below,
      { category: "S", rate: 2000, taxCountry: "FR", mentions: [], buyerVatNumber: false, oss: true, recheck: false, totals: [1000, 200, 1200] }],
    ["German consumer below the OSS threshold: French VAT", { country: "DE", business: false, vatCheck: "none" }, below,
      { category: "S", rate: 2000, taxCountry: "FR", mentions: [], buyerVatNumber: false, oss: true, recheck: false, totals: [1000, 200, 1200] }],
    ["German consumer above the OSS threshold: German VAT", { country: "DE", business: false, vatCheck: "none" }, above,
      { category: "S", rate: 1900, taxCountry: "DE", mentions: [], buyerVatNumber: false, oss: true, recheck: false, totals: [1000, 190, 1190] }],
    ["Swiss customer: outside the scope of French VAT", { country: "CH", business: false, vatCheck: "none" }, below,
      { category: "O", rate: 0, taxCountry: null, mentions: ["outside_scope"], buyerVatNumber: false, oss: false, recheck: false, totals: [1000, 0, 1000] }],
    ["Belgian company while VIES is down: VAT charged, number checked again later", { country: "BE", business: true, vatCheck: "unavailable" }, below,
      { category: "S", rate: 2000, taxCountry: "FR", mentions: [], buyerVatNumber: false, oss: true, recheck: true, totals: [1000, 200, 1200] }]
  ]
  for (const [name, buyer, oss, expected] of table) {
    it(name, () => assert.deepStrictEqual(row(buyer, oss), expected))
  }
})

describe("the OSS threshold", () => {
  const consumer: VatBuyer = { country: "DE", business: false, vatCheck: "none" }
  const rateAt = (oss: OssTotals) => decideVat(consumer, rules, oss, month).rateBasisPoints

  it("a sale that brings the year exactly to the threshold is still French", () =>
    assert.strictEqual(rateAt({ currentYearCents: 1_000_000 - month, previousYearCents: 0 }), 2000))

  it("the sale that crosses the threshold is already taxed where the consumer lives", () =>
    assert.strictEqual(rateAt({ currentYearCents: 1_000_000 - month + 1, previousYearCents: 0 }), 1900))

  it("a previous year above the threshold taxes every sale of this year where the consumer lives", () =>
    assert.strictEqual(rateAt({ currentYearCents: 0, previousYearCents: 1_000_001 }), 1900))

  it("a member state without a configured rate keeps the French rate rather than guessing one", () =>
    assert.strictEqual(decideVat({ ...consumer, country: "AT" }, rules, above, month).rateBasisPoints, 2000))

  it("a French consumer never counts towards the OSS threshold, however large the year", () =>
    assert.deepStrictEqual(
      [decideVat({ country: "FR", business: false, vatCheck: "none" }, rules, above, month).rateBasisPoints,
        decideVat({ country: "FR", business: false, vatCheck: "none" }, rules, above, month).countsTowardsOss],
      [2000, false]
    ))

  it("the year's sales decide only for a buyer taxed as a consumer in another member state (ossDecides)", () => {
    const buyers: ReadonlyArray<VatBuyer> = [
      { country: "FR", business: false, vatCheck: "none" },
      { country: "FR", business: true, vatCheck: "valid" },
      { country: "BE", business: true, vatCheck: "valid" },
      { country: "BE", business: true, vatCheck: "invalid" },
      { country: "BE", business: true, vatCheck: "unavailable" },
      { country: "DE", business: false, vatCheck: "none" },
      { country: "CH", business: false, vatCheck: "none" }
    ]
    const none: OssTotals = { currentYearCents: 0, previousYearCents: 0 }
    assert.deepStrictEqual(
      buyers.map((buyer) => [
        ossDecides(buyer),
        JSON.stringify(decideVat(buyer, rules, none, month)) !== JSON.stringify(decideVat(buyer, rules, above, month))
      ]),
      [[false, false], [false, false], [false, false], [true, true], [true, true], [true, true], [false, false]]
    )
  })
})
