// Invoice arithmetic in integer cents: line totals, then VAT per category and rate on the sum of its lines, half-up
// (EN 16931 BR-CO-14, reference/billing-fr.md §2).
import type { VatCategory } from "./vatDecision.ts"

export interface PricedLine {
  readonly description: string
  readonly quantity: number
  readonly unitPriceExcludingVatCents: number
  readonly vatCategory: VatCategory
  readonly vatRateBasisPoints: number
}

export interface InvoiceLine extends PricedLine {
  readonly totalExcludingVatCents: number
}

export interface VatBreakdown {
  readonly vatCategory: VatCategory
  readonly vatRateBasisPoints: number
  readonly baseCents: number
  readonly vatCents: number
}

export interface InvoiceAmounts {
  readonly lines: ReadonlyArray<InvoiceLine>
  readonly vatBreakdown: ReadonlyArray<VatBreakdown>
  readonly totalExcludingVatCents: number
  readonly vatCents: number
  readonly totalIncludingVatCents: number
}

/** `base × rate`, rounded half-up to the cent; bases are never negative (a credit note has positive amounts). */
export const vatOf = (baseCents: number, rateBasisPoints: number): number =>
  Math.floor((baseCents * rateBasisPoints + 5_000) / 10_000)

/** "20" for 2000, "5.5" for 550: the rate as EN 16931 writes it (BT-119, BT-152). */
export const ratePercent = (rateBasisPoints: number): number => rateBasisPoints / 100

export const computeAmounts = (lines: ReadonlyArray<PricedLine>): InvoiceAmounts => {
  for (const line of lines) {
    if (!Number.isSafeInteger(line.quantity) || line.quantity <= 0) throw new Error(`bad quantity ${line.quantity}`)
    if (!Number.isSafeInteger(line.unitPriceExcludingVatCents) || line.unitPriceExcludingVatCents < 0) {
      throw new Error(`bad unit price ${line.unitPriceExcludingVatCents}`)
    }
  }
  const priced = lines.map((line) => ({ ...line, totalExcludingVatCents: line.quantity * line.unitPriceExcludingVatCents }))
  const groups = new Map<string, { vatCategory: VatCategory; vatRateBasisPoints: number; baseCents: number }>()
  for (const line of priced) {
    const key = `${line.vatCategory}:${line.vatRateBasisPoints}`
    const group = groups.get(key) ?? { vatCategory: line.vatCategory, vatRateBasisPoints: line.vatRateBasisPoints, baseCents: 0 }
    groups.set(key, { ...group, baseCents: group.baseCents + line.totalExcludingVatCents })
  }
  const vatBreakdown = [...groups.values()].map((g) => ({ ...g, vatCents: vatOf(g.baseCents, g.vatRateBasisPoints) }))
  const totalExcludingVatCents = priced.reduce((sum, line) => sum + line.totalExcludingVatCents, 0)
  const vatCents = vatBreakdown.reduce((sum, g) => sum + g.vatCents, 0)
  return { lines: priced, vatBreakdown, totalExcludingVatCents, vatCents, totalIncludingVatCents: totalExcludingVatCents + vatCents }
}
