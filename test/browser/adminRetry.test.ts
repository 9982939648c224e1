// An admin retries a failed order in Chromium: the game server's install fails on the sandbox panel (the customer is
// refunded), the cause is fixed, the admin retries the order from the failed orders' page (with a confirmation), the
// customer's e-mail (a real SMTP server) brings the link to the new order's page, where the customer pays on the
// sandbox Stripe's hosted page; the service becomes ready, and the admin sees the new order completed on the customer's
// page, each order linked to the other. The pages pass axe-core without a serious or critical violation.
import { Option, Redacted, Schema } from "effect"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { SandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { seriousViolations } from "../support/axe.ts"
import { byTestId, signInOnPage, useChromium } from "../support/chromium.ts"
import { orderGame, sandboxesLeakScanner, sandboxPanelOf } from "../support/gameHttp.ts"
import { decodeQuotedPrintable, headerOf, type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { PASSWORD, person } from "../support/staff.ts"
import { sandboxStripe, startSelfAddressedTestServer } from "../support/testServer.ts"
import { expectBody, type LeakScanner, signedInCustomer, waitFor } from "../support/vpsHttp.ts"

let smtp: SmtpSink
let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
let panel: SandboxPterodactyl
let scan: LeakScanner
let checkoutOrigin = ""
beforeAll(async () => {
  smtp = await startSmtpSink()
  server = await startSelfAddressedTestServer({
    sandboxTaskSpeed: "instant",
    smtpUrl: Option.some(Redacted.make(`smtp://127.0.0.1:${smtp.port}`))
  })
  panel = await sandboxPanelOf(server)
  scan = await sandboxesLeakScanner(server)
  checkoutOrigin = (await server.runtime.runPromise(sandboxStripe)).baseUrl
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await smtp?.close()
})

const chromium = useChromium(() => server.url, { otherOrigins: () => [checkoutOrigin] })
const signIn = (page: Page, email: string) => signInOnPage(page, email, PASSWORD)

const Me = Schema.Struct({ user: Schema.Struct({ id: Schema.String, email: Schema.String }) })

describe("an admin's retry of a failed order in the browser", () => {
  it("retries it; the customer pays the new order from the e-mail's link; the service is ready and the admin sees it completed", async () => {
    // A game server order whose install fails: refunded at once.
    const api = await signedInCustomer(server, scan, "browser-retry")
    const { email, id } = expectBody(await api.get("/api/auth/me"), 200, Me).user
    panel.control.setInstallOutcome("default", "fail")
    const failed = await orderGame(api).finally(() => panel.control.setInstallOutcome("default", "succeed"))
    expect(failed.order.status).toBe("failed")
    const failedId = failed.order.id

    // The admin retries it from the failed orders' page, after confirming.
    const admin = await person(server, { role: "admin" })
    const page = await chromium.newPage()
    await signIn(page, admin.email)
    await page.goto("/admin")
    await byTestId(page, "admin-nav-orders").click()
    const row = page.locator(`[data-testid=ops-failed-order][data-order="${failedId}"]`)
    await byTestId(row, "ops-retry").waitFor()
    // (The admin, registered without a language, reads the back-office in French.)
    expect(await byTestId(row, "ops-retry").textContent()).toBe("Relancer (le client paie à nouveau)")
    expect(await seriousViolations(page)).toEqual([])
    await byTestId(row, "ops-retry").click()
    expect(await byTestId(page, "confirm-dialog").textContent()).toContain("rien n'est prélevé sans lui")
    await byTestId(page, "confirm-ok").click()
    const retriedAs = byTestId(page.locator(`[data-testid=ops-failed-order][data-order="${failedId}"]`), "ops-retried-as")
    await retriedAs.waitFor()
    const retryId = await retriedAs.getAttribute("data-order")
    expect(retryId).toMatch(/^[0-9a-f-]{36}$/)
    expect(await retriedAs.textContent()).toBe(`Relancée en tant que commande ${retryId}`)
    expect(await byTestId(page, "ops-retry").count()).toBe(0)
    // The failed order's service page says so too.
    await page.goto(`/admin/services/${failed.order.subscriptionId}`)
    expect(await byTestId(page, "ops-retried-as").getAttribute("data-order")).toBe(retryId)
    expect(await byTestId(page, "ops-retry").count()).toBe(0)

    // The customer's e-mail (French: registered without a language) brings the new order's page.
    const mail = await waitFor("the retry's e-mail by SMTP", async () =>
      smtp.received.find((raw) => headerOf(raw, "to")?.includes(email) === true && (headerOf(raw, "subject") ?? "").includes("peut maintenant")))
    const body = Buffer.from(decodeQuotedPrintable(mail), "latin1").toString("utf8")
    const link = body.match(new RegExp(`${server.url.replace(/[.:/]/g, "\\$&")}/orders/${retryId}`))?.[0]
    expect(link, body).toBeDefined()

    // The customer opens it, pays on the hosted page, comes back to the order, and the service becomes ready.
    const customer = await chromium.newPage()
    await signIn(customer, email)
    await customer.goto(link!)
    // The page says which order it completes, and that nothing is charged until it is paid here.
    expect(await byTestId(customer, "order-retry-of").textContent()).toContain(failedId)
    expect(await seriousViolations(customer)).toEqual([])
    await byTestId(customer, "order-pay-now").click()
    await customer.waitForURL(/\/c\/pay\/cs_test_/)
    await customer.locator("#card").fill("4242424242424242")
    await customer.locator("#exp").fill("12/34")
    await customer.locator("#cvc").fill("123")
    await customer.locator("button[type=submit]").click()
    await customer.waitForURL(new RegExp(`/orders/${retryId}$`))
    await expect.poll(() => byTestId(customer, "order-status").getAttribute("data-status"), { timeout: 30_000 }).toBe("completed")
    await byTestId(customer, "order-open-service").click()
    await customer.waitForURL(/\/game\//)

    // The admin sees the new order completed on the customer's page, a retry of the failed one.
    await page.goto(`/admin/customers/${id}`)
    const retried = page.locator(`[data-testid=admin-order][data-order="${retryId}"]`)
    await expect.poll(() => retried.getAttribute("data-status")).toBe("completed")
    expect(await byTestId(retried, "ops-retry-of").textContent()).toBe(`Relance de la commande ${failedId}`)
    const original = page.locator(`[data-testid=admin-order][data-order="${failedId}"]`)
    expect(await original.getAttribute("data-status")).toBe("failed")
    expect(await byTestId(original, "ops-retried-as").getAttribute("data-order")).toBe(retryId)
    expect(await seriousViolations(page)).toEqual([])
  }, 120_000)
})
