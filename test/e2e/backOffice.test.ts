// The back-office's first routes over real HTTP: customer search, a customer's page (the view itself audited),
// ending a customer's sessions (admin), and the audit log with its filters and keyset pages; bad input is a 400.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AuditPage, StaffCustomerPage, StaffCustomerView } from "../../adapters/http/views.ts"
import { Schema } from "effect"
import { person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import { errorCode, expectBody } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer()
}, 60_000)
afterAll(() => server?.stop())

const Customers = Schema.Struct({ customers: Schema.Array(StaffCustomerView) })

describe("the back-office's customers", () => {
  it("finds customers by a prefix of their e-mail or name, case-insensitive", async () => {
    const support = await person(server, { role: "support" })
    const ada = await person(server, { lastName: "Quetzalcoatl" })
    const byName = expectBody(await support.browser.get("/api/admin/customers?q=QUETZAL"), 200, Customers)
    expect(byName.customers.map((c) => c.id)).toEqual([ada.id])
    expect(byName.customers[0]!.role).toBe("customer")
    const byEmail = expectBody(await support.browser.get(`/api/admin/customers?q=${encodeURIComponent(ada.email)}`), 200, Customers)
    expect(byEmail.customers.map((c) => c.email)).toEqual([ada.email])
    for (const bad of ["", "?q=", "?q=a", `?q=${"x".repeat(300)}`, "?q=%00ab"]) {
      expect(errorCode(await support.browser.get(`/api/admin/customers${bad}`), 400), bad).toBe("INVALID_REQUEST")
    }
  })

  it("shows a customer's page with sessions and trail, and audits the view", async () => {
    const support = await person(server, { role: "support" })
    const ada = await person(server)
    const page = expectBody(await support.browser.get(`/api/admin/customers/${ada.id}`), 200, StaffCustomerPage)
    expect(page.customer.email).toBe(ada.email)
    expect(page.sessions.length).toBe(1)
    expect(page.audit.events.map((e) => e.action)).toContain("auth.sign_in")
    const trail = expectBody(await support.browser.get(`/api/admin/audit?user=${ada.id}&action=staff.customer_viewed`), 200, AuditPage)
    expect(trail.events.length).toBe(1)
    const viewed = trail.events[0]!
    expect(viewed.actorId).toBe(support.id)
    expect(viewed.actorRole).toBe("support")
    expect(viewed.target).toEqual({ type: "user", id: ada.id })
    expect(viewed.address).toBe("127.0.0.1")
    for (const missing of ["00000000-0000-4000-8000-000000000000", "not-an-id"]) {
      expect(errorCode(await support.browser.get(`/api/admin/customers/${missing}`), 404)).toBe("CUSTOMER_NOT_FOUND")
    }
  })

  it("an admin ends every session of a customer, with the count before and after in the log", async () => {
    const admin = await person(server, { role: "admin" })
    const ada = await person(server)
    expect((await ada.browser.get("/api/auth/me")).status).toBe(200)
    expect((await admin.browser.post(`/api/admin/customers/${ada.id}/logout-all`)).status).toBe(204)
    expect((await ada.browser.get("/api/auth/me")).status).toBe(401)
    const trail = expectBody(await admin.browser.get(`/api/admin/audit?user=${ada.id}&action=staff.sessions_ended`), 200, AuditPage)
    expect(trail.events.map((e) => [e.actorId, e.before, e.after])).toEqual([[admin.id, { sessions: 1 }, { sessions: 0 }]])
  })
})

describe("the audit log", () => {
  it("pages newest first by keyset, filtered by actor, without gaps or repeats", async () => {
    const admin = await person(server, { role: "admin" })
    const ada = await person(server)
    for (let i = 0; i < 5; i++) expect((await admin.browser.get(`/api/admin/customers/${ada.id}`)).status).toBe(200)
    const ids: Array<string> = []
    let next: string | undefined = undefined
    for (let i = 0; i < 5; i++) {
      const page: typeof AuditPage.Type = expectBody(
        await admin.browser.get(`/api/admin/audit?actor=${admin.id}&action=staff.customer_viewed&limit=2${next === undefined ? "" : `&before=${next}`}`),
        200,
        AuditPage
      )
      ids.push(...page.events.map((e) => e.id))
      next = page.next
      if (next === undefined) break
    }
    expect(ids.length).toBe(5)
    expect(new Set(ids).size).toBe(5)
    expect([...ids].sort((a, b) => Number(b) - Number(a))).toEqual(ids)
  })

  it("refuses a malformed filter with 400, never a 5xx", async () => {
    const support = await person(server, { role: "support" })
    for (const bad of ["before=abc", "before=-1", "before=0", "before=99999999999999999999", "limit=0", "limit=201", "limit=x", "user=nope", "actor=1"]) {
      expect(errorCode(await support.browser.get(`/api/admin/audit?${bad}`), 400), bad).toBe("INVALID_REQUEST")
    }
  })
})
