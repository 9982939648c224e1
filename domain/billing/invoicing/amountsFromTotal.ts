// A partial refund's credit note: the amount given back is fixed (it already left through the gateway), so its
// base is derived from it, half-up, and the VAT is the rest (within the cent EN 16931 BR-CO-17 tolerates).
import type { InvoiceAmounts } from "./amounts.ts"
import type { VatCategory } from "./vatDecision.ts"

export const amountsFromTotal = (
  description: string,
  totalIncludingVatCents: number,
  vatCategory: VatCategory,
  vatRateBasisPoints: number
): InvoiceAmounts => {
  if (!Number.isSafeInteger(totalIncludingVatCents) || totalIncludingVatCents < 0) {
    throw new Error(`bad amount ${totalIncludingVatCents}`)
  }
  const base = Math.floor((totalIncludingVatCents * 10_000 * 2 + (10_000 + vatRateBasisPoints)) / (2 * (10_000 + vatRateBasisPoints)))
  const vat = totalIncludingVatCents - base
  return {
    lines: [{ description, quantity: 1, unitPriceExcludingVatCents: base, vatCategory, vatRateBasisPoints, totalExcludingVatCents: base }],
    vatBreakdown: [{ vatCategory, vatRateBasisPoints, baseCents: base, vatCents: vat }],
    totalExcludingVatCents: base,
    vatCents: vat,
    totalIncludingVatCents: totalIncludingVatCents
  }
}
