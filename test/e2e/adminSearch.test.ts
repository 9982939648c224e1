// The back-office's search finds a customer by a reference they were given, exactly: an invoice number (in any case),
// a VPS's IP address, a game server's address; these come before the prefix matches on e-mail and names.
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InvoiceView, StaffCustomerView } from "../../adapters/http/views.ts"
import { provisionedGame } from "../support/gameHttp.ts"
import { PASSWORD, person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import { expectBody, leakScanner, provisionedVps, ScannedBrowser } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer({ sandboxTaskSpeed: "instant" })
}, 60_000)
afterAll(() => server?.stop())

const Customers = Schema.Struct({ customers: Schema.Array(StaffCustomerView) })
const Invoices = Schema.Struct({ invoices: Schema.Array(InvoiceView) })

describe("the back-office's search by reference", () => {
  it("finds the holder of an invoice number, a VPS's address and a game server's address", async () => {
    const customer = await person(server)
    const other = await person(server)
    const api = new ScannedBrowser(server.url, await leakScanner(server))
    expect((await api.post("/api/auth/login", { email: customer.email, password: PASSWORD })).status).toBe(200)
    const profile = { name: "Ada Lovelace", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }
    expect((await api.put("/api/billing-profile", profile)).status).toBe(200)
    const { vps } = await provisionedVps(api, "found-1")
    const { gameServer } = await provisionedGame(api)
    const invoice = expectBody(await api.get("/api/invoices"), 200, Invoices).invoices[0]!
    const support = await person(server, { role: "support" })
    const search = async (q: string) =>
      expectBody(await support.browser.get(`/api/admin/customers?q=${encodeURIComponent(q)}`), 200, Customers).customers.map((c) => c.id)
    expect(await search(invoice.number)).toEqual([customer.id])
    expect(await search(invoice.number.toLowerCase())).toEqual([customer.id])
    expect(await search(vps.address)).toEqual([customer.id])
    expect(await search(gameServer.address)).toEqual([customer.id])
    // A near miss names nobody: references match exactly.
    expect(await search(`${invoice.number}9`)).toEqual([])
    expect((await search(customer.email)).includes(other.id)).toBe(false)
  }, 60_000)
})
