// The back-office's door, over real HTTP: every /api/admin route × {anonymous, customer, support, admin}, the list
// read from the API's own definition (a new admin route is in the matrix the day it is added); the same refusal for
// a path that exists and one that does not; staff sessions shorter-lived; a role revoked applies to open sessions.
import { HttpApi, type HttpApiEndpoint } from "effect/http-api"
import { Context, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "../../adapters/http/Api.ts"
import { RequiredRole } from "../../adapters/http/AdminApi.ts"
import { revokeRole } from "../../domain/account/StaffRoles.ts"
import type { StaffRole } from "../../domain/account/Role.ts"
import { Browser, jwtClaims } from "../support/browser.ts"
import { person, type Person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import { errorCode } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer()
}, 60_000)
afterAll(() => server?.stop())

interface AdminRoute {
  readonly method: HttpApiEndpoint.Top["method"]
  readonly path: string
  readonly required: StaffRole
}

/** Every endpoint of the API under /api/admin, with the role it needs (support unless it says otherwise). */
const adminRoutes = (): ReadonlyArray<AdminRoute> => {
  const routes: Array<AdminRoute> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      if (!endpoint.path.startsWith("/api/admin")) return
      routes.push({
        method: endpoint.method,
        path: endpoint.path,
        required: Option.getOrElse(Context.getOption(mergedAnnotations, RequiredRole), () => "support" as const)
      })
    }
  })
  return routes
}

/** The path with each parameter naming `id` (a real customer, so a permitted call does its work). */
const concrete = (path: string, id: string) => path.replace(/:[A-Za-z]+/g, id)

describe("the role matrix of the back-office", () => {
  it("covers the admin routes the API defines", () => {
    const paths = adminRoutes().map((r) => `${r.method} ${r.path}`)
    expect(paths).toEqual(expect.arrayContaining([
      "GET /api/admin/audit",
      "GET /api/admin/customers",
      "GET /api/admin/customers/:id",
      "GET /api/admin/customers/:id/view-as",
      "GET /api/admin/customers/:id/invoices",
      "POST /api/admin/customers/:id/logout-all",
      "GET /api/admin/catalog",
      "GET /api/admin/dashboard",
      "POST /api/admin/catalog/plans/:id/sale",
      "GET /api/admin/services/:id",
      "POST /api/admin/services/:id/suspend",
      "POST /api/admin/services/:id/unsuspend",
      "POST /api/admin/services/:id/terminate",
      "POST /api/admin/services/:id/reconcile",
      "POST /api/admin/services/:id/resume-provisioning",
      "GET /api/admin/orders/failed",
      "POST /api/admin/orders/:id/retry",
      "GET /api/admin/customers/:id/orders",
      "GET /api/admin/customers/:id/payments",
      "POST /api/admin/charges/:id/refunds",
      "GET /api/admin/customers/:id/notices",
      "POST /api/admin/notices/resend"
    ]))
  })

  it("anonymous → 401, customer → 403, support → 403 on admin-only routes, staff allowed otherwise", async () => {
    const customer = await person(server)
    const support = await person(server, { role: "support" })
    const admin = await person(server, { role: "admin" })
    const target = await person(server)
    const callers: ReadonlyArray<readonly [string, Browser, StaffRole | "customer" | "anonymous"]> = [
      ["anonymous", new Browser(server.url), "anonymous"],
      ["customer", customer.browser, "customer"],
      ["support", support.browser, "support"],
      ["admin", admin.browser, "admin"]
    ]
    const seen: Array<string> = []
    for (const route of adminRoutes()) {
      for (const [name, browser, role] of callers) {
        const reply = await browser.request(route.method, concrete(route.path, target.id))
        const where = `${name} ${route.method} ${route.path}: ${reply.status} ${reply.text}`
        seen.push(`${name} ${route.method} ${route.path} ${reply.status}`)
        if (role === "anonymous") expect(errorCode(reply, 401), where).toBe("UNAUTHENTICATED")
        else if (role === "customer" || (route.required === "admin" && role === "support")) {
          expect(errorCode(reply, 403), where).toBe("FORBIDDEN")
        } else {
          expect(reply.status, where).toBeLessThan(500)
          expect([401, 403], where).not.toContain(reply.status)
        }
      }
    }
    expect(seen.length).toBe(adminRoutes().length * callers.length)
  })

  it("answers a path that does not exist exactly as one that does, to anyone but staff", async () => {
    const customer = await person(server)
    const anonymous = new Browser(server.url)
    const paths = [
      "/api/admin/audit",
      "/api/admin/no-such-thing",
      "/api/admin",
      "/api/admin?x=1",
      "//api/admin/audit",
      "/api/%61dmin/audit",
      "/api/%61dmin/no-such-thing"
    ]
    for (const [browser, status] of [[anonymous, 401], [customer.browser, 403]] as const) {
      const replies = await Promise.all(paths.flatMap((p) => [browser.get(p), browser.request("DELETE", p)]))
      const first = replies[0]!
      expect(first.status).toBe(status)
      for (const reply of replies) {
        expect(reply.status, reply.text).toBe(status)
        expect(reply.text).toBe(first.text)
      }
    }
    // Staff see the router's own answer for what does not exist.
    const support = await person(server, { role: "support" })
    expect((await support.browser.get("/api/admin/no-such-thing")).status).toBe(404)
  })
})

describe("staff sessions", () => {
  const lifetimeOf = (browser: Browser) => {
    const claims = jwtClaims(browser.cookies.get("zh_token")!)
    return Number(claims["exp"]) - Number(claims["iat"])
  }

  it("are shorter-lived than a customer's (STAFF_SESSION_IDLE_MINUTES), even with remember-me", async () => {
    const customer = await person(server)
    const admin = await person(server, { role: "admin" })
    expect(lifetimeOf(customer.browser)).toBe(120 * 60)
    expect(lifetimeOf(admin.browser)).toBe(30 * 60)
    const remembered = new Browser(server.url)
    expect((await remembered.post("/api/auth/login", { email: admin.email, password: "correct horse battery", rememberMe: true })).status)
      .toBe(200)
    expect(lifetimeOf(remembered)).toBe(30 * 60)
  })

  it("lose the back-office at once when the role is revoked, and keep the customer's panel", async () => {
    const support: Person = await person(server, { role: "support" })
    expect((await support.browser.get("/api/admin/audit")).status).toBe(200)
    await server.runtime.runPromise(revokeRole(support.email))
    // The user is read through a one-second cache on each instance.
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    expect(errorCode(await support.browser.get("/api/admin/audit"), 403)).toBe("FORBIDDEN")
    expect((await support.browser.get("/api/auth/me")).status).toBe(200)
  })
})
