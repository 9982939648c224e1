// The back-office's operations in Chromium: support suspends a customer's VPS with a statement of reasons from the
// service's page — the customer receives it by e-mail (a real SMTP server) and their panel shows the VPS suspended —
// and lifts it; an admin refunds part of a charge from the customer's payments page — the credit note is in the
// customer's documents; an admin ends a held service for good. These pages pass axe-core without a serious or critical
// violation.
import { Option, Redacted, Schema } from "effect"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seriousViolations } from "../support/axe.ts"
import { byTestId, useChromium, signInOnPage } from "../support/chromium.ts"
import { sandboxesLeakScanner } from "../support/gameHttp.ts"
import { decodeQuotedPrintable, headerOf, type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { PASSWORD, person } from "../support/staff.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"
import { expectBody, type LeakScanner, provisionedVps, signedInCustomer, waitFor } from "../support/vpsHttp.ts"

let smtp: SmtpSink
let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
let scan: LeakScanner
beforeAll(async () => {
  smtp = await startSmtpSink()
  server = await startSelfAddressedTestServer({
    sandboxTaskSpeed: "instant",
    smtpUrl: Option.some(Redacted.make(`smtp://127.0.0.1:${smtp.port}`))
  })
  scan = await sandboxesLeakScanner(server)
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await smtp?.close()
})

const chromium = useChromium(() => server.url)
const signIn = (page: Page, email: string) => signInOnPage(page, email, PASSWORD)

const Me = Schema.Struct({ user: Schema.Struct({ id: Schema.String, email: Schema.String }) })

/** A customer with a running VPS, and a Chromium page signed in as them. */
const customerWithVps = async (hostname: string) => {
  const api = await signedInCustomer(server, scan)
  const { email, id } = expectBody(await api.get("/api/auth/me"), 200, Me).user
  const vps = await provisionedVps(api, hostname)
  const page = await chromium.newPage()
  await signIn(page, email)
  return { api, email, id, page, ...vps }
}

const vpsState = (page: Page) => byTestId(page, "vps-state").locator("[data-state]").getAttribute("data-state")

describe("the back-office's operations in the browser", () => {
  it("suspends a VPS with a statement of reasons: the customer's e-mail and panel say so; lifting it brings it back", async () => {
    const ada = await customerWithVps("browser-held")
    const support = await person(server, { role: "support" })
    const page = await chromium.newPage()
    await signIn(page, support.email)
    await page.goto(`/admin/customers/${ada.id}`)
    await byTestId(page, "admin-subscription-open").first().click()
    await expect.poll(() => byTestId(page, "ops-upstream").getAttribute("data-state")).toBe("running")
    expect(await byTestId(page, "ops-upstream").getAttribute("data-ownership")).toBe("ours")
    expect(await byTestId(page, "ops-step").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-state")))).toEqual(
      expect.arrayContaining(["done"])
    )
    expect(await seriousViolations(page)).toEqual([])
    const facts = "Phishing pages imitating a bank, reported by the bank on 1 March."
    await byTestId(page, "ops-suspend-facts").fill(facts)
    await byTestId(page, "ops-suspend-ground").selectOption("illegal_content")
    await byTestId(page, "ops-suspend-form").locator("button[type=submit]").click()
    await byTestId(page, "ops-held").waitFor()
    expect(await byTestId(page, "ops-held").textContent()).toContain(facts)

    // The customer's e-mail: the statement of reasons, by SMTP.
    const mail = await waitFor("the statement of reasons by SMTP", async () =>
      smtp.received.find((raw) => headerOf(raw, "to")?.includes(ada.email) === true && (headerOf(raw, "subject") ?? "").includes("suspendu par nos équipes")))
    // Quoted-printable UTF-8: the bytes back, then the text.
    const body = Buffer.from(decodeQuotedPrintable(mail), "latin1").toString("utf8")
    expect(body).toContain(facts)
    expect(body).toContain("règlement extrajudiciaire des litiges")
    // The customer's panel: the VPS is suspended.
    await ada.page.goto(`/vps/${ada.vpsId}`)
    await expect.poll(() => vpsState(ada.page)).toBe("suspended")

    await byTestId(page, "ops-unsuspend-reason").fill("The bank confirms the pages are gone.")
    await byTestId(page, "ops-unsuspend-form").locator("button[type=submit]").click()
    await byTestId(page, "ops-suspend-form").waitFor()
    await ada.page.reload()
    await expect.poll(() => vpsState(ada.page)).toBe("running")
  }, 90_000)

  it("refunds part of a charge from the customer's payments page: the credit note is in the customer's documents", async () => {
    const ada = await customerWithVps("browser-refund")
    const admin = await person(server, { role: "admin" })
    const page = await chromium.newPage()
    await signIn(page, admin.email)
    await page.goto(`/admin/customers/${ada.id}`)
    await byTestId(page, "admin-customer-payments").click()
    const form = byTestId(page, "ops-refund-form").first()
    await form.waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await byTestId(form, "ops-refund-amount").fill("1,50")
    await byTestId(form, "ops-refund-reason").selectOption("goodwill")
    await form.locator("button[type=submit]").click()
    await byTestId(page, "confirm-ok").click()
    // The page reads the payments again after the refund: give it the time a loaded machine needs (1 s by default).
    await expect.poll(() => page.locator("[data-testid=ops-payment][data-kind=refund]").count(), { timeout: 15_000 }).toBe(1)

    const documents = expectBody(await ada.api.get("/api/invoices"), 200, Schema.Struct({
      invoices: Schema.Array(Schema.Struct({ kind: Schema.String, number: Schema.String, totalIncludingVatCents: Schema.Int }))
    })).invoices
    const creditNote = documents.find((d) => d.kind === "credit_note")
    expect(creditNote?.totalIncludingVatCents).toBe(150)
    await ada.page.goto("/invoices")
    await byTestId(ada.page, `invoice-${creditNote!.number}`).waitFor()
  }, 90_000)

  it("lets an admin end a held service for good: the customer's panel shows it destroyed", async () => {
    const ada = await customerWithVps("browser-ended")
    const admin = await person(server, { role: "admin" })
    const page = await chromium.newPage()
    await signIn(page, admin.email)
    await page.goto(`/admin/services/${ada.subscriptionId}`)
    await byTestId(page, "ops-suspend-facts").fill("Attacks on third parties from this VPS, reported twice.")
    await byTestId(page, "ops-suspend-ground").selectOption("abuse")
    await byTestId(page, "ops-suspend-form").locator("button[type=submit]").click()
    await byTestId(page, "ops-unsuspend-reason").fill("Repeated abuse after a warning.")
    await byTestId(page, "ops-terminate").click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => page.locator("[data-testid=ops-ours-facts]").textContent()).toContain("Résilié")
    await ada.page.goto(`/vps/${ada.vpsId}`)
    await expect.poll(() => vpsState(ada.page)).toBe("destroyed")
  }, 90_000)

  it("lists failed orders and opens the services page for support", async () => {
    const support = await person(server, { role: "support" })
    const page = await chromium.newPage()
    await signIn(page, support.email)
    await page.goto("/admin")
    await byTestId(page, "admin-nav-orders").click()
    await page.locator("h1").waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await byTestId(page, "admin-nav-services").click()
    await byTestId(page, "ops-service-id").waitFor()
    expect(await seriousViolations(page)).toEqual([])
  })
})
