// Prices in Chromium: the plan list's for a visitor (including VAT, said so), and the order page's for a customer whose
// billing details change them: a French consumer's price including VAT until they give a Belgian business's VIES-valid
// VAT number, then the price excluding VAT under reverse charge, shown before it is paid; what the Pay button says is
// what the sandbox Stripe takes, to the cent.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { byTestId, useChromium } from "../support/chromium.ts"
import { sandboxStripe, startSelfAddressedTestServer, stripePayments } from "../support/testServer.ts"
import { ed25519PublicKey, leakScanner, ScannedBrowser } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
let checkoutOrigin = ""
const customer = { email: `prices.${Date.now()}@example.com`, password: "a prices test password" }

beforeAll(async () => {
  server = await startSelfAddressedTestServer({ sandboxTaskSpeed: "instant" })
  checkoutOrigin = (await server.runtime.runPromise(sandboxStripe)).baseUrl
  const api = new ScannedBrowser(server.url, await leakScanner(server))
  expect((await api.post("/api/auth/register", { ...customer, accountType: "personal", firstName: "Jan", lastName: "Peeters", language: "en" })).status)
    .toBe(201)
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

const chromium = useChromium(() => server.url, { otherOrigins: () => [checkoutOrigin] })

/** The amount a "Pay €5.00 and order" button names, in cents. */
const cents = (label: string | null) => Math.round(Number(/€(\d+\.\d\d)/.exec(label ?? "")?.[1]) * 100)

describe("the order page's price", () => {
  it("is shown to a visitor on the plan list, including VAT and said so; choosing a plan asks to sign in, then goes on", async () => {
    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "nav-order").click()
    await page.waitForURL((url) => url.pathname === "/order")
    await byTestId(page, "plans-vps").waitFor()
    expect(await byTestId(page, "plan-price-vps-s").textContent()).toBe("€6.00 incl. VAT / month")
    await byTestId(page, "plan-choose-vps-s").click()
    await page.waitForURL((url) => url.pathname === "/login" && url.searchParams.get("next") === "/order/vps-s")
    await byTestId(page, "login-email").fill(customer.email)
    await byTestId(page, "login-password").fill(customer.password)
    await byTestId(page, "login-submit").click()
    await byTestId(page, "order-form").waitFor()
    expect(new URL(page.url()).pathname).toBe("/order/vps-s")
  })

  it("changes with billing details that change the VAT, is shown before it is paid, and is what Stripe takes", async () => {
    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "login-email").fill(customer.email)
    await byTestId(page, "login-password").fill(customer.password)
    await byTestId(page, "login-submit").click()
    await byTestId(page, "dashboard-hello").waitFor()
    await page.goto("/order/vps-s")
    await byTestId(page, "order-form").waitFor()
    // No billing details yet: priced as a French consumer.
    expect(await byTestId(page, "order-price").textContent()).toBe("€6.00 incl. VAT / month")
    expect(await byTestId(page, "order-pay").textContent()).toBe("Pay €6.00 and order")
    await byTestId(page, "order-template").selectOption("debian-12")
    await byTestId(page, "order-hostname").fill("prices")
    await byTestId(page, "order-ssh-key").fill(ed25519PublicKey("jan@browser"))
    await byTestId(page, "order-express-start").check()
    await byTestId(page, "order-pay").click()
    await byTestId(page, "order-billing").waitFor()
    await byTestId(page, "billing-companyName").fill("Demo SRL")
    await byTestId(page, "billing-line1").fill("Rue de la Loi 1")
    await byTestId(page, "billing-postcode").fill("1000")
    await byTestId(page, "billing-city").fill("Bruxelles")
    await byTestId(page, "billing-country").fill("BE")
    await byTestId(page, "billing-vatNumber").fill("BE 0123 456 749")
    const paidBefore = (await server.runtime.runPromise(stripePayments)).length
    await byTestId(page, "billing-save").click()
    // Reverse charge now: the new price is shown, and nothing is paid until the customer presses the button again.
    await expect.poll(() => byTestId(page, "order-pay").textContent()).toBe("Pay €5.00 and order")
    expect(await byTestId(page, "order-price").textContent()).toBe("€5.00 excl. VAT · reverse charge / month")
    expect(new URL(page.url()).pathname).toBe("/order/vps-s")
    const button = await byTestId(page, "order-pay").textContent()
    await byTestId(page, "order-pay").click()
    await page.waitForURL(/\/c\/pay\/cs_test_/)
    await page.locator("#card").fill("4242424242424242")
    await page.locator("#exp").fill("12/34")
    await page.locator("#cvc").fill("123")
    await page.locator("button[type=submit]").click()
    await page.waitForURL(/\/orders\/[^/]+$/)
    await expect.poll(async () => (await server.runtime.runPromise(stripePayments)).slice(paidBefore).map((p) => p.amount))
      .toEqual([cents(button)])
    expect(cents(button)).toBe(500)
    // The plan list says the same to this business: excluding VAT, reverse charge.
    await page.goto("/order")
    await byTestId(page, "plans-vps").waitFor()
    expect(await byTestId(page, "plan-price-vps-s").textContent()).toBe("€5.00 excl. VAT · reverse charge / month")
    // And so does the dashboard's subscription, at the price its renewals will take.
    await page.goto("/")
    const subscription = page.locator("tr[data-subscription]")
    await subscription.waitFor()
    expect(await subscription.textContent()).toContain("VPS S€5.00 excl. VAT · reverse charge / month")
  })
})
