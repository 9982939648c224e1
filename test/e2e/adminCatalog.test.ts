// The back-office's catalog over real HTTP: support reads the catalog as the file made it (no upstream credential);
// an admin takes a plan off sale and puts it back — persisted, audited with before and after — and while it is off
// sale the public list hides it and an order for it is refused with 409, while subscriptions on it run and renew;
// unknown plans and bad bodies are 4xx.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AdminCatalogView, AuditPage, PlansEnvelope, PlanSaleView } from "../../adapters/http/views.ts"
import { person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import { Envelopes, errorCode, expectBody, leakScanner, provisionedVps, signedInCustomer } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer({ sandboxTaskSpeed: "instant" })
}, 60_000)
afterAll(() => server?.stop())

const saleOf = (catalog: typeof AdminCatalogView.Type, id: string) => catalog.plans.find((p) => p.id === id)?.onSale

describe("the back-office's catalog", () => {
  it("shows support the plans, templates, pools, clusters and panels, without credentials", async () => {
    const support = await person(server, { role: "support" })
    const reply = await support.browser.get("/api/admin/catalog")
    const catalog = expectBody(reply, 200, AdminCatalogView)
    expect(reply.headers.get("cache-control")).toContain("no-store")
    expect(catalog.plans.map((p) => p.id)).toEqual(expect.arrayContaining(["vps-s", "vps-m", "mc-2g"]))
    expect(catalog.plans.every((p) => p.onSale && !p.retired)).toBe(true)
    expect(catalog.plans.find((p) => p.id === "vps-s")).toMatchObject({ kind: "vps", templates: expect.any(Array) })
    expect(catalog.plans.find((p) => p.id === "mc-2g")).toMatchObject({ kind: "game", panel: expect.any(String) })
    expect(catalog.templates.length).toBeGreaterThan(0)
    expect(catalog.pools[0]).toMatchObject({ free: expect.any(Number), assigned: expect.any(Number) })
    expect(catalog.clusters.length).toBeGreaterThan(0)
    expect(catalog.panels.length).toBeGreaterThan(0)
    expect(reply.text).not.toMatch(/token|secret|password|apiKey/i)
  })

  it("takes a plan off sale (hidden, not orderable: 409) and back on, audited with before and after", async () => {
    const admin = await person(server, { role: "admin" })
    const customer = await person(server)
    const off = await admin.browser.post("/api/admin/catalog/plans/vps-m/sale", { onSale: false })
    expect(expectBody(off, 200, PlanSaleView)).toEqual({ id: "vps-m", onSale: false })
    expect(saleOf(expectBody(await admin.browser.get("/api/admin/catalog"), 200, AdminCatalogView), "vps-m")).toBe(false)
    const listed = expectBody(await customer.browser.get("/api/plans"), 200, PlansEnvelope)
    expect(listed.plans.map((p) => p.id)).not.toContain("vps-m")
    expect(listed.plans.map((p) => p.id)).toContain("vps-s")
    const order = await customer.browser.post("/api/orders", { planId: "vps-m", expressStartConsent: true, options: {} })
    expect(errorCode(order, 409)).toBe("PLAN_OFF_SALE")

    expect(expectBody(await admin.browser.post("/api/admin/catalog/plans/vps-m/sale", { onSale: true }), 200, PlanSaleView).onSale).toBe(true)
    const again = expectBody(await customer.browser.get("/api/plans"), 200, PlansEnvelope)
    expect(again.plans.map((p) => p.id)).toContain("vps-m")

    const trail = expectBody(await admin.browser.get(`/api/admin/audit?actor=${admin.id}&action=catalog.plan_sale_changed`), 200, AuditPage)
    expect(trail.events.map((e) => [e.target, e.before, e.after])).toEqual([
      [{ type: "plan", id: "vps-m" }, { onSale: false }, { onSale: true }],
      [{ type: "plan", id: "vps-m" }, { onSale: true }, { onSale: false }]
    ])
  })

  it("leaves subscriptions on an off-sale plan as they are: the service runs and the subscription renews", async () => {
    const admin = await person(server, { role: "admin" })
    const customer = await signedInCustomer(server, await leakScanner(server))
    const profile = { name: "Ada Lovelace", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }
    expect((await customer.put("/api/billing-profile", profile)).status).toBe(200)
    const { subscriptionId, vpsId } = await provisionedVps(customer, "kept-1")
    expect((await admin.browser.post("/api/admin/catalog/plans/vps-s/sale", { onSale: false })).status).toBe(200)
    try {
      const before = expectBody(await customer.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions[0]!
      const { subscription } = expectBody(await customer.post(`/api/subscriptions/${subscriptionId}/renew`), 200, Envelopes.subscription)
      expect(subscription.status).toBe("active")
      expect(new Date(subscription.currentPeriodEnd).getTime()).toBeGreaterThan(new Date(before.currentPeriodEnd).getTime())
      expect(expectBody(await customer.get(`/api/vps/${vpsId}`), 200, Envelopes.vps).vps.status).toBe("running")
    } finally {
      expect((await admin.browser.post("/api/admin/catalog/plans/vps-s/sale", { onSale: true })).status).toBe(200)
    }
  }, 60_000)

  it("records exactly one change when two admins take the same plan off sale at once", async () => {
    const first = await person(server, { role: "admin" })
    const second = await person(server, { role: "admin" })
    const replies = await Promise.all([first, second].map((a) => a.browser.post("/api/admin/catalog/plans/bedrock-1g/sale", { onSale: false })))
    for (const reply of replies) expect(reply.status, reply.text).toBe(200)
    const trail = await Promise.all([first, second].map(async (a) =>
      expectBody(await a.browser.get(`/api/admin/audit?actor=${a.id}&action=catalog.plan_sale_changed`), 200, AuditPage).events))
    const befores = trail.flat().map((e) => (e.before as { onSale: boolean }).onSale).sort()
    expect(befores).toEqual([false, true])
    expect((await first.browser.post("/api/admin/catalog/plans/bedrock-1g/sale", { onSale: true })).status).toBe(200)
  })

  it("answers 404 for an unknown plan, 400 for a bad body, 403 to support", async () => {
    const admin = await person(server, { role: "admin" })
    const support = await person(server, { role: "support" })
    expect(errorCode(await admin.browser.post("/api/admin/catalog/plans/no-such-plan/sale", { onSale: false }), 404)).toBe("PLAN_NOT_FOUND")
    for (const body of [{}, { onSale: "no" }, { onSale: null }]) {
      expect(errorCode(await admin.browser.post("/api/admin/catalog/plans/vps-s/sale", body), 400), JSON.stringify(body)).toBe("INVALID_REQUEST")
    }
    expect(errorCode(await admin.browser.post(`/api/admin/catalog/plans/${"x".repeat(65)}/sale`, { onSale: false }), 404)).toBe("PLAN_NOT_FOUND")
    expect(errorCode(await support.browser.post("/api/admin/catalog/plans/vps-s/sale", { onSale: false }), 403)).toBe("FORBIDDEN")
  })
})
