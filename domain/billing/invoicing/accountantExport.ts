// What the accountant receives: every invoice and credit note of a period as CSV, one row per document and VAT rate
// (credit notes negative), then the totals per customer country and rate; and the year's OSS total.
import { Effect } from "effect"
import { Invoices } from "../../../ports/Invoices.ts"
import type { Invoice } from "./Invoice.ts"

/** Midnight in France on `day` (YYYY-MM-DD), as an instant: the accountant's days are French days. */
export const parisMidnight = (day: string): Date => {
  const utc = new Date(`${day}T00:00:00.000Z`)
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(utc.getTime()) || utc.toISOString().slice(0, 10) !== day) {
    throw new Error(`not a date: ${day}`)
  }
  const offset = new Intl.DateTimeFormat("en", { timeZone: "Europe/Paris", timeZoneName: "longOffset" })
    .formatToParts(utc).find((p) => p.type === "timeZoneName")?.value ?? "GMT+01:00"
  const [, sign, hours, minutes] = /GMT([+-])(\d{2}):(\d{2})/.exec(offset) ?? ["", "+", "01", "00"]
  const shift = (Number(hours) * 60 + Number(minutes)) * 60_000 * (sign === "-" ? -1 : 1)
  return new Date(utc.getTime() - shift)
}

const cell = (value: string | number): string => {
  const text = String(value)
  return /[",\n\r;]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

const euros = (cents: number) => (cents / 100).toFixed(2)

/** The calendar day in France (YYYY-MM-DD) at an instant. */
export const parisDay = (at: Date): string =>
  new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Paris", year: "numeric", month: "2-digit", day: "2-digit" }).format(at)

export const HEADER = [
  "number", "kind", "issued_on", "corrects", "customer", "customer_country", "customer_vat_number", "customer_siren",
  "vat_category", "vat_rate_percent", "base_eur", "vat_eur", "document_total_eur", "vat_country", "oss", "payment_reference"
] as const

/** The CSV of `documents` (oldest first), totals per customer country, VAT category and rate at the end. */
export const accountantCsv = (documents: ReadonlyArray<Invoice>): string => {
  const rows: Array<ReadonlyArray<string | number>> = [HEADER]
  const totals = new Map<string, { country: string; category: string; rate: number; base: number; vat: number }>()
  for (const d of documents) {
    const sign = d.kind === "invoice" ? 1 : -1
    for (const group of d.vatBreakdown) {
      rows.push([
        d.number, d.kind, parisDay(d.issuedAt), d.correctsNumber ?? "", d.buyer.companyName ?? d.buyer.name,
        d.buyer.address.country, d.buyer.vatNumber ?? "", d.buyer.siren ?? "", group.vatCategory,
        group.vatRateBasisPoints / 100, euros(sign * group.baseCents), euros(sign * group.vatCents),
        euros(sign * d.totalIncludingVatCents), d.taxCountry ?? "", d.countsTowardsOss ? "yes" : "no", d.settlement.reference
      ])
      const key = `${d.buyer.address.country}|${group.vatCategory}|${group.vatRateBasisPoints}`
      const total = totals.get(key) ??
        { country: d.buyer.address.country, category: group.vatCategory, rate: group.vatRateBasisPoints, base: 0, vat: 0 }
      totals.set(key, { ...total, base: total.base + sign * group.baseCents, vat: total.vat + sign * group.vatCents })
    }
  }
  const sorted = [...totals.values()].sort((a, b) => a.country.localeCompare(b.country) || a.category.localeCompare(b.category) || a.rate - b.rate)
  for (const t of sorted) {
    rows.push(["TOTAL", "total", "", "", "", t.country, "", "", t.category, t.rate / 100, euros(t.base), euros(t.vat), euros(t.base + t.vat), "", "", ""])
  }
  return rows.map((row) => row.map(cell).join(",")).join("\n") + "\n"
}

/** The day after `day` (YYYY-MM-DD). */
const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10)

/** The documents issued between two French days, both included, as the accountant's CSV. */
export const exportPeriod = Effect.fn("exportPeriod")(function*(from: string, to: string) {
  return accountantCsv(yield* (yield* Invoices).issuedBetween(parisMidnight(from), parisMidnight(nextDay(to))))
})

/** The cross-border consumer sales (excluding VAT, in cents) of a calendar year, as the OSS threshold counts them. */
export const ossTotalOf = (year: number) => Effect.flatMap(Invoices, (invoices) => invoices.ossTotal(year))
