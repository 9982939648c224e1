// The billing page in Chromium: the saved card (none in the sandbox gateway), each subscription's renewal in words,
// "pay now" on a lapsed subscription whose card is declined (the page to pay on) and then goes through (paid, the
// service back), and the payment history.
import type { Page } from "playwright-core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { byTestId, useChromium } from "../support/chromium.ts"
import { sweepRenewals } from "../../domain/billing/autoRenewal.ts"
import { sandboxStripe, startSelfAddressedTestServer } from "../support/testServer.ts"
import { DECLINED_OFF_SESSION_CARD, fillBillingProfile, saveCard } from "../support/checkout.ts"
import { lapse, leakScanner, provisionedVps, ScannedBrowser, waitForVpsStatus } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
const customer = { email: `billing.${Date.now()}@example.com`, password: "a billing test password" }
let api: ScannedBrowser
let vps: Awaited<ReturnType<typeof provisionedVps>>

beforeAll(async () => {
  server = await startSelfAddressedTestServer({ sandboxTaskSpeed: "instant" })
  checkoutOrigin = (await server.runtime.runPromise(sandboxStripe)).baseUrl
  api = new ScannedBrowser(server.url, await leakScanner(server))
  expect((await api.post("/api/auth/register", { ...customer, accountType: "personal", firstName: "Grace", lastName: "Hopper", language: "en" })).status).toBe(201)
  expect((await api.post("/api/auth/login", { ...customer, rememberMe: false })).status).toBe(200)
  await fillBillingProfile(api)
  vps = await provisionedVps(api, "billing-vps")
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

let checkoutOrigin = ""
const chromium = useChromium(() => server.url, { otherOrigins: () => [checkoutOrigin] })

const billingPage = async (): Promise<Page> => {
  const page = await chromium.newPage()
  await page.goto("/login")
  await byTestId(page, "login-email").fill(customer.email)
  await byTestId(page, "login-password").fill(customer.password)
  await byTestId(page, "login-submit").click()
  await byTestId(page, "dashboard-hello").waitFor()
  await byTestId(page, "nav-billing").click()
  await byTestId(page, `billing-renewal-${vps.subscriptionId}`).waitFor()
  return page
}

const words = (page: Page) => byTestId(page, `billing-words-${vps.subscriptionId}`).textContent()

describe("the billing page", () => {
  it("says when each subscription renews and for how much, the card, and the payments so far", async () => {
    const page = await billingPage()
    expect(await words(page)).toMatch(/^Renews on \d{1,2} \w+ \d{4} for €6\.00$/)
    expect(await byTestId(page, `billing-pay-${vps.subscriptionId}`).count()).toBe(0)
    // The first payment, on the checkout page, saved the card.
    expect(await byTestId(page, "billing-card-words").textContent()).toContain("ending in 4242")
    expect(await byTestId(page, "billing-history").locator("tbody tr").count()).toBe(1)
  })

  it("a lapsed subscription whose card is declined says so with its next try; pay now goes through once the card does", async () => {
    // The card now saved is declined at every charge.
    await saveCard(api, DECLINED_OFF_SESSION_CARD)
    await lapse(server, vps.subscriptionId, new Date(Date.now() - 60_000))
    await server.runtime.runPromise(sweepRenewals)
    await waitForVpsStatus(api, vps.vpsId, "suspended")
    const page = await billingPage()
    expect(await words(page)).toMatch(/^Payment failed — next try on /)
    // Declined again: Stripe's hosted page to pay on, where another card goes through and brings the customer back.
    await byTestId(page, `billing-pay-${vps.subscriptionId}`).click()
    await page.waitForURL(/\/c\/pay\/cs_test_/)
    await page.locator("#card").fill("4242424242424242")
    await page.locator("#exp").fill("12/34")
    await page.locator("#cvc").fill("123")
    await page.locator("button[type=submit]").click()
    await page.waitForURL(/\/billing/)
    // The payment reaches us by its webhook: give it the time a loaded machine needs (expect.poll waits 1 s by default).
    // The page may have loaded before the webhook arrived: read it again until it says so.
    await expect.poll(async () => {
      await page.reload()
      return words(page)
    }, { timeout: 15_000 }).toMatch(/^Renews on /)
    await waitForVpsStatus(api, vps.vpsId, "running")
    expect(await byTestId(page, "billing-history").locator("tbody tr").count()).toBe(2)
  })

  it("fits a 360×740 screen, in French too", async () => {
    const page = await billingPage()
    await page.setViewportSize({ width: 360, height: 740 })
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    await page.waitForLoadState("networkidle")
    expect(await overflow(), "/billing is wider than the screen").toBeLessThanOrEqual(0)
    await page.context().addCookies([{ name: "zh_lang", value: "fr", url: server.url }])
    await page.reload()
    await byTestId(page, `billing-renewal-${vps.subscriptionId}`).waitFor()
    expect(await words(page)).toMatch(/^Se renouvelle le \d{1,2} \S+ \d{4} pour 6,00\s€$/)
    expect(await overflow(), "/billing in French is wider than the screen").toBeLessThanOrEqual(0)
  })
})
