// The customer's security events in the panel (Chromium): the preferences page lists the account's sign-ins and
// failed attempts, newest first, in the user's language, and reads older ones page by page.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { byTestId, useChromium } from "../support/chromium.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
beforeAll(async () => {
  server = await startSelfAddressedTestServer({ sandboxTaskSpeed: "instant" })
}, 60_000)
afterAll(async () => {
  await server?.stop()
})

const chromium = useChromium(() => server.url)
const password = "correct horse battery"

describe("security events in the panel", () => {
  it("shows sign-ins and a failed attempt, newest first, and pages to the older ones", async () => {
    const email = `security.${Date.now()}@example.com`
    const api = new Browser(server.url)
    expect((await api.post("/api/auth/register", {
      email, password, accountType: "personal", firstName: "Grace", lastName: "Hopper", language: "en"
    })).status).toBe(201)
    expect((await api.post("/api/auth/login", { email, password: "not the password" })).status).toBe(401)
    // 21 sign-ins before the browser's own: more than one page of 20.
    for (let i = 0; i < 21; i++) expect((await new Browser(server.url).post("/api/auth/login", { email, password })).status).toBe(200)

    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "login-email").fill(email)
    await byTestId(page, "login-password").fill(password)
    await byTestId(page, "login-submit").click()
    await byTestId(page, "dashboard-hello").waitFor()
    await page.goto("/preferences")
    const rows = byTestId(page, "security-event")
    await expect.poll(() => rows.count()).toBe(20)
    expect(await rows.first().getAttribute("data-action")).toBe("auth.sign_in")
    expect(await rows.first().textContent()).toContain("Signed in")
    await byTestId(page, "security-more").click()
    await expect.poll(() => rows.count()).toBe(23)
    expect(await rows.last().getAttribute("data-action")).toBe("auth.sign_in_failed")
    expect(await rows.last().textContent()).toContain("Failed sign-in (wrong password)")
    expect(await rows.last().textContent()).toContain("Someone not signed in")
    expect(await byTestId(page, "security-more").isHidden()).toBe(true)
  })
})
