// GET /api/plans priced for the visitor over real HTTP on a sandbox server (its VPS S is 5,00 € excluding VAT): the
// VAT decision of the charge, by the signed-in customer's billing profile, French VAT for everyone else.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { startTestServer } from "../support/testServer.ts"
import { leakScanner, signedInCustomer } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>

beforeAll(async () => {
  server = await startTestServer()
}, 120_000)

afterAll(async () => {
  await server?.stop()
})

interface Priced {
  readonly audience: string
  readonly plans: ReadonlyArray<{ id: string; priceCents: number; priceIncludingVatCents: number; vatCategory: string; vatRateBasisPoints: number }>
}

const vpsS = (text: string) => {
  const body = JSON.parse(text) as Priced
  return { audience: body.audience, plan: body.plans.find((p) => p.id === "vps-s") }
}

describe("GET /api/plans, priced for the visitor", () => {
  it("a visitor who is not signed in sees French VAT, in a public answer that varies by cookie", async () => {
    const reply = await new Browser(server.url).get("/api/plans")
    expect(reply.status).toBe(200)
    expect(vpsS(reply.text)).toEqual({
      audience: "anonymous",
      plan: expect.objectContaining({ priceCents: 500, priceIncludingVatCents: 600, vatCategory: "S", vatRateBasisPoints: 2000 })
    })
    expect(reply.headers.get("cache-control")).toBeNull()
    expect(reply.headers.get("vary")).toBe("cookie")
  })

  it("a French consumer, before and after filling in the billing profile: 600 for a 500 plan, not stored by caches", async () => {
    const scan = await leakScanner(server)
    const consumer = await signedInCustomer(server, scan, "fr")
    const before = await consumer.get("/api/plans")
    expect(before.status).toBe(200)
    expect(before.headers.get("cache-control")).toBe("no-store")
    expect(vpsS(before.text)).toEqual({
      audience: "consumer",
      plan: expect.objectContaining({ priceCents: 500, priceIncludingVatCents: 600, vatCategory: "S", vatRateBasisPoints: 2000 })
    })
    const saved = await consumer.put("/api/billing-profile", {
      name: "Ada Lovelace",
      address: { line1: "1 rue de Rivoli", postcode: "75001", city: "Paris", country: "FR" }
    })
    expect(saved.status, saved.text).toBe(200)
    expect(vpsS((await consumer.get("/api/plans")).text).plan).toMatchObject({ priceIncludingVatCents: 600, vatRateBasisPoints: 2000 })
  })

  it("an EU business whose VAT number VIES confirms: 500, reverse charge, shown both ways", async () => {
    const scan = await leakScanner(server)
    const business = await signedInCustomer(server, scan, "be")
    const saved = await business.put("/api/billing-profile", {
      name: "Jan Peeters",
      companyName: "Demo SRL",
      address: { line1: "Rue de la Loi 1", postcode: "1000", city: "Bruxelles", country: "BE" },
      vatNumber: "BE 0123 456 749"
    })
    expect(saved.status, saved.text).toBe(200)
    expect(vpsS((await business.get("/api/plans")).text)).toEqual({
      audience: "business",
      plan: expect.objectContaining({ priceCents: 500, priceIncludingVatCents: 500, vatCategory: "AE", vatRateBasisPoints: 0 })
    })
  })
})
