// The whole application outside sandbox mode (SANDBOX=false), over real HTTP on a real database: no simulated
// upstream starts, nothing is for sale until a real upstream is registered (a former sandbox's cluster and panel
// never sell), an order is refused before anything is written, and mail goes out by SMTP, never into the outbox.
import { Effect, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SANDBOX_CLUSTER, SANDBOX_PANEL, SandboxPanel } from "../../app/sandbox/SandboxUpstreams.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { Browser } from "../support/browser.ts"
import { decodeQuotedPrintable, type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { sandboxStripe, startTestServer } from "../support/testServer.ts"
import { fillBillingProfile } from "../support/checkout.ts"

let smtp: SmtpSink
let server: Awaited<ReturnType<typeof startTestServer>>

beforeAll(async () => {
  smtp = await startSmtpSink()
  server = await startTestServer({
    sandbox: false,
    smtpUrl: Option.some(Redacted.make(`smtp://127.0.0.1:${smtp.port}`)),
    registryProvider: "recherche-entreprises",
    vatRegistryProvider: "vies",
    // Nothing here asks the registry (personal accounts only); an unroutable one keeps the test off the network.
    rechercheEntreprisesUrl: new URL("http://127.0.0.1:9")
  })
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await smtp?.close()
})

const run = <A, E>(effect: Effect.Effect<A, E, Catalog | SqlClient.SqlClient | SandboxPanel>) =>
  server.runtime.runPromise(effect)

const count = (table: string) =>
  run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))).then(
    (rows) => rows[0]?.n
  )

const signedIn = async () => {
  const browser = new Browser(server.url)
  const email = `nosandbox.${Date.now()}.${Math.floor(performance.now())}@example.com`
  const password = "correct horse battery"
  const account = { email, password, accountType: "personal", firstName: "Ada", lastName: "Lovelace", language: "en" }
  expect((await browser.post("/api/auth/register", account)).status).toBe(201)
  expect((await browser.post("/api/auth/login", { email, password })).status).toBe(200)
  await fillBillingProfile(browser)
  return { browser, email }
}

describe("outside sandbox mode", () => {
  it("starts no simulated upstream and registers nothing: the catalog is empty, nothing is for sale", async () => {
    expect(Option.isNone(await run(SandboxPanel))).toBe(true)
    expect(await run(Effect.flatMap(Catalog, (c) => Effect.all([c.clusters, c.panels, c.allPlans])))).toEqual([[], [], []])
    const plans = await fetch(`${server.url}/api/plans`)
    expect(plans.status).toBe(200)
    expect(await plans.json()).toEqual({ audience: "anonymous", plans: [] })
  })

  it("says so publicly on GET /api/platform", async () => {
    const reply = await fetch(`${server.url}/api/platform`)
    expect(reply.status).toBe(200)
    expect(await reply.json()).toEqual({ sandbox: false })
  })

  it("documents GET /api/platform in the OpenAPI document", async () => {
    const openapi: unknown = await (await fetch(`${server.url}/openapi.json`)).json()
    expect(openapi).toMatchObject({
      paths: { "/api/platform": { get: { summary: "How this platform runs" } } },
      components: { schemas: { Platform: { properties: { sandbox: { type: "boolean" } } } } }
    })
  })

  it("starts no sandbox Stripe", async () => {
    await expect(server.runtime.runPromise(sandboxStripe)).rejects.toThrow(/not in sandbox mode/)
  })

  it("sells a registered upstream's plans, never those of a former sandbox's cluster or panel", async () => {
    await run(Effect.gen(function*() {
      const catalog = yield* Catalog
      const tls = { ca: null, fingerprint: null, insecure: false }
      for (const name of [SANDBOX_CLUSTER, "pve"]) {
        yield* catalog.upsertCluster({ name, url: "https://127.0.0.1:9", username: "root@pam", tokenId: null, tls })
      }
      yield* catalog.upsertTemplate({ id: "debian-12", name: "Debian 12", cluster: SANDBOX_CLUSTER, node: "pve1", vmid: 9000 })
      yield* catalog.upsertTemplate({ id: "alma-9", name: "AlmaLinux 9", cluster: "pve", node: "pve1", vmid: 9001 })
      yield* catalog.upsertPanel({ name: SANDBOX_PANEL, url: "https://127.0.0.1:9" })
      const vps = { kind: "vps" as const, name: "VPS", priceCents: 500, vcpu: 1, ramMiB: 1024, diskGiB: 20, snapshotLimit: 2 }
      yield* catalog.upsertPlan({ ...vps, id: "vps-s", templates: ["debian-12"] })
      yield* catalog.upsertPlan({ ...vps, id: "vps-real", templates: ["alma-9"] })
      yield* catalog.upsertPlan({
        kind: "game", id: "mc-2g", name: "Minecraft", priceCents: 600, panel: SANDBOX_PANEL, eggId: 5,
        dockerImage: "ghcr.io/pterodactyl/yolks:java_17", memoryMiB: 2048, diskMiB: 10240, cpuPercent: 200, io: 500,
        databases: 0, backups: 2, allocations: 1, environment: {}, userVariables: []
      })
    }))
    const reply = await fetch(`${server.url}/api/plans`)
    const body = (await reply.json()) as { plans: ReadonlyArray<{ id: string }> }
    expect(body.plans.map((p) => p.id)).toEqual(["vps-real"])
  })

  it("refuses an order with 503 PAYMENTS_NOT_CONFIGURED before writing anything", async () => {
    const { browser } = await signedIn()
    const before = await Promise.all(["orders", "subscriptions", "ledger_entries"].map(count))
    for (const planId of ["vps-real", "vps-s", "no-such-plan"]) {
      const reply = await browser.post("/api/orders", {
        planId,
        expressStartConsent: true,
        options: { templateId: "alma-9", hostname: "web-1", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG9vb28= a@b" }
      })
      expect(reply.status, reply.text).toBe(503)
      expect(reply.body).toMatchObject({ error: { code: "PAYMENTS_NOT_CONFIGURED" } })
    }
    expect(before).toEqual([0, 0, 0])
    expect(await Promise.all(["orders", "subscriptions", "ledger_entries"].map(count))).toEqual([0, 0, 0])
  })

  it("mails a reset link by SMTP and keeps none in the outbox table", async () => {
    const { browser, email } = await signedIn()
    expect((await browser.post("/api/auth/forgot-password", { email })).status).toBe(202)
    const deadline = Date.now() + 10_000
    while (!smtp.received.some((m) => m.includes(email)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const mail = decodeQuotedPrintable(smtp.received.find((m) => m.includes(email)) ?? "")
    expect(mail).toMatch(/reset-password\?token=[0-9a-f]{64}/)
    expect(await count("mail_outbox")).toBe(0)
  })
})
