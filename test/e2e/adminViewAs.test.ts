// "View as customer" over real HTTP: support reads what the customer's panel shows them (subscriptions with their
// service, renewals without the pay link, VPS, invoices), never cached and audited (`admin.view_as`, the customer as
// target). It is a GET of its own, never a session of the customer's: what the operator's browser POSTs acts on the
// operator's own account, so the customer's subscription and VPS answer 404 and stay as they were.
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AuditPage, ViewAsView } from "../../adapters/http/views.ts"
import { person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import { Envelopes, errorCode, expectBody, leakScanner, provisionedVps, signedInCustomer } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer({ sandboxTaskSpeed: "instant" })
}, 60_000)
afterAll(() => server?.stop())

const Me = Schema.Struct({ user: Schema.Struct({ id: Schema.String }) })

describe("view as customer", () => {
  it("shows support the customer's panel, audited, and nothing POSTed from it reaches the customer's account", async () => {
    const customer = await signedInCustomer(server, await leakScanner(server))
    const profile = { name: "Ada Lovelace", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }
    expect((await customer.put("/api/billing-profile", profile)).status).toBe(200)
    const { vps, subscriptionId } = await provisionedVps(customer, "seen-1")
    const customerId = expectBody(await customer.get("/api/auth/me"), 200, Me).user.id
    const support = await person(server, { role: "support" })

    const reply = await support.browser.get(`/api/admin/customers/${customerId}/view-as`)
    expect(reply.headers.get("cache-control")).toContain("no-store")
    const seen = expectBody(reply, 200, ViewAsView)
    expect(seen.customer.id).toBe(customerId)
    expect(seen.subscriptions.map((s) => [s.id, s.status])).toEqual([[subscriptionId, "active"]])
    expect(seen.subscriptions[0]!.service?.address).toBe(vps.address)
    expect(seen.vps.map((v) => v.hostname)).toEqual(["seen-1"])
    expect(seen.invoices.length).toBe(1)
    expect(seen.renewals.map((r) => r.payUrl)).toEqual([null])
    // The same as the customer's own panel reads.
    const own = expectBody(await customer.get("/api/subscriptions"), 200, Envelopes.subscriptions)
    expect(seen.subscriptions).toEqual(own.subscriptions)

    const trail = expectBody(await support.browser.get(`/api/admin/audit?actor=${support.id}&action=admin.view_as`), 200, AuditPage)
    expect(trail.events.map((e) => [e.subjectUserId, e.target])).toEqual([[customerId, { type: "user", id: customerId }]])

    // Acting from the view: the operator's requests carry the operator's session, never the customer's.
    expect(errorCode(await support.browser.post(`/api/subscriptions/${subscriptionId}/cancel`), 404)).toBe("SUBSCRIPTION_NOT_FOUND")
    expect(errorCode(await support.browser.post(`/api/vps/${vps.id}/stop`), 404)).toBe("VPS_NOT_FOUND")
    expect((await support.browser.post(`/api/admin/customers/${customerId}/view-as`, {})).status).toBe(404)
    const after = expectBody(await customer.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions[0]!
    expect([after.status, after.cancelAtPeriodEnd]).toEqual(["active", false])
    expect(expectBody(await customer.get(`/api/vps/${vps.id}`), 200, Envelopes.vps).vps.status).toBe("running")
  })

  it("answers 404 for an unknown customer and 403 to a customer", async () => {
    const support = await person(server, { role: "support" })
    const customer = await person(server)
    expect(errorCode(await support.browser.get("/api/admin/customers/00000000-0000-4000-8000-000000000000/view-as"), 404)).toBe("CUSTOMER_NOT_FOUND")
    expect(errorCode(await support.browser.get("/api/admin/customers/not-an-id/view-as"), 404)).toBe("CUSTOMER_NOT_FOUND")
    expect(errorCode(await customer.browser.get(`/api/admin/customers/${customer.id}/view-as`), 403)).toBe("FORBIDDEN")
  })
})
