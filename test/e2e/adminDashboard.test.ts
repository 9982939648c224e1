// The back-office's dashboard over real HTTP, on a sandbox server whose thresholds are set so a single VPS turns
// figures red: a provisioned VPS moves MRR (its plan's price excluding VAT, its invoice including it), the services by
// plan, today's orders, its pool's fill and its node's committed resources; what stays under its threshold stays
// green; support reads it, a customer gets 403.
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DashboardView, InvoiceView, PlansEnvelope } from "../../adapters/http/views.ts"
import { person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import { errorCode, expectBody, leakScanner, provisionedVps, signedInCustomer } from "../support/vpsHttp.ts"

const Invoices = Schema.Struct({ invoices: Schema.Array(InvoiceView) })

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer({
    sandboxTaskSpeed: "instant",
    // Any address used turns a pool red; any commitment turns its node red; orders, payments and refunds keep defaults.
    dashboardPoolFreeMinPercent: 100,
    dashboardNodeCommitMaxPercent: 1
  })
}, 60_000)
afterAll(() => server?.stop())

describe("the back-office's dashboard", () => {
  it("counts a provisioned VPS in MRR, services, today's orders, its pool and its node, red past the thresholds", async () => {
    const support = await person(server, { role: "support" })
    const read = async () => {
      const reply = await support.browser.get("/api/admin/dashboard")
      expect(reply.headers.get("cache-control")).toContain("no-store")
      return expectBody(reply, 200, DashboardView)
    }
    const before = await read()
    expect(before.thresholds).toMatchObject({ poolFreeMinPercent: 100, nodeCommitMaxPercent: 1, failedOrdersMax: 0 })
    expect(before.pools.length).toBeGreaterThan(0)
    expect(before.nodes.length).toBeGreaterThan(0)
    expect(before.nodes.every((n) => n.available !== null && n.online === true)).toBe(true)
    expect(before.allocations.every((a) => a.free !== null && a.free > 0)).toBe(true)

    const customer = await signedInCustomer(server, await leakScanner(server))
    // An order needs billing details; its payment is invoiced (VAT included).
    const profile = { name: "Ada Lovelace", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }
    expect((await customer.put("/api/billing-profile", profile)).status).toBe(200)
    const { vps } = await provisionedVps(customer, "dash-1")
    const plan = expectBody(await customer.get("/api/plans"), 200, PlansEnvelope).plans.find((p) => p.id === "vps-s")!
    const invoice = expectBody(await customer.get("/api/invoices"), 200, Invoices).invoices[0]!
    const after = await read()

    expect(after.mrr.activeSubscriptions - before.mrr.activeSubscriptions).toBe(1)
    expect(after.mrr.excludingVatCents - before.mrr.excludingVatCents).toBe(plan.priceCents)
    expect(after.mrr.invoicedSubscriptions - before.mrr.invoicedSubscriptions).toBe(1)
    expect(after.mrr.lastInvoicedIncludingVatCents - before.mrr.lastInvoicedIncludingVatCents).toBe(invoice.totalIncludingVatCents)
    const activeOn = (d: typeof DashboardView.Type) => d.services.find((s) => s.planId === "vps-s")?.active ?? 0
    expect(activeOn(after) - activeOn(before)).toBe(1)
    expect(after.services.find((s) => s.planId === "vps-s")).toMatchObject({ kind: "vps", planName: plan.name })
    expect(after.orders.placed - before.orders.placed).toBe(1)
    expect(after.orders).toMatchObject({ failed: 0, alert: false })
    expect(after.failedPayments).toEqual({ retrying: 0, awaitingAuthentication: 0, amountCents: 0, alert: false })
    expect(after.openRefunds).toEqual({ requests: 0, requestedCents: 0, orders: 0, oldestSince: null, alert: false })

    const assigned = (d: typeof DashboardView.Type) => d.pools.reduce((sum, p) => sum + p.assigned, 0)
    expect(assigned(after) - assigned(before)).toBe(1)
    expect(after.pools.filter((p) => p.assigned > 0).every((p) => p.alert)).toBe(true)
    expect(before.pools.every((p) => p.assigned > 0 || !p.alert)).toBe(true)

    const committed = after.nodes.filter((n) => n.committed.vcpus > 0)
    expect(committed.reduce((sum, n) => sum + n.committed.vcpus, 0) - before.nodes.reduce((sum, n) => sum + n.committed.vcpus, 0))
      .toBe(plan.kind === "vps" ? plan.vcpu : -1)
    expect(committed.every((n) => n.alert)).toBe(true)
    expect(after.nodes.filter((n) => n.committed.vcpus === 0).every((n) => !n.alert)).toBe(true)
    expect(vps.status).toBe("running")
  })

  it("is for staff only", async () => {
    const customer = await person(server)
    expect(errorCode(await customer.browser.get("/api/admin/dashboard"), 403)).toBe("FORBIDDEN")
  })
})
