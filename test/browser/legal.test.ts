// The legal pages in Chromium: the footer links (mentions légales, terms of sale, privacy and cookies) on the login
// page, the dashboard and the order form, and the order form's own link to the terms, each opening its page; the
// operator's text shown as text (its "<script>" stays words), the mediator, and the cookie list on the privacy page.
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { COOKIE_POLICY } from "../../adapters/http/cookies.ts"
import { resolveLegalTexts } from "../../app/legalSettings.ts"
import { demoSeller } from "../../domain/billing/invoicing/Seller.ts"
import { byTestId, useChromium } from "../support/chromium.ts"
import { legalDir } from "../support/invoicing.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"
import { Browser } from "../support/browser.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
const customer = { email: `legal.${Date.now()}@example.com`, password: "a legal pages test password" }

beforeAll(async () => {
  server = await startSelfAddressedTestServer({ legal: await Effect.runPromise(resolveLegalTexts(legalDir, false, demoSeller)) })
  const registered = await new Browser(server.url).post("/api/auth/register", {
    ...customer, accountType: "personal", firstName: "Ada", lastName: "Lovelace", language: "en"
  })
  expect(registered.status, registered.text).toBe(201)
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

const chromium = useChromium(() => server.url)

/** Every footer link is there; `page` opens and shows its own article. */
const footerOpens = async (page: Page, legal: "notice" | "terms" | "privacy") => {
  for (const id of ["notice", "terms", "privacy"]) await byTestId(page, `footer-legal-${id}`).waitFor()
  await byTestId(page, `footer-legal-${legal}`).click()
  await byTestId(page, `legal-${legal}`).waitFor()
  expect(new URL(page.url()).pathname).toBe(`/legal/${legal}`)
}

describe("the legal pages", () => {
  it("are linked from the login page's, the dashboard's and the order form's footer, and from the order form itself", async () => {
    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "login-email").waitFor()
    await footerOpens(page, "terms")
    const terms = byTestId(page, "legal-terms")
    expect(await terms.locator("h1").textContent()).toBe("Terms of sale")
    // The operator's text is text: its markup is shown, never run or parsed.
    expect(await byTestId(page, "legal-body").textContent()).toContain("<script>alert(1)</script>")
    expect(await byTestId(page, "legal-body").locator("script").count()).toBe(0)
    expect(await byTestId(page, "legal-body").locator("a").getAttribute("href")).toBe("https://mediateur.example")
    expect(await byTestId(page, "legal-mediator").textContent()).toContain(demoSeller.mediator.name)
    expect(await byTestId(page, "legal-placeholder").count()).toBe(0)

    await page.goto("/login")
    await byTestId(page, "login-email").fill(customer.email)
    await byTestId(page, "login-password").fill(customer.password)
    await byTestId(page, "login-submit").click()
    await byTestId(page, "dashboard-hello").waitFor()
    await footerOpens(page, "privacy")
    await expect.poll(() => byTestId(page, "legal-cookie").count()).toBe(COOKIE_POLICY.length)
    for (const cookie of COOKIE_POLICY) expect(await byTestId(page, "legal-cookies").textContent()).toContain(cookie.name)

    await page.goto("/order/vps-s")
    await byTestId(page, "order-form").waitFor()
    await byTestId(page, "order-terms").click()
    await byTestId(page, "legal-terms").waitFor()
    await page.goto("/order/vps-s")
    await byTestId(page, "order-form").waitFor()
    await footerOpens(page, "notice")
    expect(await byTestId(page, "legal-notice").locator("h1").textContent()).toBe("Legal notice")
  }, 90_000)

  it("in French for a French browser, and an unknown page says it is not found", async () => {
    const page = await chromium.newPage({ locale: "fr-FR" })
    await page.goto("/legal/terms")
    await byTestId(page, "legal-terms").waitFor()
    expect(await byTestId(page, "legal-terms").locator("h1").textContent()).toBe("Conditions générales de vente")
    expect(await byTestId(page, "footer-legal-notice").textContent()).toBe("Mentions légales")
    expect(await byTestId(page, "legal-body").textContent()).toContain("Les présentes conditions")
    await page.goto("/legal/nothing-here")
    await byTestId(page, "legal-error").waitFor()
  }, 60_000)
})
