// "Today" on the dashboard is the French calendar day, whatever the server's zone: its bounds in winter, in summer,
// and on the days the clocks change (23 and 25 hours long).
import { describe, expect, it } from "vitest"
import { parisDayOf } from "../../../domain/backoffice/dashboard.ts"

const bounds = (iso: string) => {
  const { start, end } = parisDayOf(new Date(iso))
  return [start.toISOString(), end.toISOString()]
}

describe("the dashboard's day", () => {
  it("is the French day: UTC+1 in winter, UTC+2 in summer", () => {
    expect(bounds("2026-01-15T12:00:00Z")).toEqual(["2026-01-14T23:00:00.000Z", "2026-01-15T23:00:00.000Z"])
    expect(bounds("2026-07-15T12:00:00Z")).toEqual(["2026-07-14T22:00:00.000Z", "2026-07-15T22:00:00.000Z"])
  })

  it("starts at French midnight, not UTC's: 23:30 UTC in winter is already the next day", () => {
    expect(bounds("2026-01-15T23:30:00Z")).toEqual(["2026-01-15T23:00:00.000Z", "2026-01-16T23:00:00.000Z"])
  })

  it("lasts 23 hours when the clocks go forward and 25 when they go back", () => {
    expect(bounds("2026-03-29T12:00:00Z")).toEqual(["2026-03-28T23:00:00.000Z", "2026-03-29T22:00:00.000Z"])
    expect(bounds("2026-10-25T12:00:00Z")).toEqual(["2026-10-24T22:00:00.000Z", "2026-10-25T23:00:00.000Z"])
  })
})
