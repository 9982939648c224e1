// The panel's "Invoices" page in Chromium: the billing details form (prefilled, then saved), the
// invoices and credit notes listed with their PDF and XML, and the Factur-X PDF downloaded and rendered to PNG by Chromium's own viewer.
import { Effect, Option } from "effect"
import type { Page } from "playwright-core"
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

/**
 * How many dark pixels a PNG shows inside its white page (the bounding box of its near-white pixels): a rendered
 * document has text there; a viewer that failed shows no white page at all.
 */
const inkOnWhitePage = (page: Page, png: Buffer) =>
  page.evaluate(async (base64) => {
    const image = new Image()
    image.src = `data:image/png;base64,${base64}`
    await image.decode()
    const canvas = document.createElement("canvas")
    canvas.width = image.width
    canvas.height = image.height
    const context = canvas.getContext("2d")!
    context.drawImage(image, 0, 0)
    const { data } = context.getImageData(0, 0, image.width, image.height)
    const at = (x: number, y: number) => (y * image.width + x) * 4
    let [left, top, right, bottom] = [image.width, image.height, -1, -1]
    for (let y = 0; y < image.height; y++) {
      for (let x = 0; x < image.width; x++) {
        const i = at(x, y)
        if (data[i]! > 245 && data[i + 1]! > 245 && data[i + 2]! > 245) {
          left = Math.min(left, x); right = Math.max(right, x); top = Math.min(top, y); bottom = Math.max(bottom, y)
        }
      }
    }
    if (right - left < 200 || bottom - top < 200) return 0
    let ink = 0
    for (let y = top; y <= bottom; y++) {
      for (let x = left; x <= right; x++) {
        const i = at(x, y)
        if (data[i]! < 110 && data[i + 1]! < 110 && data[i + 2]! < 110) ink++
      }
    }
    return ink
  }, png.toString("base64"))

const invoiceAMonth = () =>
  server.runtime.runPromise(Effect.gen(function*() {
    const user = Option.getOrThrow(yield* (yield* Users).findById(UserId.make(userId)))
    const start = new Date("2026-05-01T10:00:00.000Z")
    const quote = yield* quotePlanMonth(user, { name: "VPS S", priceCents: 500 }, { start, end: new Date("2026-06-01T10:00:00.000Z") })
    const charge = chargeEntry(user.id, { amountCents: quote.amounts.totalIncludingVatCents, createdAt: start })
    return Option.getOrThrow(yield* (yield* UnitOfWork).transaction(recordCharge(charge, quote)))
  }))

describe("the Invoices page", () => {
  it("saves the billing details, lists the invoice with its PDF and XML, downloads the PDF, which Chromium renders", async () => {
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
    // Nothing longer than the API accepts can be typed (it would only be refused as a whole).
    await byTestId(page, "billing-postcode").pressSequentially("1".repeat(20))
    expect(await byTestId(page, "billing-postcode").inputValue()).toBe("1".repeat(16))
    expect(await byTestId(page, "billing-line1").getAttribute("maxlength")).toBe("200")
    await byTestId(page, "billing-postcode").clear()
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

    // Chromium's own PDF viewer draws the document: a white A4 page with text on it, as a PNG.
    await page.route("**/render-invoice", (route) =>
      route.fulfill({
        contentType: "text/html",
        body: `<body style="margin:0"><embed src="/api/invoices/${invoice.id}/pdf" type="application/pdf" width="800" height="1000"></body>`
      }))
    // On a 375 px phone the invoices fit the screen (their rows stack) and the billing details are the panel's inputs.
    await page.setViewportSize({ width: 375, height: 800 })
    await page.goto("/invoices")
    await row.waitFor()
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), "/invoices is wider than the screen")
      .toBeLessThanOrEqual(0)
    const nameBox = await byTestId(page, "billing-name").boundingBox()
    const cityPadding = await byTestId(page, "billing-city").evaluate((input) => getComputedStyle(input).paddingTop)
    expect(nameBox!.height, "a billing input as tall as the panel's other inputs").toBeGreaterThanOrEqual(32)
    expect(cityPadding, "a billing input styled as the panel's").toBe("8px")

    await page.setViewportSize({ width: 800, height: 1000 })
    await page.goto("/render-invoice")
    await expect.poll(async () => inkOnWhitePage(page, await page.screenshot()), { timeout: 20_000 }).toBeGreaterThan(500)
  }, 90_000)
})
