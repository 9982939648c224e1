// Game servers when things go wrong, end to end against the sandbox panel: 20 concurrent orders for 10
// allocations, an install that never finishes, a throttled panel (429 with our Retry-After, never a hang), a failing
// panel (our 503, never its words), downloads dropped by the customer or cut by the node, bad order options, and our
// console token expiring and renewed on the socket.
import { get, type ClientRequest, type IncomingMessage } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { SandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { followOrder, gameLeakScanner, GameEnvelopes, openGameConsole, orderGame, provisionedGame, sandboxPanelOf } from "../support/gameHttp.ts"
import { startTestServer } from "../support/testServer.ts"
import { Envelopes, errorCode, expectBody, type LeakScanner, type ScannedBrowser, signedInCustomer, type TestServer, waitFor } from "../support/vpsHttp.ts"

/** Starts one of our streamed downloads and resolves with its head; the caller reads (or drops) the body. */
const startDownload = (browser: ScannedBrowser, identifier: string, file: string) =>
  new Promise<{ readonly request: ClientRequest; readonly response: IncomingMessage }>((resolve, reject) => {
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    const url = `${browser.baseUrl}/api/client/servers/${identifier}/files/download/stream?file=${encodeURIComponent(file)}`
    const request = get(url, { headers: { cookie } }, (response) => {
      browser.scan(`download head (${response.statusCode})`, JSON.stringify(response.headers))
      resolve({ request, response })
    })
    request.once("error", reject)
  })

/** Reads a body to its end or its failure: the bytes received and whether it ended complete. */
const drain = (response: IncomingMessage) =>
  new Promise<{ readonly bytes: number; readonly complete: boolean; readonly intact: boolean }>((resolve) => {
    let bytes = 0
    let intact = true
    response.on("data", (chunk: Buffer) => {
      // The sandbox's synthetic files: byte i is i mod 251.
      if (chunk[0] !== bytes % 251) intact = false
      bytes += chunk.byteLength
    })
    response.once("end", () => resolve({ bytes, complete: response.complete, intact }))
    response.once("error", () => resolve({ bytes, complete: false, intact }))
  })

describe("game servers under concurrent orders", () => {
  let server: TestServer
  let panel: SandboxPterodactyl
  let scan: LeakScanner

  beforeAll(async () => {
    server = await startTestServer()
    panel = await sandboxPanelOf(server)
    scan = gameLeakScanner(panel)
  }, 60_000)
  afterAll(() => server?.stop())

  it("20 concurrent orders on a node with 10 free allocations: 10 servers, the others refused or failed cleanly, no allocation twice", async () => {
    const customers = await Promise.all(Array.from({ length: 20 }, (_, i) => signedInCustomer(server, scan, `rush${i}`)))
    // 1 GiB each: the node's memory holds 16, its allocations 10. An order placed once the ten are claimed is refused
    // before its checkout; one placed before fails at its step 3, refunded.
    const results = await Promise.all(customers.map(async (browser) => {
      const reply = await browser.post("/api/orders", { planId: "bedrock-1g", expressStartConsent: true, options: {} })
      if (reply.status === 409) return { refused: errorCode(reply, 409) }
      return followOrder(browser, expectBody(reply, 201, Envelopes.order).order)
    }))
    const completed = results.flatMap((r) => "order" in r && r.order.status === "completed" ? [r] : [])
    const failed = results.flatMap((r) => "order" in r && r.order.status === "failed" ? [r] : [])
    const refused = results.flatMap((r) => "refused" in r ? [r.refused] : [])
    expect(completed.length).toBe(10)
    expect(failed.length + refused.length).toBe(10)
    expect(new Set(refused)).toEqual(new Set(refused.length === 0 ? [] : ["PLAN_SOLD_OUT"]))
    for (const f of failed) expect(f.order.failureReason).toContain("No game server address is free")
    const onPanel = panel.control.servers()
    expect(onPanel.length).toBe(10)
    expect(new Set(onPanel.map((s) => s.allocation)).size).toBe(10)
    // The failed orders were refunded and left nothing on the panel.
    const orderIds = new Set(failed.map((f) => f.order.id))
    expect(onPanel.some((s) => s.external_id !== null && orderIds.has(s.external_id))).toBe(false)
  }, 60_000)

  it("with every allocation held, the next game order is refused at once: 409 PLAN_SOLD_OUT, no order, nothing charged", async () => {
    const browser = await signedInCustomer(server, scan, "late")
    const reply = await browser.post("/api/orders", { planId: "bedrock-1g", expressStartConsent: true, options: {} })
    expect(errorCode(reply, 409)).toBe("PLAN_SOLD_OUT")
    const payments = await browser.get("/api/payments")
    expect([payments.status, payments.body]).toEqual([200, { payments: [] }])
    expect(expectBody(await browser.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions).toEqual([])
    expect(panel.control.servers().length).toBe(10)
  }, 30_000)

})

describe("game servers under faults", () => {
  let server: TestServer
  let panel: SandboxPterodactyl
  let scan: LeakScanner

  beforeAll(async () => {
    // A tiny install timeout (about a second) and a console token of three seconds, to see both end.
    server = await startTestServer({ gameInstallTimeoutMinutes: 0.02, gameConsoleTokenMinutes: 0.05 })
    panel = await sandboxPanelOf(server)
    scan = gameLeakScanner(panel)
  }, 60_000)
  afterAll(() => server?.stop())

  it("an install that never finishes times out: the order fails and the panel server is deleted", async () => {
    const browser = await signedInCustomer(server, scan, "patient")
    panel.control.setInstallOutcome("default", "hang")
    try {
      const { order } = await orderGame(browser)
      expect(order.status).toBe("failed")
      expect(order.failureReason).toContain("took too long")
      // Refunded and told first; the half-built server is deleted right after.
      await waitFor("the panel server's deletion", async () =>
        panel.control.servers().some((s) => s.external_id === order.id) ? undefined : true, 10_000)
    } finally {
      panel.control.setInstallOutcome("default", "succeed")
    }
  }, 60_000)

  describe("on a running server", () => {
    /** The panel's Retry-After when it throttles us: short, as the window is waited out before the next test. */
    const THROTTLE_SECONDS = 3
    let browser: ScannedBrowser
    let identifier: string

    beforeAll(async () => {
      browser = await signedInCustomer(server, scan, "owner")
      identifier = (await provisionedGame(browser)).gameServer.identifier
    }, 30_000)

    it("a throttled panel gets the customer a 429 with our Retry-After at once, and the next calls wait it out", async () => {
      panel.control.throttleNext({ times: 1, retryAfterSeconds: THROTTLE_SECONDS })
      const first = await browser.get(`/api/client/servers/${identifier}/files/list?directory=%2F`)
      expect(errorCode(first, 429)).toBe("GAME_PANEL_BUSY")
      expect(Number(first.headers.get("retry-after"))).toBeGreaterThan(0)
      const seen = panel.control.requests().length
      // Within the window the panel is not asked again: the shared bucket is left to recover.
      const second = await browser.get(`/api/client/servers/${identifier}/files/list?directory=%2F`)
      expect(errorCode(second, 429)).toBe("GAME_PANEL_BUSY")
      expect(panel.control.requests().length).toBe(seen)
    })

    it("a failing panel gets the customer our 503, never the panel's own words", async () => {
      // The throttling window of the test before ends first.
      await new Promise((r) => setTimeout(r, THROTTLE_SECONDS * 1000 + 500))
      panel.control.failNext({ path: /\/files\/list$/, times: 20, status: 500, code: "DaemonConnectionException", detail: "cURL error 7: Failed to connect to wings.internal port 8080" })
      try {
        const reply = await browser.get(`/api/client/servers/${identifier}/files/list?directory=%2F`)
        expect(errorCode(reply, 503)).toBe("GAME_PANEL_UNAVAILABLE")
        expect(reply.text).not.toContain("wings.internal")
        expect(reply.text).not.toContain("cURL")
      } finally {
        panel.control.clearFaults()
      }
      const recovered = await browser.get(`/api/client/servers/${identifier}/files/list?directory=%2F`)
      expect(recovered.status, recovered.text).toBe(200)
    }, 30_000)

    it("a customer who drops a download part-way releases the node's transfer at once", async () => {
      const uuid = panel.control.servers().find((s) => s.identifier === identifier)?.uuid ?? ""
      panel.control.putFile(uuid, "/worlds/huge.bin", { syntheticBytes: 256 * 1024 * 1024 })
      const { request, response } = await startDownload(browser, identifier, "/worlds/huge.bin")
      expect(response.statusCode).toBe(200)
      expect(response.headers["content-length"]).toBe(String(256 * 1024 * 1024))
      await new Promise<void>((resolve) => response.once("data", () => {
        response.pause()
        resolve()
      }))
      // Far from done (256 MiB, nobody reading any more): the node is still sending.
      expect(panel.control.downloadsInFlight()).toBe(1)
      request.destroy()
      await waitFor("the node's download to end", async () => (panel.control.downloadsInFlight() === 0 ? true : undefined), 5_000)
    })

    it("a node that dies part-way cuts the customer's download: never a complete-looking file, and the next one is whole", async () => {
      const uuid = panel.control.servers().find((s) => s.identifier === identifier)?.uuid ?? ""
      const size = 8 * 1024 * 1024
      panel.control.putFile(uuid, "/worlds/eight.bin", { syntheticBytes: size })
      panel.control.cutDownloadsAfter(1024 * 1024)
      try {
        const { response } = await startDownload(browser, identifier, "/worlds/eight.bin")
        expect(response.statusCode).toBe(200)
        expect(response.headers["content-length"]).toBe(String(size))
        const cut = await drain(response)
        expect(cut.complete).toBe(false)
        expect(cut.bytes).toBeLessThan(size)
      } finally {
        panel.control.clearFaults()
      }
      const whole = await drain((await startDownload(browser, identifier, "/worlds/eight.bin")).response)
      expect(whole).toEqual({ bytes: size, complete: true, intact: true })
      expect(panel.control.downloadsInFlight()).toBe(0)
    })

    it("refuses order options the plan does not offer, with a clear error, charging nothing", async () => {
      const unknown = await browser.post("/api/orders", { planId: "mc-2g", expressStartConsent: true, options: { variables: { SERVER_JARFILE: "x.jar" } } })
      expect(errorCode(unknown, 422)).toBe("INVALID_ORDER_OPTION")
      const tooLong = await browser.post("/api/orders", { planId: "mc-2g", expressStartConsent: true, options: { variables: { MINECRAFT_VERSION: "x".repeat(30) } } })
      expect(errorCode(tooLong, 422)).toBe("INVALID_ORDER_OPTION")
      const subscriptions = await browser.get("/api/subscriptions")
      expect((subscriptions.body as { subscriptions: Array<unknown> }).subscriptions.length).toBe(1)
    })

    it("our console token says `token expiring`, then `token expired` (events stop), and a new one resumes on the same socket", async () => {
      const first = expectBody(await browser.get(`/api/client/servers/${identifier}/websocket`), 200, GameEnvelopes.websocket).data
      const console = await openGameConsole(server, browser, identifier)
      console.send("auth", first.token)
      await console.waitFor("auth success", (f) => f.event === "auth success")
      await console.waitFor("token expiring", (f) => f.event === "token expiring")
      await console.waitFor("token expired", (f) => f.event === "token expired")
      console.send("send command", "say while expired")
      await console.waitFor("a jwt error while expired", (f) => f.event === "jwt error")
      const second = expectBody(await browser.get(`/api/client/servers/${identifier}/websocket`), 200, GameEnvelopes.websocket).data
      const mark = console.frames.length
      console.send("auth", second.token)
      await console.waitFor("auth success again", (f) => f.event === "auth success", mark)
      console.send("set state", "start")
      await console.waitFor("events flowing again", (f) => f.event === "status", mark)
      console.close()
    }, 30_000)
  })
})
