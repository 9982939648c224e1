// The edge's protections on the real application, over HTTP: every state-changing route (the API, the game relay,
// logout-all) refuses a request from another origin of the same site with 403 CSRF_REJECTED and changes nothing;
// and the headers: no-store on authenticated answers (the one-time root password, console tokens), nosniff on
// every answer (API, errors, the panel's files, the reference page), HSTS in production, a CSP on /docs.
import { paid } from "../support/checkout.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrderView } from "../../adapters/http/views.ts"
import { Browser, type Reply } from "../support/browser.ts"
import { GameEnvelopes, provisionedGame, sandboxesLeakScanner } from "../support/gameHttp.ts"
import { startTestServer } from "../support/testServer.ts"
import {
  Envelopes,
  errorCode,
  expectBody,
  type LeakScanner,
  PANEL_ORIGIN,
  type ScannedBrowser,
  signedInCustomer,
  type TestServer,
  vpsOrder,
  waitFor
} from "../support/vpsHttp.ts"

let server: TestServer
let scan: LeakScanner
let owner: ScannedBrowser
let vpsId: string
let identifier: string
let subscriptionId: string
/** The subscription as it was before any forged request. */
let subscriptionBefore: unknown
/** The reply that showed the new VPS's root password (its one read). */
let passwordReply: Reply

