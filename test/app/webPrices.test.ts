// The panel's plan price (app/web/src/prices.ts) for each audience GET /api/plans names, in both languages.
import { describe, expect, it } from "vitest"
import type { Plan } from "../../app/web/src/api.ts"
import { shownPrice } from "../../app/web/src/prices.ts"
import { inLanguage, restoreLanguageAfterEach } from "../support/panelLanguage.ts"

const plan = (priceIncludingVatCents: number, vatCategory: Plan["vatCategory"]): Plan => ({
  id: "vps-s",
  kind: "vps",
  name: "VPS S",
  priceCents: 500,
  priceIncludingVatCents,
  vatCategory,
  vatRateBasisPoints: vatCategory === "S" ? 2000 : 0,
  vcpu: 1,
  ramMiB: 1024,
  diskGiB: 20,
  snapshotLimit: 2,
  templates: []
})

restoreLanguageAfterEach()

describe("shownPrice", () => {
  it("a consumer and a visitor see the price including VAT, said so", () => {
    inLanguage("fr")
    expect(shownPrice(plan(600, "S"), "consumer")).toBe("6,00\u00a0€ TTC")
    expect(shownPrice(plan(600, "S"), "anonymous")).toBe("6,00\u00a0€ TTC")
    inLanguage("en")
    expect(shownPrice(plan(600, "S"), "anonymous")).toBe("€6.00 incl. VAT")
  })

  it("a business sees both, or the reverse charge that leaves the price excluding VAT", () => {
    inLanguage("fr")
    expect(shownPrice(plan(600, "S"), "business")).toBe("5,00\u00a0€ HT · 6,00\u00a0€ TTC")
    expect(shownPrice(plan(500, "AE"), "business")).toBe("5,00\u00a0€ HT · autoliquidation")
    inLanguage("en")
    expect(shownPrice(plan(600, "S"), "business")).toBe("€5.00 excl. VAT · €6.00 incl. VAT")
  })
})
