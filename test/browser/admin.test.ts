// The back-office in Chromium: staff find the "Administration" link, search a customer and open their page (profile,
// sessions, subscriptions, audit trail); a customer has no such link and gets the panel's "not found" at every
// back-office address.
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { byTestId, useChromium, signInOnPage } from "../support/chromium.ts"
import { PASSWORD, person } from "../support/staff.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"
import { leakScanner, provisionedVps, signedInCustomer } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
beforeAll(async () => {
  server = await startSelfAddressedTestServer({ sandboxTaskSpeed: "instant" })
}, 60_000)
afterAll(async () => {
  await server?.stop()
})

const chromium = useChromium(() => server.url)
const signIn = (page: Page, email: string) => signInOnPage(page, email, PASSWORD)

describe("the back-office in the browser", () => {
  it("is hidden from a customer: no link, and the panel's not-found page at its addresses", async () => {
    const customer = await person(server)
    const page = await chromium.newPage()
    await signIn(page, customer.email)
    expect(await byTestId(page, "nav-admin").count()).toBe(0)
    for (const path of ["/admin", "/admin/customers", `/admin/customers/${customer.id}`]) {
      await page.goto(path)
      await byTestId(page, "not-found").waitFor()
      expect(await byTestId(page, "admin-nav").count()).toBe(0)
    }
  })

  it("lets support search a customer by name and open their page", async () => {
    const lastName = `Searchable${Date.now()}`
    const customer = await person(server, { lastName })
    const support = await person(server, { role: "support" })
    const page = await chromium.newPage()
    await signIn(page, support.email)
    await byTestId(page, "nav-admin").click()
    await byTestId(page, "admin-nav").waitFor()
    // The dashboard is the back-office's first page.
    await byTestId(page, "admin-dash-mrr").waitFor()
    expect(await byTestId(page, "admin-nav-dashboard").getAttribute("aria-current")).toBe("page")
    await byTestId(page, "admin-nav-customers").click()
    await byTestId(page, "admin-search-input").fill(lastName.toLowerCase())
    await byTestId(page, "admin-search-submit").click()
    const rows = byTestId(page, "admin-customer")
    await expect.poll(() => rows.count()).toBe(1)
    expect(await rows.first().textContent()).toContain(customer.email)
    expect(new URL(page.url()).search).toBe(`?q=${lastName.toLowerCase()}`)
    await byTestId(rows.first(), "admin-customer-link").click()
    await byTestId(page, "admin-customer-name").waitFor()
    expect(await byTestId(page, "admin-customer-name").textContent()).toContain(`Ada ${lastName}`)
    expect(await byTestId(page, "admin-customer-facts").textContent()).toContain(customer.email)
    // The customer's language in words, not its code.
    expect(await byTestId(page, "admin-customer-facts").textContent()).toMatch(/(Language|Langue)(Français|English)(Customer since|Client depuis)/)
    await byTestId(page, "admin-customer-no-billing").waitFor()
    // The customer's own sign-in is in their trail, and their open session is listed.
    await expect.poll(() => byTestId(page, "admin-session").count()).toBe(1)
    const actions = await byTestId(page, "admin-audit-event").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-action")))
    expect(actions).toContain("auth.sign_in")
    // Support reads; only an admin may end the customer's sessions.
    expect(await byTestId(page, "admin-end-sessions").count()).toBe(0)
  })

  it("lets an admin end all of a customer's sessions from their page", async () => {
    const customer = await person(server)
    const admin = await person(server, { role: "admin" })
    const page = await chromium.newPage()
    await signIn(page, admin.email)
    await page.goto(`/admin/customers/${customer.id}`)
    await byTestId(page, "admin-end-sessions").click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => byTestId(page, "admin-session").count()).toBe(0)
    expect((await customer.browser.get("/api/auth/me")).status).toBe(401)
  })

  it("takes a plan off sale from the catalog page: the customer's order page no longer offers it", async () => {
    const admin = await person(server, { role: "admin" })
    const customer = await person(server)
    const shopper = await chromium.newPage()
    await signIn(shopper, customer.email)
    await shopper.goto("/order")
    await byTestId(shopper, "plan-vps-m").waitFor()

    const page = await chromium.newPage()
    await signIn(page, admin.email)
    await page.goto("/admin")
    await byTestId(page, "admin-nav-catalog").click()
    await byTestId(page, "admin-plan-toggle-vps-m").click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => byTestId(page, "admin-plan-sale-vps-m").getAttribute("data-on-sale")).toBe("false")
    expect(await byTestId(page, "admin-pools").count()).toBe(1)

    await shopper.reload()
    await byTestId(shopper, "plan-vps-s").waitFor()
    expect(await byTestId(shopper, "plan-vps-m").count()).toBe(0)
    // Back on sale: offered again.
    await byTestId(page, "admin-plan-toggle-vps-m").click()
    await expect.poll(() => byTestId(page, "admin-plan-sale-vps-m").getAttribute("data-on-sale")).toBe("true")
    await shopper.reload()
    await byTestId(shopper, "plan-vps-m").waitFor()
  })

  it("shows support the catalog without the means to change it", async () => {
    const support = await person(server, { role: "support" })
    const page = await chromium.newPage()
    await signIn(page, support.email)
    await page.goto("/admin/catalog")
    await byTestId(page, "admin-plan-sale-vps-s").waitFor()
    expect(await byTestId(page, "admin-plan-toggle-vps-s").count()).toBe(0)
  })

  it("views the panel as a customer sees it, under a banner, with nothing to act with; a POST from it is refused", async () => {
    const customer = await signedInCustomer(server, await leakScanner(server))
    const profile = { name: "Ada Lovelace", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }
    expect((await customer.put("/api/billing-profile", profile)).status).toBe(200)
    const { vps, subscriptionId } = await provisionedVps(customer, "viewed-1")
    const customerId = (JSON.parse((await customer.get("/api/auth/me")).text) as { user: { id: string } }).user.id
    const support = await person(server, { role: "support" })
    const page = await chromium.newPage()
    await signIn(page, support.email)
    await page.goto(`/admin/customers/${customerId}`)
    await byTestId(page, "admin-view-as").click()
    await byTestId(page, "view-as-banner").waitFor()
    await byTestId(page, `view-as-vps-${vps.id}`).waitFor()
    expect(await byTestId(page, `view-as-subscription-${subscriptionId}`).count()).toBe(1)
    expect(await byTestId(page, "view-as-invoices-table").count()).toBe(1)
    // Nothing to act with in the view: no button, form, input or link into the customer's panel.
    const panel = byTestId(page, "view-as-panel")
    expect(await panel.locator("button, form, input, select, textarea, a").count()).toBe(0)
    // What the page could send goes out with the operator's session: the customer's subscription is not theirs.
    const status = await page.evaluate(async (id) =>
      (await fetch(`/api/subscriptions/${id}/cancel`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status, subscriptionId)
    expect(status).toBe(404)
    const after = (JSON.parse((await customer.get("/api/subscriptions")).text) as { subscriptions: Array<{ cancelAtPeriodEnd: boolean }> }).subscriptions[0]!
    expect(after.cancelAtPeriodEnd).toBe(false)
  })
})

