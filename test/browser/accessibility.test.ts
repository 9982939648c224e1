// Every page of the panel and of the back-office in Chromium, checked by axe-core (test/support/axe.ts): no serious
// or critical violation, in the light and the dark theme, signed out, as a customer with a VPS and a game server,
// and as an admin (the back-office's pages, "view as customer" included).
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seriousViolations } from "../support/axe.ts"
import { byTestId, useChromium, signInOnPage } from "../support/chromium.ts"
import { provisionedGame } from "../support/gameHttp.ts"
import { PASSWORD, person } from "../support/staff.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"
import { leakScanner, provisionedVps, ScannedBrowser } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
beforeAll(async () => {
  server = await startSelfAddressedTestServer({ sandboxTaskSpeed: "instant" })
}, 60_000)
afterAll(async () => {
  await server?.stop()
})

const chromium = useChromium(() => server.url)
const signIn = (page: Page, email: string) => signInOnPage(page, email, PASSWORD)

/** Opens each path (waiting for its heading and the end of loading), in both themes, and gathers what axe finds. */
const check = async (page: Page, paths: ReadonlyArray<string>) => {
  const found: Array<string> = []
  for (const theme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: theme })
    for (const path of paths) {
      await page.goto(path)
      await page.locator("main h1").first().waitFor()
      await page.locator("main[aria-busy=false]").waitFor()
      await page.locator("main [role=status]:has-text('…')").waitFor({ state: "detached" }).catch(() => undefined)
      for (const v of await seriousViolations(page)) found.push(`${theme} ${path}: ${v.impact} ${v.id} (${v.help})\n    ${v.nodes.join("\n    ")}`)
    }
  }
  return found
}

describe("accessibility (axe-core: no serious or critical violation)", () => {
  it("of every page a visitor sees", async () => {
    const page = await chromium.newPage()
    const found = await check(page, ["/login", "/register", "/forgot-password", "/reset-password?token=x", "/legal/notice", "/legal/terms",
      "/legal/privacy", "/no-such-page"])
    expect(found).toEqual([])
  })

  it("of every page of a customer with a VPS and a game server", async () => {
    const customer = await person(server)
    const api = new ScannedBrowser(server.url, await leakScanner(server))
    expect((await api.post("/api/auth/login", { email: customer.email, password: PASSWORD })).status).toBe(200)
    const profile = { name: "Ada Lovelace", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }
    expect((await api.put("/api/billing-profile", profile)).status).toBe(200)
    const { vpsId, order } = await provisionedVps(api, "a11y-1")
    const { gameServer } = await provisionedGame(api)
    const page = await chromium.newPage()
    await signIn(page, customer.email)
    const found = await check(page, ["/", "/order", "/order/vps-s", "/order/mc-2g", `/orders/${order.id}`, `/vps/${vpsId}`,
      `/game/${gameServer.id}`, "/invoices", "/billing", "/preferences", "/admin"])
    expect(found).toEqual([])
  }, 120_000)

  it("of every page of the back-office", async () => {
    // A customer with billing details, a VPS and its invoice: every section of their page and of "view as" is drawn.
    const customer = await person(server, { lastName: "Accessible" })
    const api = new ScannedBrowser(server.url, await leakScanner(server))
    expect((await api.post("/api/auth/login", { email: customer.email, password: PASSWORD })).status).toBe(200)
    const profile = { name: "Ada Accessible", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }
    expect((await api.put("/api/billing-profile", profile)).status).toBe(200)
    await provisionedVps(api, "a11y-admin")
    const admin = await person(server, { role: "admin" })
    const page = await chromium.newPage()
    await signIn(page, admin.email)
    const found = await check(page, ["/admin", "/admin/customers", "/admin/customers?q=accessible", `/admin/customers/${customer.id}`,
      `/admin/customers/${customer.id}/view-as`, "/admin/catalog"])
    expect(found).toEqual([])
  }, 120_000)
})
