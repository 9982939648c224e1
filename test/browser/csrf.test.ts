// Cross-site request forgery from the same site, in Chromium: the customer is signed in to the panel, then opens a
// page of the same site — another port of the panel's host, or a sibling subdomain, where a host's customers may
// run pages. The cookie is SameSite=Lax, so the browser sends it along; the page's fetches (credentials included;
// requests that need no preflight, in cors and no-cors mode) and its form posts try to stop the VPS, create a
// snapshot and log out everywhere. Afterwards the API shows that nothing changed. (Chromium is launched here rather than through
// useChromium: these pages are meant to live on another origin than the server's.)
import { createServer, type Server } from "node:http"
import { type Browser as Chromium, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CHROMIUM } from "../support/chromium.ts"
import { startTestServer } from "../support/testServer.ts"
import { Envelopes, expectBody, leakScanner, provisionedVps, ScannedBrowser } from "../support/vpsHttp.ts"
import { fillBillingProfile } from "../support/checkout.ts"

/** Every *.zh.test name is this machine to Chromium: panel.zh.test is ours, customer.zh.test a sibling. */
const SITE = "zh.test"

let server: Awaited<ReturnType<typeof startTestServer>>
let panelOrigin: string
let attacker: Server
let attackerPort: number
let browser: Chromium | undefined
let vpsId: string
/** The API as the customer, in a session of its own (log out everywhere would end it too). */
let api: ScannedBrowser
const customer = { email: `csrf.${Date.now()}@example.com`, password: "a csrf test password" }

/** Listens on a loopback port the system picks; resolves with it. */
const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    }))

/** The attacker's page: every forgery at once, then `window.forged` says how each fetch ended. */
const attackPage = (target: string, vps: string) => `<!doctype html><html><body>
<iframe name="sink-stop"></iframe><iframe name="sink-snapshot"></iframe><iframe name="sink-logout"></iframe>
<form id="stop" method="POST" action="${target}/api/vps/${vps}/stop" target="sink-stop"></form>
<form id="logout" method="POST" action="${target}/api/auth/logout-all" target="sink-logout"></form>
<form id="snapshot" method="POST" action="${target}/api/vps/${vps}/snapshots" enctype="text/plain" target="sink-snapshot">
  <input name='{"name":"forged-form","x":"' value='"}'>
</form>
<script>
  const options = { method: "POST", credentials: "include", mode: "no-cors" }
  window.forged = Promise.allSettled([
    // In cors mode a POST without a body needs no preflight either: it is sent, only its answer is hidden.
    fetch("${target}/api/vps/${vps}/stop", { method: "POST", credentials: "include" }),
    fetch("${target}/api/vps/${vps}/stop", options),
    fetch("${target}/api/vps/${vps}/snapshots", { ...options, headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "forged" }) }),
    fetch("${target}/api/vps/${vps}/snapshots", { ...options, headers: { "content-type": "text/plain" }, body: JSON.stringify({ name: "forged-text" }) }),
    fetch("${target}/api/auth/logout-all", options)
  ]).then((all) => all.map((r) => r.status))
  for (const id of ["stop", "snapshot", "logout"]) document.getElementById(id).submit()
</script></body></html>`

beforeAll(async () => {
  attacker = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    res.end(attackPage(panelOrigin, vpsId))
  })
  attackerPort = await listen(attacker)
  // The panel on a host name of the site, on a port of its own.
  const probe = createServer()
  const port = await listen(probe)
  await new Promise((resolve) => probe.close(resolve))
  panelOrigin = `http://panel.${SITE}:${port}`
  server = await startTestServer({ port, publicUrl: panelOrigin, sandboxTaskSpeed: "instant" })
  api = new ScannedBrowser(server.url, await leakScanner(server))
  const registered = await api.post("/api/auth/register", { ...customer, accountType: "personal", firstName: "Alan", lastName: "Turing" })
  expect(registered.status, registered.text).toBe(201)
  expect((await api.post("/api/auth/login", customer)).status).toBe(200)
  await fillBillingProfile(api)
  vpsId = (await provisionedVps(api, "csrf-target")).vpsId
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-background-networking", `--host-resolver-rules=MAP *.${SITE} 127.0.0.1`]
  })
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => attacker?.close(resolve))
  await server?.stop()
}, 30_000)

/** A page signed in to the panel in a fresh browser context (the panel's own login call, from the panel's origin). */
const signedInPage = async (): Promise<Page> => {
  const context = await browser!.newContext()
  const page = await context.newPage()
  await page.goto(`${panelOrigin}/healthz`)
  const status = await page.evaluate(async (body) =>
    (await fetch("/api/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body })).status, JSON.stringify(customer))
  expect(status).toBe(200)
  return page
}

const meStatus = (page: Page) => page.evaluate(async () => (await fetch("/api/auth/me")).status)

describe("a page of the same site, on another origin, tries to act for the signed-in customer", () => {
  it.each([
    ["another port of the panel's host", () => `http://panel.${SITE}:${attackerPort}/`],
    ["a sibling subdomain", () => `http://customer.${SITE}:${attackerPort}/`]
  ])("from %s: the VPS keeps running, no snapshot is made, and no session ends", async (_label, url) => {
    const page = await signedInPage()
    const sent: Array<string> = []
    const answered: Array<number> = []
    const isForged = (request: { url(): string; method(): string }) => request.url().startsWith(panelOrigin) && request.method() === "POST"
    page.context().on("request", (request) => {
      if (isForged(request)) sent.push(request.url())
    })
    // Chromium shows the network's answer of each request but the cors-mode fetch's (refused by CORS after it).
    page.context().on("response", (response) => {
      if (isForged(response.request())) answered.push(response.status())
    })
    const attack = await page.context().newPage()
    await attack.goto(url())
    // Opaque (no-cors) answers: the page learns nothing; it only waits for all of them.
    await attack.evaluate("window.forged")
    await expect.poll(() => answered.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(7)
    expect(sent.length).toBe(8)
    // The forged requests reached the server (the cookie went along) and were refused there.
    expect(new Set(answered)).toEqual(new Set([403]))

    expect(expectBody(await api.get(`/api/vps/${vpsId}`), 200, Envelopes.vps).vps.status).toBe("running")
    expect(expectBody(await api.get(`/api/vps/${vpsId}/snapshots`), 200, Envelopes.snapshots).snapshots).toEqual([])
    expect((await api.get("/api/auth/me")).status).toBe(200)
    expect(await meStatus(page)).toBe(200)
    await page.context().close()
  }, 60_000)

  it("the panel's own origin still changes things (the same calls, made from the panel)", async () => {
    const page = await signedInPage()
    const status = await page.evaluate(async (vps) =>
      (await fetch(`/api/vps/${vps}/snapshots`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "from-panel" })
      })).status, vpsId)
    expect(status).toBe(201)
    const snapshots = expectBody(await api.get(`/api/vps/${vpsId}/snapshots`), 200, Envelopes.snapshots).snapshots
    expect(snapshots.map((s) => s.name)).toEqual(["from-panel"])
    await page.context().close()
  }, 60_000)
})
