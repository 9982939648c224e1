// The back-office's operations over real HTTP on a real database: a service suspended with a statement of reasons
// (the customer's VPS refuses power, the customer's e-mail says why) and brought back; a charge refunded in part
// (twice-clicked: once), never above what is left; a customer's e-mail resent; failed orders listed. Each route:
// its statuses and codes, its role (support vs admin), the Origin check, and no-store.
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AuditPage, FindingsView, NoticeView, RefundView, ServiceHoldView, StaffOrderView, StaffPaymentView, StaffServicePage } from "../../adapters/http/views.ts"
import { Browser } from "../support/browser.ts"
import { sandboxesLeakScanner } from "../support/gameHttp.ts"
import { person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import { errorCode, expectBody, type LeakScanner, provisionedVps, signedInCustomer, vpsStatus, waitFor } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
let scan: LeakScanner
beforeAll(async () => {
  server = await startTestServer()
  scan = await sandboxesLeakScanner(server)
}, 60_000)
afterAll(() => server?.stop())

const Me = Schema.Struct({ user: Schema.Struct({ id: Schema.String, email: Schema.String }) })
const Payments = Schema.Struct({ payments: Schema.Array(StaffPaymentView) })
const Notices = Schema.Struct({ notices: Schema.Array(NoticeView) })
const FailedOrders = Schema.Struct({ orders: Schema.Array(StaffOrderView) })

/** A customer with a running VPS. */
const customerWithVps = async (hostname: string) => {
  const browser = await signedInCustomer(server, scan)
  const { email, id } = expectBody(await browser.get("/api/auth/me"), 200, Me).user
  const vps = await provisionedVps(browser, hostname)
  return { browser, id, email, ...vps }
}

const statement = { facts: "Phishing pages imitating a bank, reported by the bank on 1 March.", ground: "illegal_content" }

describe("an operator's suspension of a service", () => {
  it("stops the customer's VPS, tells them why, is audited, and is lifted back to running", async () => {
    const support = await person(server, { role: "support" })
    const ada = await customerWithVps("held-vps")
    const before = expectBody(await support.browser.get(`/api/admin/services/${ada.subscriptionId}`), 200, StaffServicePage)
    expect(before.upstream).toMatchObject({ reachable: true, upstream: "proxmox", state: "running", ownership: "ours" })
    expect(before.provisioning?.steps.every((s) => s.state === "done")).toBe(true)
    expect(before.provisioning?.order.status).toBe("completed")
    expect(expectBody(await support.browser.post(`/api/admin/services/${ada.subscriptionId}/reconcile`), 200, FindingsView).findings).toEqual([])
    const suspended = expectBody(await support.browser.post(`/api/admin/services/${ada.subscriptionId}/suspend`, statement), 200, ServiceHoldView)
    expect(suspended).toMatchObject({ facts: statement.facts, ground: "illegal_content", placedBy: support.id, liftedAt: null })
    expect(await vpsStatus(ada.browser, ada.vpsId)).toBe("suspended")
    expect(errorCode(await ada.browser.post(`/api/vps/${ada.vpsId}/start`), 409)).toBe("VPS_SUSPENDED")
    const page = expectBody(await support.browser.get(`/api/admin/services/${ada.subscriptionId}`), 200, StaffServicePage)
    expect(page.hold?.id).toBe(suspended.id)
    expect(page.customerId).toBe(ada.id)
    expect(page.service?.state).toBe("suspended")
    // The statement of reasons, in the customer's e-mail.
    // (Sent once the hold is recorded, in the background; the customer registered without a language reads French.)
    const held = await waitFor("the statement of reasons", async () =>
      (await server.outbox(50)).find((m) => m.to === ada.email && m.subject.includes("suspendu par nos équipes")))
    expect(held.text).toContain(statement.facts)
    expect(held.text).toContain("règlement extrajudiciaire des litiges")
    const audit = expectBody(await support.browser.get(`/api/admin/audit?user=${ada.id}&action=staff.service_suspended`), 200, AuditPage)
    expect(audit.events.map((e) => [e.actorId, e.address, e.target])).toEqual([[support.id, "127.0.0.1", { type: "subscription", id: ada.subscriptionId }]])

    expect(errorCode(await support.browser.post(`/api/admin/services/${ada.subscriptionId}/unsuspend`, { reason: "" }), 400)).toBe("INVALID_REQUEST")
    const lifted = expectBody(await support.browser.post(`/api/admin/services/${ada.subscriptionId}/unsuspend`, { reason: "The pages are gone." }), 200, ServiceHoldView)
    expect(lifted.liftReason).toBe("The pages are gone.")
    expect(await vpsStatus(ada.browser, ada.vpsId)).toBe("running")
    expect(errorCode(await support.browser.post(`/api/admin/services/${ada.subscriptionId}/unsuspend`, { reason: "Again." }), 409)).toBe("SERVICE_NOT_HELD")
    // Its provisioning is done: nothing to resume (admin only).
    expect(errorCode(await support.browser.post(`/api/admin/services/${ada.subscriptionId}/resume-provisioning`), 403)).toBe("FORBIDDEN")
    const admin = await person(server, { role: "admin" })
    expect(errorCode(await admin.browser.post(`/api/admin/services/${ada.subscriptionId}/resume-provisioning`), 409)).toBe("ORDER_NOT_RESUMABLE")
  }, 60_000)

  it("an admin ends a held VPS for good: destroyed, the subscription terminated", async () => {
    const support = await person(server, { role: "support" })
    const admin = await person(server, { role: "admin" })
    const ada = await customerWithVps("ended-vps")
    const terminate = (who: typeof admin) => who.browser.post(`/api/admin/services/${ada.subscriptionId}/terminate`, { reason: "Repeated abuse." })
    expect(errorCode(await terminate(admin), 409)).toBe("SERVICE_NOT_HELD")
    expectBody(await support.browser.post(`/api/admin/services/${ada.subscriptionId}/suspend`, statement), 200, ServiceHoldView)
    expect(errorCode(await terminate(support), 403)).toBe("FORBIDDEN")
    expect((await terminate(admin)).status).toBe(204)
    expect(await vpsStatus(ada.browser, ada.vpsId)).toBe("destroyed")
    const page = expectBody(await support.browser.get(`/api/admin/services/${ada.subscriptionId}`), 200, StaffServicePage)
    expect(page.subscription.status).toBe("terminated")
    expect(errorCode(await terminate(admin), 409)).toBe("SERVICE_GONE")
  }, 60_000)

  it("refuses a missing service, a bad statement, another origin, and anyone but staff", async () => {
    const support = await person(server, { role: "support" })
    const missing = "00000000-0000-4000-8000-000000000000"
    expect(errorCode(await support.browser.post(`/api/admin/services/${missing}/suspend`, statement), 404)).toBe("SERVICE_NOT_FOUND")
    expect(errorCode(await support.browser.get(`/api/admin/services/${missing}`), 404)).toBe("SERVICE_NOT_FOUND")
    // A path id that cannot name anything answers as the missing thing it would name, like a well-formed unknown one.
    expect(errorCode(await support.browser.get("/api/admin/services/not-a-uuid"), 404)).toBe("SERVICE_NOT_FOUND")
    expect(errorCode(await support.browser.get("/api/admin/customers/not-a-uuid/payments"), 404)).toBe("CUSTOMER_NOT_FOUND")
    expect(errorCode(await support.browser.get("/api/admin/customers/not-a-uuid/notices"), 404)).toBe("CUSTOMER_NOT_FOUND")
    expect(errorCode(await support.browser.get("/api/admin/customers/not-a-uuid/orders"), 404)).toBe("CUSTOMER_NOT_FOUND")
    expect(errorCode(await support.browser.get(`/api/admin/customers/${missing}/orders`), 404)).toBe("CUSTOMER_NOT_FOUND")
    const admin = await person(server, { role: "admin" })
    expect(errorCode(await admin.browser.post("/api/admin/orders/not-a-uuid/retry"), 404)).toBe("ORDER_NOT_FOUND")
    expect(errorCode(await admin.browser.post("/api/admin/charges/not-a-uuid/refunds", { amountCents: 100, idempotencyKey: "malformed-charge-1", reason: "goodwill" }), 404))
      .toBe("CHARGE_NOT_FOUND")
    for (const bad of [{}, { ...statement, ground: "dislike" }, { ...statement, facts: "  " }, { ...statement, facts: "x".repeat(2001) }, { ...statement, facts: "a\u0000b" }]) {
      expect(errorCode(await support.browser.post(`/api/admin/services/${missing}/suspend`, bad), 400), JSON.stringify(bad)).toBe("INVALID_REQUEST")
    }
    const crossSite = await support.browser.request("POST", `/api/admin/services/${missing}/suspend`, {
      json: statement,
      headers: { origin: "https://evil.example" }
    })
    expect(errorCode(crossSite, 403)).toBe("CSRF_REJECTED")
    expect((await new Browser(server.url).post(`/api/admin/services/${missing}/suspend`, statement)).status).toBe(401)
    const customer = await person(server)
    expect(errorCode(await customer.browser.post(`/api/admin/services/${missing}/suspend`, statement), 403)).toBe("FORBIDDEN")
    expect(errorCode(await customer.browser.get(`/api/admin/services/${missing}`), 403)).toBe("FORBIDDEN")
  })
})

describe("an operator's refund", () => {
  it("refunds part of a charge once however often it is clicked, never above what is left, admin only", async () => {
    const admin = await person(server, { role: "admin" })
    const support = await person(server, { role: "support" })
    const ada = await customerWithVps("refunded-vps")
    const listed = expectBody(await support.browser.get(`/api/admin/customers/${ada.id}/payments`), 200, Payments)
    const charge = listed.payments.find((p) => p.kind === "charge")!
    expect(charge.refundableCents).toBe(charge.amountCents)
    const refund = { amountCents: 100, idempotencyKey: "click-7f3a9c", reason: "goodwill" }
    expect(errorCode(await support.browser.post(`/api/admin/charges/${charge.id}/refunds`, refund), 403)).toBe("FORBIDDEN")
    const [first, second] = await Promise.all([
      admin.browser.post(`/api/admin/charges/${charge.id}/refunds`, refund),
      admin.browser.post(`/api/admin/charges/${charge.id}/refunds`, refund)
    ])
    const a = expectBody(first!, 201, RefundView)
    const b = expectBody(second!, 201, RefundView)
    expect(a.requestId).toBe(b.requestId)
    expect(a.refundableCents).toBe(charge.amountCents - 100)
    // The charge was invoiced: the refund has its credit note, visible to the customer among their documents.
    expect(a.creditNote).not.toBeNull()
    const documents = (await ada.browser.get("/api/invoices")).body as { invoices: ReadonlyArray<{ id: string; kind: string }> }
    expect(documents.invoices.filter((d) => d.kind === "credit_note").map((d) => d.id)).toEqual([a.creditNote?.id])
    const after = expectBody(await support.browser.get(`/api/admin/customers/${ada.id}/payments`), 200, Payments)
    expect(after.payments.filter((p) => p.kind === "refund").map((p) => p.amountCents)).toEqual([100])
    expect(after.payments.find((p) => p.id === charge.id)?.refundableCents).toBe(charge.amountCents - 100)
    const tooMuch = await admin.browser.post(`/api/admin/charges/${charge.id}/refunds`, { ...refund, amountCents: charge.amountCents, idempotencyKey: "click-too-much" })
    expect(errorCode(tooMuch, 409)).toBe("REFUND_EXCEEDS_CHARGE")
    expect(errorCode(await admin.browser.post(`/api/admin/charges/${charge.id}/refunds`, { ...refund, amountCents: 50 }), 409)).toBe("IDEMPOTENCY_KEY_REUSED")
    for (const bad of [{ ...refund, amountCents: 0 }, { ...refund, amountCents: 1.5 }, { ...refund, amountCents: "100" }, { ...refund, reason: "whim" }, { ...refund, idempotencyKey: "short" }]) {
      expect(errorCode(await admin.browser.post(`/api/admin/charges/${charge.id}/refunds`, bad), 400), JSON.stringify(bad)).toBe("INVALID_REQUEST")
    }
    expect(errorCode(await admin.browser.post(`/api/admin/charges/00000000-0000-4000-8000-000000000000/refunds`, refund), 404)).toBe("CHARGE_NOT_FOUND")
    // The customer's own history shows it.
    const own = expectBody(await ada.browser.get("/api/payments"), 200, Payments)
    expect(own.payments.some((p) => p.kind === "refund" && p.amountCents === 100)).toBe(true)
  }, 60_000)
})

describe("a customer's e-mails and failed orders", () => {
  it("lists a customer's e-mails, resends one (audited), and lists failed orders; answers are no-store", async () => {
    const support = await person(server, { role: "support" })
    const ada = await customerWithVps("mailed-vps")
    const listed = await support.browser.get(`/api/admin/customers/${ada.id}/notices`)
    expect(listed.headers.get("cache-control")).toContain("no-store")
    expectBody(listed, 200, Notices)
    // "Your service is ready" is told by the provisioning's last step, just after the order completes.
    const ready = await waitFor("the ServiceReady notice", async () =>
      expectBody(await support.browser.get(`/api/admin/customers/${ada.id}/notices`), 200, Notices).notices.find((n) => n.tag === "ServiceReady"))
    const readyMails = async () => (await server.outbox(50)).filter((m) => m.to === ada.email && m.subject.includes("est prêt"))
    const before = (await waitFor("the first e-mail", async () => (await readyMails()).length || undefined))
    expect((await support.browser.post("/api/admin/notices/resend", { key: ready.key })).status).toBe(204)
    expect((await readyMails()).length).toBe(before + 1)
    const audit = expectBody(await support.browser.get(`/api/admin/audit?user=${ada.id}&action=staff.notice_resent`), 200, AuditPage)
    expect(audit.events.map((e) => e.target)).toEqual([{ type: "notice", id: ready.key }])
    expect(errorCode(await support.browser.post("/api/admin/notices/resend", { key: "no-such-notice" }), 404)).toBe("NOTICE_NOT_FOUND")
    expect(errorCode(await support.browser.get(`/api/admin/customers/00000000-0000-4000-8000-000000000000/notices`), 404)).toBe("CUSTOMER_NOT_FOUND")
    expectBody(await support.browser.get("/api/admin/orders/failed"), 200, FailedOrders)
    expect((await new Browser(server.url).get("/api/admin/orders/failed")).status).toBe(401)
    expect(errorCode(await ada.browser.get("/api/admin/orders/failed"), 403)).toBe("FORBIDDEN")
  }, 60_000)
})
