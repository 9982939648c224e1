// An admin retries a failed order over real HTTP on a real database: the game server's install fails on the sandbox
// panel (refunded), the cause is fixed, and the admin retries it — a new order of the same plan awaiting the
// customer's payment, the customer e-mailed the link, eight retries at once making one; the customer pays the new
// order on its page and it completes. Only a failed order, only an admin, at most once, a plan still on sale; the
// failed order and its retry link to each other on the failed orders' list and on the customer's orders (keyset pages).
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { SandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { AuditPage, OrderView, StaffOrderPage, StaffOrderView } from "../../adapters/http/views.ts"
import { Browser } from "../support/browser.ts"
import { paid } from "../support/checkout.ts"
import { orderGame, sandboxesLeakScanner, sandboxPanelOf } from "../support/gameHttp.ts"
import { person } from "../support/staff.ts"
import { sandboxStripe, startTestServer } from "../support/testServer.ts"
import { errorCode, expectBody, type LeakScanner, signedInCustomer, waitFor } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
let panel: SandboxPterodactyl
let scan: LeakScanner
beforeAll(async () => {
  server = await startTestServer()
  panel = await sandboxPanelOf(server)
  scan = await sandboxesLeakScanner(server)
}, 60_000)
afterAll(() => server?.stop())

const Me = Schema.Struct({ user: Schema.Struct({ id: Schema.String, email: Schema.String }) })
const FailedOrders = Schema.Struct({ orders: Schema.Array(StaffOrderView) })
const ErrorWithDetails = Schema.Struct({ error: Schema.Struct({ code: Schema.String, message: Schema.String, details: Schema.Struct({ retriedAs: Schema.String }) }) })

/** A customer whose game server order failed at its install (refunded). */
const customerWithFailedOrder = async (prefix: string) => {
  const browser = await signedInCustomer(server, scan, prefix)
  const { email, id } = expectBody(await browser.get("/api/auth/me"), 200, Me).user
  panel.control.setInstallOutcome("default", "fail")
  try {
    const { order } = await orderGame(browser)
    expect(order.status).toBe("failed")
    return { browser, email, id, failed: order }
  } finally {
    panel.control.setInstallOutcome("default", "succeed")
  }
}

const retry = (browser: Browser, orderId: string) => browser.post(`/api/admin/orders/${orderId}/retry`)

describe("an admin's retry of a failed order", () => {
  it("makes one new order the customer pays on its page (e-mailed the link), however many retries at once", async () => {
    const admin = await person(server, { role: "admin" })
    const support = await person(server, { role: "support" })
    const ada = await customerWithFailedOrder("retried")
    expect(errorCode(await retry(support.browser, ada.failed.id), 403)).toBe("FORBIDDEN")
    expect(errorCode(await retry(ada.browser, ada.failed.id), 403)).toBe("FORBIDDEN")
    expect((await retry(new Browser(server.url), ada.failed.id)).status).toBe(401)
    const crossSite = await admin.browser.request("POST", `/api/admin/orders/${ada.failed.id}/retry`, { headers: { origin: "https://evil.example" } })
    expect(errorCode(crossSite, 403)).toBe("CSRF_REJECTED")

    // Eight admins' clicks at once: one new order, the others told which.
    const replies = await Promise.all(Array.from({ length: 8 }, () => retry(admin.browser, ada.failed.id)))
    const made = replies.filter((r) => r.status === 201)
    expect(made.length, replies.map((r) => `${r.status} ${r.text}`).join("\n")).toBe(1)
    expect(made[0]!.headers.get("cache-control")).toContain("no-store")
    const retried = expectBody(made[0]!, 201, StaffOrderView)
    expect(retried).toMatchObject({ status: "awaiting_payment", planId: ada.failed.planId, userId: ada.id, retryOf: ada.failed.id })
    expect(retried.id).not.toBe(ada.failed.id)
    for (const reply of replies.filter((r) => r.status !== 201)) {
      const body = expectBody(reply, 409, ErrorWithDetails)
      expect(body.error.code).toBe("ORDER_ALREADY_RETRIED")
      expect(body.error.details.retriedAs).toBe(retried.id)
      expect(body.error.message).toContain(retried.id)
    }
    // Only a failed order: the retry awaits its payment.
    expect(errorCode(await retry(admin.browser, retried.id), 409)).toBe("ORDER_NOT_RETRYABLE")
    expect(errorCode(await retry(admin.browser, "00000000-0000-4000-8000-000000000000"), 404)).toBe("ORDER_NOT_FOUND")

    // The customer's e-mail, with the link to the new order's page; nothing was charged yet.
    const mail = await waitFor("the retry's e-mail", async () =>
      (await server.outbox(50)).find((m) => m.to === ada.email && m.subject.includes("peut maintenant être finalisée")))
    expect(mail.text).toContain(`/orders/${retried.id}`)
    expect(mail.text).toContain(ada.failed.id)
    expect(mail.text).toContain("Rien n'est prélevé sans vous")
    const own = expectBody(await ada.browser.get(`/api/orders/${retried.id}`), 200, OrderView)
    expect(own.status).toBe("awaiting_payment")
    expect(own.retryOf).toBe(ada.failed.id)
    expect(own.checkoutUrl).toBeDefined()

    // Audited, with what changed.
    const audit = expectBody(await admin.browser.get(`/api/admin/audit?user=${ada.id}&action=staff.order_retried`), 200, AuditPage)
    expect(audit.events.map((e) => [e.actorId, e.target, e.before, e.after])).toEqual([[
      admin.id,
      { type: "order", id: ada.failed.id },
      { status: "failed", retriedAs: null },
      expect.objectContaining({ retriedAs: retried.id, status: "awaiting_payment" })
    ]])

    // The customer pays on the new order's page: it is provisioned as any order.
    await paid(own)
    const done = await waitFor("the retry to complete", async () => {
      const order = expectBody(await ada.browser.get(`/api/orders/${retried.id}`), 200, OrderView)
      return order.status === "completed" || order.status === "failed" ? order : undefined
    })
    expect(done.status, done.failureReason).toBe("completed")

    // The failed orders' list links the failed order to its retry; the customer's orders show both, newest first.
    const failed = expectBody(await support.browser.get("/api/admin/orders/failed"), 200, FailedOrders).orders
    expect(failed.find((o) => o.id === ada.failed.id)?.retriedAs).toBe(retried.id)
    const first = expectBody(await support.browser.get(`/api/admin/customers/${ada.id}/orders?limit=1`), 200, StaffOrderPage)
    expect(first.orders.map((o) => [o.id, o.status, o.retryOf])).toEqual([[retried.id, "completed", ada.failed.id]])
    // Each paid, the failed one before its retry.
    expect(Date.parse(first.orders[0]!.paidAt ?? "")).toBeGreaterThan(Date.parse(first.orders[0]!.createdAt))
    const second = expectBody(await support.browser.get(`/api/admin/customers/${ada.id}/orders?limit=1&after=${first.next}`), 200, StaffOrderPage)
    expect(second.orders.map((o) => [o.id, o.status, o.retriedAs, o.failureReason !== undefined])).toEqual([[ada.failed.id, "failed", retried.id, true]])
    expect(Date.parse(second.orders[0]!.paidAt ?? "")).toBeLessThan(Date.parse(first.orders[0]!.paidAt ?? ""))
    expect(second.next).toBeUndefined()
    const page = (await support.browser.get(`/api/admin/customers/${ada.id}`)).body as { orders: typeof StaffOrderPage.Type }
    expect(page.orders.orders.map((o) => o.id)).toEqual([retried.id, ada.failed.id])
    expect(errorCode(await support.browser.get(`/api/admin/customers/00000000-0000-4000-8000-000000000000/orders`), 404)).toBe("CUSTOMER_NOT_FOUND")
    expect(errorCode(await support.browser.get(`/api/admin/customers/${ada.id}/orders?limit=0`), 400)).toBe("INVALID_REQUEST")
  }, 90_000)

  it("leaves nothing behind when the payment provider cannot make the page: the same retry later goes through", async () => {
    const admin = await person(server, { role: "admin" })
    const ada = await customerWithFailedOrder("providerdown")
    await server.runtime.runPromise(Effect.flatMap(sandboxStripe, (stripe) => stripe.control.failNextApiCalls({ times: 10, path: /checkout/ })))
    expect(errorCode(await retry(admin.browser, ada.failed.id), 503)).toBe("PAYMENT_UNAVAILABLE")
    const page = expectBody(await admin.browser.get(`/api/admin/customers/${ada.id}/orders`), 200, StaffOrderPage)
    expect(page.orders.map((o) => [o.id, o.retriedAs])).toEqual([[ada.failed.id, undefined]])
    const audit = expectBody(await admin.browser.get(`/api/admin/audit?user=${ada.id}&action=staff.order_retried`), 200, AuditPage)
    expect(audit.events).toEqual([])
    await server.runtime.runPromise(Effect.flatMap(sandboxStripe, (stripe) => stripe.control.clearFaults))
    const retried = expectBody(await retry(admin.browser, ada.failed.id), 201, StaffOrderView)
    expect(retried.retryOf).toBe(ada.failed.id)
    expect(expectBody(await ada.browser.get(`/api/orders/${retried.id}`), 200, OrderView).checkoutUrl).toBeDefined()
    const listed = expectBody(await admin.browser.get(`/api/admin/customers/${ada.id}/orders`), 200, StaffOrderPage).orders
    expect(listed.map((o) => [o.id, o.paidAt === undefined])).toEqual([[retried.id, true], [ada.failed.id, false]])
  }, 90_000)

  it("refuses a plan taken off sale (409 PLAN_OFF_SALE) and retries it once it is back on sale", async () => {
    const admin = await person(server, { role: "admin" })
    const ada = await customerWithFailedOrder("offsale")
    const sale = (onSale: boolean) => admin.browser.post(`/api/admin/catalog/plans/${ada.failed.planId}/sale`, { onSale })
    expect((await sale(false)).status).toBeLessThan(300)
    try {
      expect(errorCode(await retry(admin.browser, ada.failed.id), 409)).toBe("PLAN_OFF_SALE")
    } finally {
      expect((await sale(true)).status).toBeLessThan(300)
    }
    expect(expectBody(await retry(admin.browser, ada.failed.id), 201, StaffOrderView).retryOf).toBe(ada.failed.id)
  }, 90_000)
})
