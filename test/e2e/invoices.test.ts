// GET /api/invoices, /:id, /:id/pdf and /:id/xml over real HTTP: the owner's documents newest first in keyset pages,
// each as JSON, Factur-X PDF and CII XML, never cached; anyone else's answer 404 as if they did not exist.
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UserId } from "../../domain/account/User.ts"
import { quotePlanMonth, recordCharge, recordRefund } from "../../domain/billing/invoicing/issueDocuments.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { Browser } from "../support/browser.ts"
import { chargeEntry } from "../support/invoiceMother.ts"
import { startTestServer } from "../support/testServer.ts"
import { leakScanner, signedInCustomer } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>

beforeAll(async () => {
  server = await startTestServer()
}, 120_000)

afterAll(async () => {
  await server?.stop()
})

const profile = { name: "Ada Lovelace", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }

/** A customer with a billing profile and `months` paid months (invoices), the first one refunded if asked. */
const customerWithInvoices = async (label: string, months: number, refundFirst = false) => {
  const scan = await leakScanner(server)
  const browser = await signedInCustomer(server, scan, label)
  expect((await browser.put("/api/billing-profile", profile)).status).toBe(200)
  const me = JSON.parse((await browser.get("/api/auth/me")).text) as { user: { id: string } }
  await server.runtime.runPromise(Effect.gen(function*() {
    const user = Option.getOrThrow(yield* (yield* Users).findById(UserId.make(me.user.id)))
    for (let m = 0; m < months; m++) {
      const start = new Date(Date.UTC(2026, m, 1))
      const quote = yield* quotePlanMonth(user, { name: "VPS S", priceCents: 500 }, { start, end: new Date(Date.UTC(2026, m + 1, 1)) })
      const charge = chargeEntry(user.id, { amountCents: quote.amounts.totalIncludingVatCents, createdAt: start })
      yield* (yield* UnitOfWork).transaction(recordCharge(charge, quote))
      if (refundFirst && m === 0) {
        const refund = chargeEntry(user.id, { kind: "refund", reference: `${charge.reference}:re`, amountCents: charge.amountCents, createdAt: new Date(Date.UTC(2026, 0, 2)) })
        yield* (yield* UnitOfWork).transaction(recordRefund(refund, charge.reference))
      }
    }
  }))
  return browser
}

type Page = { invoices: ReadonlyArray<{ id: string; number: string; kind: string; totalIncludingVatCents: number; correctsNumber?: string }>; next?: string }

describe("/api/invoices", () => {
  it("lists the owner's invoices and credit notes newest first, page after page", async () => {
    const ada = await customerWithInvoices("pages", 3, true)
    const first = await ada.get("/api/invoices?limit=2")
    expect(first.status).toBe(200)
    expect(first.headers.get("cache-control")).toContain("no-store")
    const page1 = JSON.parse(first.text) as Page
    expect(page1.invoices.map((i) => i.kind)).toEqual(["invoice", "invoice"])
    const page2 = JSON.parse((await ada.get(`/api/invoices?limit=2&after=${page1.next}`)).text) as Page
    expect(page2.next).toBeUndefined()
    const all = [...page1.invoices, ...page2.invoices]
    expect(all).toHaveLength(4)
    expect(all.map((i) => i.kind)).toEqual(["invoice", "invoice", "credit_note", "invoice"])
    expect(all[2]!.correctsNumber).toBe(all[3]!.number)
    expect(all.every((i) => i.totalIncludingVatCents === 600)).toBe(true)
  }, 60_000)

  it("serves one document as JSON, Factur-X PDF and CII XML to its owner, and 404 to anyone else", async () => {
    const ada = await customerWithInvoices("owner", 1)
    const eve = await signedInCustomer(server, await leakScanner(server), "eve")
    const { invoices: [invoice] } = JSON.parse((await ada.get("/api/invoices")).text) as Page
    const one = await ada.get(`/api/invoices/${invoice!.id}`)
    expect(one.status).toBe(200)
    expect(JSON.parse(one.text)).toMatchObject({ number: invoice!.number, vatBreakdown: [{ vatCategory: "S", vatRatePercent: 20, baseCents: 500, vatCents: 100 }] })
    const pdf = await ada.get(`/api/invoices/${invoice!.id}/pdf`)
    expect(pdf.status).toBe(200)
    expect(pdf.headers.get("content-type")).toContain("application/pdf")
    expect(pdf.text.startsWith("%PDF-")).toBe(true)
    const xml = await ada.get(`/api/invoices/${invoice!.id}/xml`)
    expect(xml.headers.get("content-type")).toContain("application/xml")
    expect(xml.text).toContain(`<ram:ID>${invoice!.number}</ram:ID>`)
    for (const path of ["", "/pdf", "/xml"]) {
      const other = await eve.get(`/api/invoices/${invoice!.id}${path}`)
      expect(other.status).toBe(404)
      expect(JSON.parse(other.text)).toMatchObject({ error: { code: "INVOICE_NOT_FOUND" } })
    }
    expect((await ada.get("/api/invoices/not-an-id")).status).toBe(404)
    expect(JSON.parse((await eve.get("/api/invoices")).text)).toEqual({ invoices: [] })
  }, 60_000)

  it("a limit out of range is 400, and a cursor the server did not make starts from the first page", async () => {
    const ada = await customerWithInvoices("limits", 1)
    expect((await ada.get("/api/invoices?limit=0")).status).toBe(400)
    expect((await ada.get("/api/invoices?limit=1000")).status).toBe(400)
    const forged = await ada.get("/api/invoices?after=bm9wZQ")
    expect(forged.status).toBe(200)
    expect((JSON.parse(forged.text) as Page).invoices).toHaveLength(1)
  }, 60_000)

  it("signed out: 401", async () => {
    expect((await new Browser(server.url).get("/api/invoices")).status).toBe(401)
  })
})
