// The consumer's rights over HTTP (issue 13 §3): an order of a personal account needs the express request to start
// now (422 without it, nothing created); a professional's does not. The withdrawal route: offered in the list until
// the period's end, owner only (404 otherwise), a professional refused with a clear 403, a double click withdrawing
// once (one 200, one 409 ALREADY_WITHDRAWN, one refund), no-store, and the VPS destroyed through its product.
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InvoiceView, PaymentView, WithdrawalView } from "../../adapters/http/views.ts"
import { paid } from "../support/checkout.ts"
import { startTestServer } from "../support/testServer.ts"
import {
  Envelopes,
  errorCode,
  expectBody,
  leakScanner,
  type LeakScanner,
  provisionedVps,
  type ScannedBrowser,
  signedInCustomer,
  type TestServer,
  vpsOrder,
  waitFor
} from "../support/vpsHttp.ts"

let server: TestServer
let scan: LeakScanner

beforeAll(async () => {
  server = await startTestServer()
  scan = await leakScanner(server)
}, 60_000)
afterAll(async () => {
  await server?.stop()
})

/** A professional account (the sandbox registry's EDF), signed in. */
const signedInProfessional = () =>
  signedInCustomer(server, scan, "pro", { account: { accountType: "professional", firstName: "Jeanne", lastName: "Martin", siret: "55208131766522" } })

const listed = async (browser: ScannedBrowser, id: string) =>
  expectBody(await browser.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions.find((s) => s.id === id)

const Payments = Schema.Struct({ payments: Schema.Array(PaymentView) })
const paymentsOf = async (browser: ScannedBrowser) => expectBody(await browser.get("/api/payments"), 200, Payments).payments

const withoutConsent = (hostname: string) => {
  const { expressStartConsent: _, ...body } = vpsOrder(hostname)
  return body
}

describe("the express request to start now, at order", () => {
  it("is required of a consumer: 422 EXPRESS_START_CONSENT_REQUIRED, a readable message, nothing created", async () => {
    const browser = await signedInCustomer(server, scan, "noconsent")
    for (const body of [withoutConsent("no-consent"), { ...withoutConsent("refused-consent"), expressStartConsent: false }]) {
      const reply = await browser.post("/api/orders", body)
      expect(errorCode(reply, 422)).toBe("EXPRESS_START_CONSENT_REQUIRED")
      expect(reply.text).toContain("14-day withdrawal period")
    }
    expect(expectBody(await browser.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions).toEqual([])
  })

  it("is not asked of a professional, who is offered no withdrawal and is refused one with a clear 403", async () => {
    const pro = await signedInProfessional()
    const placed = await pro.post("/api/orders", withoutConsent("pro-1"))
    const order = expectBody(placed, 201, Envelopes.order).order
    await paid(order)
    const subscriptionId = await waitFor("the professional's subscription", async () => {
      const all = expectBody(await pro.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions
      return all[0]?.id
    }, 30_000)
    expect((await listed(pro, subscriptionId))?.withdrawableUntil).toBeUndefined()
    const refused = await pro.post(`/api/subscriptions/${subscriptionId}/withdraw`)
    expect(errorCode(refused, 403)).toBe("WITHDRAWAL_NOT_AVAILABLE")
    expect(refused.text).toContain("professional accounts do not have it")
    expect((await listed(pro, subscriptionId))?.status).toBe("active")
  }, 60_000)
})

describe("withdrawing from a contract", () => {
  it("is offered until the period's end; a double click withdraws once; the VPS is destroyed", async () => {
    const owner = await signedInCustomer(server, scan, "withdraws")
    const { subscriptionId, vpsId } = await provisionedVps(owner, "withdrawn-1")
    const before = await listed(owner, subscriptionId)
    expect(before?.withdrawableUntil).toBeDefined()
    const until = Date.parse(before?.withdrawableUntil ?? "")
    expect(until - Date.parse(before?.createdAt ?? "")).toBeGreaterThan(14 * 86_400_000)
    expect(until - Date.parse(before?.createdAt ?? "")).toBeLessThan(19 * 86_400_000)

    const stranger = await signedInCustomer(server, scan, "stranger")
    expect(errorCode(await stranger.post(`/api/subscriptions/${subscriptionId}/withdraw`), 404)).toBe("SUBSCRIPTION_NOT_FOUND")

    const clicks = await Promise.all([1, 2].map(() => owner.post(`/api/subscriptions/${subscriptionId}/withdraw`)))
    const [won, lost] = clicks[0]!.status === 200 ? [clicks[0]!, clicks[1]!] : [clicks[1]!, clicks[0]!]
    const withdrawal = expectBody(won, 200, WithdrawalView)
    expect(won.headers.get("cache-control")).toBe("no-store")
    expect(errorCode(lost, 409)).toBe("ALREADY_WITHDRAWN")
    expect(lost.headers.get("cache-control")).toBe("no-store")
    expect(withdrawal.subscription.status).toBe("terminated")
    expect(withdrawal.subscription.withdrawnAt).toBeDefined()
    expect(withdrawal.subscription.withdrawableUntil).toBeUndefined()
    // Minutes into a month of VPS S: nearly all of the price comes back, never more than was paid.
    const payments = await paymentsOf(owner)
    const charged = payments.filter((p) => p.kind === "charge").reduce((sum, p) => sum + p.amountCents, 0)
    expect(withdrawal.refundCents).toBeLessThanOrEqual(charged)
    expect(withdrawal.refundCents).toBeGreaterThanOrEqual(charged - Math.ceil(charged / 1000))
    await waitFor("the refund in the payment history", async () => {
      const refunds = (await paymentsOf(owner)).filter((p) => p.kind === "refund")
      return refunds.length > 0 ? refunds : undefined
    }).then((refunds) => expect(refunds.map((r) => r.amountCents)).toEqual([withdrawal.refundCents]))
    // The refund's credit note corrects the month's invoice by exactly the refund.
    const documents = expectBody(await owner.get("/api/invoices"), 200, Schema.Struct({ invoices: Schema.Array(InvoiceView) })).invoices
    const creditNotes = documents.filter((d) => d.kind === "credit_note")
    expect(creditNotes.map((d) => d.totalIncludingVatCents)).toEqual([withdrawal.refundCents])
    expect(creditNotes[0]?.correctsInvoiceId).toBe(documents.find((d) => d.kind === "invoice")?.id)

    expect(errorCode(await owner.post(`/api/subscriptions/${subscriptionId}/withdraw`), 409)).toBe("ALREADY_WITHDRAWN")
    expect((await listed(owner, subscriptionId))?.withdrawnAt).toBe(withdrawal.subscription.withdrawnAt)
    await waitFor("the VPS destroyed", async () => {
      const vps = expectBody(await owner.get(`/api/vps/${vpsId}`), 200, Envelopes.vps).vps
      return vps.status === "destroyed" ? vps : undefined
    }, 30_000)
  }, 90_000)
})
