// GET /metrics over real HTTP: the bearer token (none configured: 404, as if the route did not exist; a wrong or
// missing one: 401), Prometheus text, and a request seen in the latency histogram under its route pattern and status.
import { Effect, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import { sample } from "../support/prometheus.ts"
import { openGameConsole, provisionedGame, sandboxesLeakScanner } from "../support/gameHttp.ts"
import { errorCode, signedInCustomer } from "../support/vpsHttp.ts"

const TOKEN = "metrics-token-of-the-test-9f1c"
let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  // The alert pass (which reads the panels' free allocations) every 5 s.
  server = await startTestServer({ metricsToken: Option.some(Redacted.make(TOKEN)), alertCheckSeconds: 5 })
}, 60_000)
afterAll(() => server?.stop())

const scrape = async (token = TOKEN) => new Browser(server.url).request("GET", "/metrics", { headers: { authorization: `Bearer ${token}` } })

describe("GET /metrics", () => {
  it("refuses a missing or wrong token with 401, and answers Prometheus text with the right one", async () => {
    const anonymous = await new Browser(server.url).get("/metrics")
    expect(errorCode(anonymous, 401)).toBe("UNAUTHENTICATED")
    expect(anonymous.headers.get("www-authenticate")).toBe("Bearer")
    expect((await scrape("metrics-token-of-the-test-9f1d")).status).toBe(401)
    expect((await scrape(`${TOKEN}x`)).status).toBe(401)
    const reply = await scrape()
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toContain("text/plain; version=0.0.4")
    expect(reply.text).toContain("# TYPE http_request_duration_seconds histogram")
  })

  it("counts a request under its route pattern and status, never its path", async () => {
    const labels = { method: "GET", route: "/api/orders/:id", status: "404" }
    const before = sample((await scrape()).text, "http_request_duration_seconds_count", labels) ?? 0
    const customer = await person(server)
    for (let i = 0; i < 3; i++) {
      expect((await customer.browser.get(`/api/orders/00000000-0000-4000-8000-00000000000${i}`)).status).toBe(404)
    }
    const text = (await scrape()).text
    expect(sample(text, "http_request_duration_seconds_count", labels)).toBe(before + 3)
    expect(sample(text, "http_request_duration_seconds_bucket", { ...labels, le: "+Inf" })).toBe(before + 3)
    expect(text).not.toContain("00000000-0000-4000-8000-000000000001")
    // No route at all (the panel's fallback serves GET only): one bounded label, whatever the path.
    const unmatched = await new Browser(server.url).request("DELETE", "/api/no/such/path/anywhere")
    expect(unmatched.status).toBe(404)
    const after = (await scrape()).text
    expect(sample(after, "http_request_duration_seconds_count", { method: "DELETE", route: "unmatched", status: "404" }))
      .toBeGreaterThanOrEqual(1)
    expect(after).not.toContain("/api/no/such")
  })

  it("shows a provisioning's steps, its panel calls, and an open console with the bytes it relayed", async () => {
    const browser = await signedInCustomer(server, await sandboxesLeakScanner(server))
    const { gameServer } = await provisionedGame(browser)
    const console = await openGameConsole(server, browser, gameServer.identifier)
    try {
      const text = (await scrape()).text
      expect(sample(text, "payment_outcomes_total", { kind: "order", outcome: "succeeded" })).toBeGreaterThanOrEqual(1)
      expect(sample(text, "workflow_step_outcomes_total", { outcome: "success" })).toBeGreaterThan(0)
      expect(sample(text, "upstream_request_duration_seconds_count", { upstream: "pterodactyl", outcome: "ok" })).toBeGreaterThan(0)
      expect(sample(text, "consoles_open", { kind: "game" })).toBe(1)
      console.send("auth", "not a token")
      await expect.poll(async () => sample((await scrape()).text, "console_relayed_bytes_total", { kind: "game", direction: "to_upstream" }))
        .toBeGreaterThan(0)
    } finally {
      console.close()
    }
    await expect.poll(async () => sample((await scrape()).text, "consoles_open", { kind: "game" })).toBe(0)
  })

  it("records the order placed and its payment received in the customer's audit trail", async () => {
    const browser = await signedInCustomer(server, await sandboxesLeakScanner(server))
    const { order } = await provisionedGame(browser)
    const rows = await server.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ readonly action: string; readonly actor_role: string; readonly kind: string }>`
        SELECT action, actor_role, details->>'kind' AS kind FROM audit_events
        WHERE target_type = 'order' AND target_id = ${order.id} ORDER BY id`))
    expect(rows.map((r) => [r.action, r.actor_role, r.kind])).toEqual([
      ["order.placed", "customer", "game"],
      ["payment.succeeded", "system", "order"]
    ])
  })

  it("shows each panel's free allocations, read by the alert pass", async () => {
    await expect.poll(async () => (await scrape()).text, { timeout: 20_000, interval: 500 })
      .toMatch(/^panel_allocations_free\{panel="[^"]+"\} [1-9]\d*$/m)
  })

  it("reads the IP pools' free addresses at scrape time", async () => {
    const text = (await scrape()).text
    expect(text).toMatch(/^ip_pool_free_addresses\{pool="[^"]+"\} \d+$/m)
  })
})

describe("GET /metrics without METRICS_TOKEN", () => {
  let bare: Awaited<ReturnType<typeof startTestServer>>
  beforeAll(async () => {
    bare = await startTestServer()
  }, 60_000)
  afterAll(() => bare?.stop())

  it("answers 404, as for a route that does not exist, whatever the token", async () => {
    const none = await new Browser(bare.url).get("/metrics")
    const guessed = await new Browser(bare.url).request("GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } })
    const missing = await new Browser(bare.url).get("/api/no-such-route")
    expect(errorCode(none, 404)).toBe("NOT_FOUND")
    expect(guessed.text).toBe(missing.text)
    expect(none.text).toBe(missing.text)
  })
})
