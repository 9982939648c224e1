// GET and PUT /api/billing-profile over real HTTP on a sandbox server: the prefill of a professional account, the
// VIES evidence of a saved VAT number, one profile per customer, and bad input answered 422 with a stable code.
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { startTestServer } from "../support/testServer.ts"
import { leakScanner, signedInCustomer } from "../support/vpsHttp.ts"
import { SandboxSirets } from "../support/sandboxRegistries.ts"

let server: Awaited<ReturnType<typeof startTestServer>>

beforeAll(async () => {
  server = await startTestServer()
}, 120_000)

afterAll(async () => {
  await server?.stop()
})

const belgian = {
  name: "Jan Peeters",
  companyName: "Demo SRL",
  address: { line1: "Rue de la Loi 1", postcode: "1000", city: "Bruxelles", country: "BE" },
  vatNumber: "BE 0123 456 749"
}

describe("/api/billing-profile", () => {
  it("a professional account is offered the registry's company, head office and the SIREN's VAT number", async () => {
    const browser = new Browser(server.url)
    const email = `pro.${randomUUID()}@example.com`
    const password = "correct horse battery"
    const registered = await browser.post("/api/auth/register", {
      email, password, accountType: "professional", firstName: "Jeanne", lastName: "Martin", siret: SandboxSirets.edf
    })
    expect(registered.status, registered.text).toBe(201)
    expect((await browser.post("/api/auth/login", { email, password, rememberMe: false })).status).toBe(200)
    const prefill = await browser.get("/api/billing-profile")
    expect(prefill.status).toBe(200)
    expect(JSON.parse(prefill.text)).toEqual({
      name: "Jeanne Martin",
      companyName: "ELECTRICITE DE FRANCE",
      address: { line1: "22-30 AVENUE DE WAGRAM", postcode: "75008", city: "PARIS", country: "FR" },
      vatNumber: "FR03552081317",
      saved: false
    })
  })

  it("a saved profile reads back with its VIES evidence, and is the customer's alone", async () => {
    const scan = await leakScanner(server)
    const jan = await signedInCustomer(server, scan, "jan")
    const other = await signedInCustomer(server, scan, "other", { billingProfile: false })
    const saved = await jan.put("/api/billing-profile", belgian)
    expect(saved.status, saved.text).toBe(200)
    const body = JSON.parse(saved.text) as Record<string, unknown>
    expect(body).toMatchObject({
      name: "Jan Peeters",
      companyName: "Demo SRL",
      vatNumber: "BE0123456749",
      vatNumberCheck: { status: "valid" },
      saved: true
    })
    expect(JSON.parse((await jan.get("/api/billing-profile")).text)).toEqual(body)
    expect(JSON.parse((await other.get("/api/billing-profile")).text)).toMatchObject({ name: "Ada Lovelace", saved: false })
  })

  it("bad input is 422 with a stable code and the field", async () => {
    const scan = await leakScanner(server)
    const customer = await signedInCustomer(server, scan, "bad")
    const wrongCountry = await customer.put("/api/billing-profile", { ...belgian, address: { ...belgian.address, country: "XX" } })
    expect(wrongCountry.status).toBe(422)
    expect(JSON.parse(wrongCountry.text)).toMatchObject({ error: { code: "BILLING_PROFILE_INVALID", details: { field: "address.country" } } })
    const wrongVat = await customer.put("/api/billing-profile", { ...belgian, vatNumber: "DE123456789" })
    expect(JSON.parse(wrongVat.text)).toMatchObject({ error: { code: "VAT_NUMBER_INVALID" } })
    expect(wrongVat.status).toBe(422)
    const missing = await customer.put("/api/billing-profile", { name: "x" })
    expect(missing.status).toBeGreaterThanOrEqual(400)
    expect(missing.status).toBeLessThan(500)
  })

  it("signed out: 401", async () => {
    expect((await new Browser(server.url).get("/api/billing-profile")).status).toBe(401)
  })
})
