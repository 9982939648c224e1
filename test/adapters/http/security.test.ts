// The security middleware on a router of its own: which state-changing requests pass the Origin check (ours, none
// from a browser page, an exempt route) and which are refused 403 CSRF_REJECTED before their handler runs, and the
// headers every answer gets (no-store on the API but its public list, nosniff, HSTS only over HTTPS, the reference
// page's policy allowing exactly its own inline scripts).
import { createHash } from "node:crypto"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { afterAll, describe, expect, it } from "vitest"
import { docsPolicy, isSameOriginOrNotBrowser, securityMiddleware } from "../../../adapters/http/security.ts"

const ORIGIN = "https://panel.example"
const WEBHOOK = "/api/payments/stripe/webhook"

let changes = 0
const DOCS = "<!doctype html><html><body><script>window.boot = 1</script><p>x</p><script>\nstart()\n</script></body></html>"

const app = (secure: boolean) =>
  HttpRouter.toWebHandler(
    Layer.mergeAll(
      HttpRouter.add("POST", "/api/vps/:id/stop", Effect.sync(() => (changes++, HttpServerResponse.empty({ status: 204 })))),
      HttpRouter.add("POST", WEBHOOK, Effect.sync(() => (changes++, HttpServerResponse.empty({ status: 204 })))),
      HttpRouter.add("GET", "/api/auth/me", Effect.succeed(HttpServerResponse.jsonUnsafe({ user: {} }))),
      HttpRouter.add("GET", "/api/plans", Effect.succeed(HttpServerResponse.jsonUnsafe({ plans: [] }))),
      HttpRouter.add("GET", "/docs", Effect.succeed(HttpServerResponse.html(DOCS))),
      HttpRouter.add("GET", "/healthz", Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "ok" }))),
      securityMiddleware({ secureCookies: secure, trustProxy: false, maxBodyBytes: 1024 }, {
        allowedOrigin: ORIGIN,
        csrfExempt: [`POST ${WEBHOOK}`]
      })
    ).pipe(Layer.provide(HttpServer.layerServices)),
    { disableLogger: true }
  )

const plain = app(false)
const https = app(true)
afterAll(async () => {
  await plain.dispose()
  await https.dispose()
})

const send = (method: string, path: string, headers: Record<string, string> = {}, handler = plain) =>
  handler.handler(new Request(`${ORIGIN}${path}`, { method, headers }))

describe("the Origin check of state-changing requests", () => {
  it.each([
    ["a sibling subdomain", { origin: "https://customer.panel.example" }],
    ["another port of the same host", { origin: "https://panel.example:8443" }],
    ["plain http on the same host", { origin: "http://panel.example" }],
    ["an opaque origin", { origin: "null" }],
    ["a same-site page without Origin", { "sec-fetch-site": "same-site" }],
    ["a cross-site page without Origin", { "sec-fetch-site": "cross-site" }],
    ["our Origin is not enough when another is claimed first", { origin: "https://evil.example", "sec-fetch-site": "same-origin" }]
  ])("refuses %s with 403 CSRF_REJECTED, before the handler runs", async (_label, headers) => {
    const before = changes
    const reply = await send("POST", "/api/vps/1/stop", headers)
    expect(reply.status).toBe(403)
    expect(await reply.json()).toMatchObject({ error: { code: "CSRF_REJECTED" } })
    expect(reply.headers.get("cache-control")).toBe("no-store")
    expect(changes).toBe(before)
  })

  it.each([
    ["our own Origin", { origin: ORIGIN }],
    ["a same-origin fetch without Origin", { "sec-fetch-site": "same-origin" }],
    ["a request the user made themselves", { "sec-fetch-site": "none" }],
    ["a client that is no browser page (neither header: curl, scripts, server-to-server)", {}]
  ])("lets %s through", async (_label, headers) => {
    const before = changes
    expect((await send("POST", "/api/vps/1/stop", headers)).status).toBe(204)
    expect(changes).toBe(before + 1)
  })

  it("never checks a safe method, whatever the page", async () => {
    expect((await send("GET", "/api/auth/me", { origin: "https://evil.example", "sec-fetch-site": "cross-site" })).status).toBe(200)
  })

  it("lets a foreign origin call a route on the exemption list, and only that method and path", async () => {
    expect((await send("POST", WEBHOOK, { origin: "https://stripe.example" })).status).toBe(204)
    expect((await send("POST", `${WEBHOOK}?attempt=2`, { "sec-fetch-site": "cross-site" })).status).toBe(204)
    expect((await send("POST", "/api/vps/1/stop", { origin: "https://stripe.example" })).status).toBe(403)
  })

  it("is the same decision as the function it exports", () => {
    const options = { allowedOrigin: ORIGIN, csrfExempt: [] }
    expect(isSameOriginOrNotBrowser("DELETE", "/x", { origin: ORIGIN }, options)).toBe(true)
    expect(isSameOriginOrNotBrowser("PATCH", "/x", { origin: `${ORIGIN}/` }, options)).toBe(false)
    expect(isSameOriginOrNotBrowser("PUT", "/x", { "sec-fetch-site": "same-site" }, options)).toBe(false)
    expect(isSameOriginOrNotBrowser("OPTIONS", "/x", { origin: "https://evil.example" }, options)).toBe(true)
  })
})

describe("the headers of every answer", () => {
  it("an API answer is no-store, the public plan list is not but for a signed-in visitor; every answer is nosniff", async () => {
    const me = await send("GET", "/api/auth/me")
    expect(me.headers.get("cache-control")).toBe("no-store")
    expect(me.headers.get("x-content-type-options")).toBe("nosniff")
    const plans = await send("GET", "/api/plans")
    expect(plans.headers.get("cache-control")).toBeNull()
    expect(plans.headers.get("vary")).toBe("cookie")
    expect(plans.headers.get("x-content-type-options")).toBe("nosniff")
    // Priced for the customer the session cookie names: theirs alone.
    const theirs = await send("GET", "/api/plans", { cookie: "zh_lang=fr; zh_token=abc" })
    expect(theirs.headers.get("cache-control")).toBe("no-store")
    expect((await send("GET", "/api/plans", { cookie: "zh_lang=fr" })).headers.get("cache-control")).toBeNull()
    const missing = await send("GET", "/api/nothing-here")
    expect(missing.headers.get("cache-control")).toBe("no-store")
    expect(missing.headers.get("x-content-type-options")).toBe("nosniff")
  })

  it("HSTS only when served over HTTPS (production)", async () => {
    expect((await send("GET", "/healthz")).headers.get("strict-transport-security")).toBeNull()
    expect((await send("GET", "/healthz", {}, https)).headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains")
    expect((await send("POST", "/api/vps/1/stop", { origin: "null" }, https)).headers.get("strict-transport-security")).toBe(
      "max-age=31536000; includeSubDomains"
    )
  })

  it("the reference page's policy allows its two inline scripts by hash, and nothing else runs", async () => {
    const reply = await send("GET", "/docs")
    const policy = reply.headers.get("content-security-policy") ?? ""
    const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`
    expect(policy).toContain(`script-src ${hash("window.boot = 1")} ${hash("\nstart()\n")} 'report-sample';`)
    expect(policy).toContain("default-src 'none'")
    expect(policy).not.toContain("unsafe-eval")
    expect(policy).not.toMatch(/script-src[^;]*unsafe-inline/)
    expect(docsPolicy(DOCS)).toBe(policy)
    expect((await send("GET", "/healthz")).headers.get("content-security-policy")).toBeNull()
  })
})