beforeAll(async () => {
  server = await startTestServer()
  scan = await sandboxesLeakScanner(server)
  owner = await signedInCustomer(server, scan, "edge")
  const placed = expectBody(await owner.post("/api/orders", vpsOrder("edge-1")), 201, Envelopes.order).order
  await paid(placed)
  passwordReply = await waitFor("the completed order", async () => {
    const reply = await owner.get(`/api/orders/${placed.id}`)
    return expectBody(reply, 200, OrderView).status === "completed" ? reply : undefined
  })
  vpsId = expectBody(passwordReply, 200, OrderView).serviceId!
  subscriptionId = expectBody(passwordReply, 200, OrderView).subscriptionId!
  subscriptionBefore = expectBody(await owner.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions
    .find((s) => s.id === subscriptionId)
  identifier = (await provisionedGame(owner)).gameServer.identifier
}, 90_000)
afterAll(() => server?.stop())

/** The owner's browser as seen from a page at `headers`' origin: the session cookie goes along (SameSite=Lax, same site). */
const fromPage = (method: string, path: string, headers: Record<string, string>, json?: unknown) =>
  owner.request(method, path, { headers, ...(json === undefined ? {} : { json }) })

const FOREIGN_PAGES: ReadonlyArray<readonly [string, Record<string, string>]> = [
  ["a sibling subdomain", { origin: "http://customer.panel.test" }],
  ["another port of the panel's host", { origin: "http://panel.test:8080" }],
  ["a same-site page that sent no Origin", { "sec-fetch-site": "same-site" }]
]

describe("cross-site request forgery from a page of the same site", () => {
  const stateChanging = (): ReadonlyArray<readonly [string, string, unknown]> => [
    ["POST", `/api/vps/${vpsId}/stop`, undefined],
    ["POST", `/api/vps/${vpsId}/snapshots`, { name: "forged" }],
    ["POST", `/api/vps/${vpsId}/reset-password`, { rootPassword: "forged-password-1", appliesAtNextBoot: true }],
    ["POST", "/api/orders", vpsOrder("forged")],
    ["POST", `/api/client/servers/${identifier}/files/write?file=%2Fforged.txt`, undefined],
    ["POST", `/api/client/servers/${identifier}/backups`, {}],
    ["PUT", "/api/preferences", { language: "en" }],
    ["POST", "/api/payment-method/update", undefined],
    ["PUT", "/api/billing-profile", { name: "Forged", address: { line1: "1 rue X", postcode: "75001", city: "Paris", country: "FR" } }],
    ["POST", `/api/subscriptions/${subscriptionId}/pay`, undefined],
    ["POST", `/api/subscriptions/${subscriptionId}/renew`, undefined],
    ["POST", `/api/subscriptions/${subscriptionId}/cancel`, undefined],
    ["POST", `/api/subscriptions/${subscriptionId}/withdraw`, undefined],
    ["POST", "/api/auth/logout-all", undefined],
    ["POST", "/api/auth/logout", undefined]
  ]

  it.each(FOREIGN_PAGES)("from %s, every state-changing route answers 403 CSRF_REJECTED and nothing changes", async (_label, headers) => {
    for (const [method, path, json] of stateChanging()) {
      const reply = await fromPage(method, path, headers, json)
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(403)
      expect(errorCode(reply, 403), `${method} ${path}`).toBe("CSRF_REJECTED")
      expect(reply.setCookies, `${method} ${path}`).toEqual([])
    }
    expect(expectBody(await owner.get(`/api/vps/${vpsId}`), 200, Envelopes.vps).vps.status).toBe("running")
    expect(expectBody(await owner.get(`/api/vps/${vpsId}/snapshots`), 200, Envelopes.snapshots).snapshots).toEqual([])
    expect((await owner.get("/api/auth/me")).body).toMatchObject({ user: { language: "fr" } })
    // Neither paid, renewed, cancelled nor withdrawn from.
    expect(expectBody(await owner.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions.find((s) => s.id === subscriptionId))
      .toEqual(subscriptionBefore)
    const files = await owner.get(`/api/client/servers/${identifier}/files/list?directory=%2F`)
    expect(files.status).toBe(200)
    expect(files.text).not.toContain("forged.txt")
  })

  it("the panel's own pages, and clients that are no browser page, are let through", async () => {
    const own = await fromPage("POST", `/api/vps/${vpsId}/snapshots`, { origin: PANEL_ORIGIN }, { name: "from-panel" })
    expect(own.status, own.text).toBe(201)
    const sameOrigin = await fromPage("PUT", "/api/preferences", { "sec-fetch-site": "same-origin" }, { theme: "dark" })
    expect(sameOrigin.status).toBe(204)
    // curl and scripts send neither header: a session cookie they hold is theirs (no page can send such a request).
    const script = await owner.request("POST", `/api/client/servers/${identifier}/files/write?file=%2Fscripted.txt`, {
      body: "written by a script",
      headers: { "content-type": "text/plain" }
    })
    expect(script.status, script.text).toBe(204)
  })
})

describe("the headers of the answers", () => {
  const expectNoStore = (reply: Reply, what: string) => {
    expect(reply.headers.get("cache-control"), what).toBe("no-store")
    expect(reply.headers.get("x-content-type-options"), what).toBe("nosniff")
  }

  it("the one-time root password and the console token are never stored by a cache", async () => {
    expect(expectBody(passwordReply, 200, OrderView).rootPassword).toBeDefined()
    expectNoStore(passwordReply, "GET /api/orders/:id with the root password")
    const token = await owner.get(`/api/client/servers/${identifier}/websocket`)
    expectBody(token, 200, GameEnvelopes.websocket)
    expectNoStore(token, "GET /api/client/servers/:id/websocket")
  })

  it("every authenticated answer is no-store: the API, the relay, its downloads, and their errors", async () => {
    for (const path of ["/api/auth/me", "/api/vps", `/api/vps/${vpsId}`, "/api/subscriptions", "/api/subscriptions/renewals", "/api/game-servers", "/api/payments", "/api/invoices", "/api/billing-profile", `/api/client/servers/${identifier}/files/list?directory=%2F`]) {
      const reply = await owner.get(path)
      expect(reply.status, path).toBe(200)
      expectNoStore(reply, path)
    }
    expectNoStore(await new Browser(server.url).get("/api/auth/me"), "401 of /api/auth/me")
    expectNoStore(await owner.get("/api/vps/00000000-0000-4000-8000-000000000000"), "404 of /api/vps/:id")
    expectNoStore(await owner.get("/api/nowhere"), "404 of an unknown API route")
    expectNoStore(await owner.get("/api/payment-method"), "the saved card (or its 404)")
  })

  it("the public plan list may be cached but when priced for a signed-in customer; every answer is nosniff", async () => {
    expect((await owner.get("/api/plans")).headers.get("cache-control")).toBe("no-store")
    // Not scanned: the reference page's bundled script happens to contain the scanner's markers.
    const visitor = new Browser(server.url)
    const plans = await visitor.get("/api/plans")
    expect(plans.headers.get("cache-control")).not.toBe("no-store")
    expect(plans.headers.get("vary")).toBe("cookie")
    for (const path of ["/api/plans", "/healthz", "/readyz", "/openapi.json", "/docs", "/", "/vps/anything", "/assets/missing.js"]) {
      expect((await visitor.get(path)).headers.get("x-content-type-options"), path).toBe("nosniff")
    }
  })

  it("the reference page carries its Content-Security-Policy; HSTS is for production only", async () => {
    const docs = await new Browser(server.url).get("/docs")
    expect(docs.headers.get("content-security-policy")).toMatch(/^default-src 'none'; script-src 'sha256-[^']+' 'sha256-[^']+' 'report-sample';/)
    expect(docs.headers.get("strict-transport-security")).toBeNull()
  })
})

describe("in production", () => {
  let production: Awaited<ReturnType<typeof startTestServer>>
  beforeAll(async () => {
    production = await startTestServer({ production: true, nodeEnv: "production" })
  }, 60_000)
  afterAll(() => production?.stop())

  it("every answer tells browsers to use HTTPS only, for a year, subdomains included", async () => {
    const browser = new Browser(production.url)
    for (const [method, path] of [["GET", "/healthz"], ["GET", "/api/plans"], ["GET", "/api/auth/me"], ["GET", "/docs"], ["POST", "/api/auth/login"]] as const) {
      const reply = await browser.request(method, path, method === "POST" ? { json: {} } : {})
      expect(reply.headers.get("strict-transport-security"), `${method} ${path}`).toBe("max-age=31536000; includeSubDomains")
    }
  })
})
