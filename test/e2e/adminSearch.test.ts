// The back-office's search finds a customer by a reference they were given, exactly: an invoice number (in any case),
// a VPS's IP address, a game server's address; these come before the prefix matches on e-mail and names.
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InvoiceView, StaffCustomerPage, StaffCustomerView } from "../../adapters/http/views.ts"
import { provisionedGame } from "../support/gameHttp.ts"
import { PASSWORD, person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import { errorCode, expectBody, leakScanner, provisionedVps, ScannedBrowser } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer({ sandboxTaskSpeed: "instant" })
}, 60_000)
afterAll(() => server?.stop())

const Customers = Schema.Struct({ customers: Schema.Array(StaffCustomerView) })
const Invoices = Schema.Struct({ invoices: Schema.Array(InvoiceView), next: Schema.optionalKey(Schema.String) })

describe("the back-office's search by reference, and the customer's billing on their page", () => {
  it("finds the holder of an invoice number, a VPS's and a game server's address; shows their billing details and invoices", async () => {
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

    // Their page shows the billing details and the invoices; older ones come a page at a time (keyset).
    const page = expectBody(await support.browser.get(`/api/admin/customers/${customer.id}`), 200, StaffCustomerPage)
    expect(page.billingProfile?.name).toBe("Ada Lovelace")
    expect(page.invoices.invoices.map((i) => i.number)).toContain(invoice.number)
    expect(page.invoices.next).toBeUndefined()
    const first = expectBody(await support.browser.get(`/api/admin/customers/${customer.id}/invoices?limit=1`), 200, Invoices)
    expect(first.invoices.length).toBe(1)
    const rest = expectBody(
      await support.browser.get(`/api/admin/customers/${customer.id}/invoices?limit=1&after=${encodeURIComponent(first.next!)}`), 200, Invoices)
    expect([...first.invoices, ...rest.invoices].map((i) => i.id)).toEqual(page.invoices.invoices.map((i) => i.id))
    expect(rest.next).toBeUndefined()
    expect(errorCode(await support.browser.get(`/api/admin/customers/${other.id}/invoices?limit=0`), 400)).toBe("INVALID_REQUEST")
    expect(expectBody(await support.browser.get(`/api/admin/customers/${other.id}`), 200, StaffCustomerPage).billingProfile).toBeNull()
    expect(errorCode(await support.browser.get("/api/admin/customers/00000000-0000-4000-8000-000000000000/invoices"), 404)).toBe("CUSTOMER_NOT_FOUND")
  }, 60_000)
})
