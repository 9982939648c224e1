// Specification of invoice arithmetic: VAT per rate on the sum of the lines, half-up, in integer cents.
import { assert, describe, it } from "@effect/vitest"
import { computeAmounts, type PricedLine, vatOf } from "../../../../domain/billing/invoicing/amounts.ts"

const line = (unit: number, rate: number, quantity = 1): PricedLine => ({
  description: "x",
  quantity,
  unitPriceExcludingVatCents: unit,
  vatCategory: rate === 0 ? "O" : "S",
  vatRateBasisPoints: rate
})

describe("invoice amounts", () => {
  it("rounds half up: 0.025 € of VAT is 0.03 €, 0.0249 € is 0.02 €", () => {
    assert.strictEqual(vatOf(1250, 200), 25) // 12.50 × 2 % = 0.25 exactly
    assert.strictEqual(vatOf(25, 1000), 3) // 0.25 × 10 % = 0.025 → 0.03
    assert.strictEqual(vatOf(249, 1000), 25) // 2.49 × 10 % = 0.249 → 0.25
    assert.strictEqual(vatOf(1, 550), 0) // 0.01 × 5.5 % = 0.00055 → 0
    assert.strictEqual(vatOf(10, 550), 1) // 0.10 × 5.5 % = 0.0055 → 0.01
  })

  it("computes VAT once per rate on the total, not per line (three 0.05 € lines at 10 %: 0.02 €, not 3 × 0.01 €)", () => {
    const amounts = computeAmounts([line(5, 1000), line(5, 1000), line(5, 1000)])
    assert.deepStrictEqual(amounts.vatBreakdown, [{ vatCategory: "S", vatRateBasisPoints: 1000, baseCents: 15, vatCents: 2 }])
    assert.deepStrictEqual([amounts.totalExcludingVatCents, amounts.vatCents, amounts.totalIncludingVatCents], [15, 2, 17])
  })

  it("keeps one breakdown per category and rate, and the VAT total is their sum (BR-CO-14)", () => {
    const amounts = computeAmounts([line(999, 2000, 3), line(500, 550), line(700, 0)])
    assert.deepStrictEqual(amounts.vatBreakdown.map((g) => [g.vatCategory, g.vatRateBasisPoints, g.baseCents, g.vatCents]), [
      ["S", 2000, 2997, 599],
      ["S", 550, 500, 28],
      ["O", 0, 700, 0]
    ])
    assert.strictEqual(amounts.vatCents, 599 + 28)
    assert.strictEqual(amounts.totalIncludingVatCents, 2997 + 500 + 700 + 627)
    assert.deepStrictEqual(amounts.lines.map((l) => l.totalExcludingVatCents), [2997, 500, 700])
  })

  it("refuses a fractional or negative amount: money is integer cents", () => {
    assert.throws(() => computeAmounts([line(10.5, 2000)]))
    assert.throws(() => computeAmounts([line(-1, 2000)]))
    assert.throws(() => computeAmounts([line(10, 2000, 0)]))
  })
})
