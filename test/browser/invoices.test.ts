// The panel's "Invoices" page in Chromium: the billing details form (prefilled, then saved), the
// invoices and credit notes listed with their PDF and XML, and the Factur-X PDF downloaded.
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UserId } from "../../domain/account/User.ts"
import { quotePlanMonth, recordCharge } from "../../domain/billing/invoicing/issueDocuments.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { byTestId, pageFetchStatus, useChromium } from "../support/chromium.ts"
import { chargeEntry } from "../support/invoiceMother.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"
import { leakScanner, ScannedBrowser } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
const customer = { email: `invoices.${Date.now()}@example.com`, password: "an invoices test password" }
let userId = ""

beforeAll(async () => {
  server = await startSelfAddressedTestServer()
  const api = new ScannedBrowser(server.url, await leakScanner(server))
  const registered = await api.post("/api/auth/register", {
    ...customer, accountType: "personal", firstName: "Grace", lastName: "Hopper", language: "en"
  })
  expect(registered.status, registered.text).toBe(201)
  userId = (JSON.parse(registered.text) as { user: { id: string } }).user.id
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

const chromium = useChromium(() => server.url)

const invoiceAMonth = () =>
  server.runtime.runPromise(Effect.gen(function*() {
    const user = Option.getOrThrow(yield* (yield* Users).findById(UserId.make(userId)))
    const start = new Date("2026-05-01T10:00:00.000Z")
    const quote = yield* quotePlanMonth(user, { name: "VPS S", priceCents: 500 }, { start, end: new Date("2026-06-01T10:00:00.000Z") })
    const charge = chargeEntry(user.id, { amountCents: quote.amounts.totalIncludingVatCents, createdAt: start })
    return Option.getOrThrow(yield* (yield* UnitOfWork).transaction(recordCharge(charge, quote)))
  }))

describe("the Invoices page", () => {
  it("saves the billing details, lists the invoice with its PDF and XML, and downloads the PDF", async () => {
    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "login-email").fill(customer.email)
    await byTestId(page, "login-password").fill(customer.password)
    await byTestId(page, "login-submit").click()
    await byTestId(page, "dashboard-hello").waitFor()
    await byTestId(page, "nav-invoices").click()
    await byTestId(page, "invoices-empty").waitFor()
    await byTestId(page, "billing-unsaved").waitFor()
    expect(await byTestId(page, "billing-name").inputValue()).toBe("Grace Hopper")
    await byTestId(page, "billing-line1").fill("1 rue de la Paix")
    await byTestId(page, "billing-postcode").fill("75002")
    await byTestId(page, "billing-city").fill("Paris")
    await byTestId(page, "billing-country").fill("fr")
    await byTestId(page, "billing-save").click()
    await page.getByText("Billing details saved.").first().waitFor()

    const invoice = await invoiceAMonth()
    await page.reload()
    const row = byTestId(page, `invoice-${invoice.number}`)
    await row.waitFor()
    expect(await row.textContent()).toContain("€6.00")
    expect(await pageFetchStatus(page, `/api/invoices/${invoice.id}/pdf`)).toBe(200)
    expect(await pageFetchStatus(page, `/api/invoices/${invoice.id}/xml`)).toBe(200)

    const download = page.waitForEvent("download")
    await byTestId(page, `invoice-pdf-${invoice.number}`).click()
    const file = await (await download).path()
    expect(file).toBeTruthy()
  }, 90_000)
})
