// Who may touch a VPS, over HTTP and the console WebSocket: another customer finds nothing (404, as if it did not
// exist), no session is 401, and the console opens only from the panel's origin. Every reply is scanned for the
// hypervisor's address, tickets and task ids.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, stripePayments } from "../support/testServer.ts"
import {
  type ConsoleHeaders,
  Envelopes,
  errorCode,
  expectBody,
  type LeakScanner,
  leakScanner,
  openConsole,
  ownerConsole,
  PANEL_ORIGIN,
  provisionedVps,
  ScannedBrowser,
  scannerFor,
  sessionCookie,
  signedInCustomer,
  type TestServer,
  upstreamMarkers
} from "../support/vpsHttp.ts"

let server: TestServer
let scan: LeakScanner
let owner: ScannedBrowser
let intruder: ScannedBrowser
let vps: Awaited<ReturnType<typeof provisionedVps>>

beforeAll(async () => {
  server = await startTestServer()
  scan = await leakScanner(server)
  owner = await signedInCustomer(server, scan, "owner")
  intruder = await signedInCustomer(server, scan, "intruder")
  vps = await provisionedVps(owner, "web-1")
  expect((await owner.post(`/api/vps/${vps.vpsId}/snapshots`, { name: "keep-me" })).status).toBe(201)
})
afterAll(() => server.stop())

/** Every route that names the owner's VPS, order or subscription, and the code a stranger gets from it. */
const routes = (): ReadonlyArray<readonly [method: string, path: string, json: unknown, code: string]> => [
  ["GET", `/api/vps/${vps.vpsId}`, undefined, "VPS_NOT_FOUND"],
  ["POST", `/api/vps/${vps.vpsId}/start`, undefined, "VPS_NOT_FOUND"],
  ["POST", `/api/vps/${vps.vpsId}/stop`, undefined, "VPS_NOT_FOUND"],
  ["POST", `/api/vps/${vps.vpsId}/reset`, undefined, "VPS_NOT_FOUND"],
  ["POST", `/api/vps/${vps.vpsId}/reset-password`, undefined, "VPS_NOT_FOUND"],
  ["GET", `/api/vps/${vps.vpsId}/snapshots`, undefined, "VPS_NOT_FOUND"],
  ["POST", `/api/vps/${vps.vpsId}/snapshots`, { name: "mine-now" }, "VPS_NOT_FOUND"],
  ["DELETE", `/api/vps/${vps.vpsId}/snapshots/keep-me`, undefined, "VPS_NOT_FOUND"],
  ["GET", `/api/orders/${vps.order.id}`, undefined, "ORDER_NOT_FOUND"],
  ["POST", `/api/subscriptions/${vps.subscriptionId}/renew`, undefined, "SUBSCRIPTION_NOT_FOUND"],
  ["POST", `/api/subscriptions/${vps.subscriptionId}/cancel`, undefined, "SUBSCRIPTION_NOT_FOUND"],
  ["POST", `/api/subscriptions/${vps.subscriptionId}/withdraw`, undefined, "SUBSCRIPTION_NOT_FOUND"]
]

const send = (browser: ScannedBrowser, [method, path, json]: readonly [string, string, unknown, string]) =>
  browser.request(method, path, json === undefined ? {} : { json })

/** Opens the owner's console with these headers and expects the upgrade to be refused with `status` and `code`. */
const refusedConsole = async (headers: ConsoleHeaders, status: number, code: string, vpsId = vps.vpsId) => {
  const attempt = await openConsole(server, vpsId, scan, headers)
  if (attempt._tag === "Open") {
    await attempt.session.close()
    throw new Error(`the console opened for ${JSON.stringify(headers)}`)
  }
  expect(attempt.status).toBe(status)
  expect(JSON.parse(attempt.body)).toMatchObject({ error: { code } })
}

describe("another customer", () => {
  it("gets 404 with the not-found code from every route about the owner's VPS, order and subscription", async () => {
    const charges = (await server.runtime.runPromise(stripePayments)).length
    for (const route of routes()) {
      const reply = await send(intruder, route)
      expect(reply.status, `${route[0]} ${route[1]}: ${reply.text}`).toBe(404)
      expect(errorCode(reply, 404), `${route[0]} ${route[1]}`).toBe(route[3])
    }
    // Nothing happened to the owner's VPS, snapshots, subscription or bill.
    expect(expectBody(await owner.get(`/api/vps/${vps.vpsId}`), 200, Envelopes.vps).vps.status).toBe("running")
    const snapshots = expectBody(await owner.get(`/api/vps/${vps.vpsId}/snapshots`), 200, Envelopes.snapshots).snapshots
    expect(snapshots.map((s) => s.name)).toEqual(["keep-me"])
    const subscriptions = expectBody(await owner.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions
    expect(subscriptions).toEqual([expect.objectContaining({ id: vps.subscriptionId, status: "active", cancelAtPeriodEnd: false })])
    expect((await server.runtime.runPromise(stripePayments)).length).toBe(charges)
  })

  it("answers an unknown id exactly as the owner's: the 404 tells nothing about whose it is", async () => {
    const theirs = await intruder.get(`/api/vps/${vps.vpsId}`)
    const nobodys = await intruder.get("/api/vps/00000000-0000-4000-8000-000000000000")
    expect([theirs.status, nobodys.status]).toEqual([404, 404])
    expect(theirs.text).toBe(nobodys.text)
  })

  it("does not see the owner's VPS or subscription in their own lists", async () => {
    expect(expectBody(await intruder.get("/api/vps"), 200, Envelopes.vpsList).vps).toEqual([])
    expect(expectBody(await intruder.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions).toEqual([])
  })

  it("cannot open the owner's console: the handshake is refused with 404", async () => {
    await refusedConsole({ origin: PANEL_ORIGIN, cookie: sessionCookie(intruder) }, 404, "VPS_NOT_FOUND")
  })
})

describe("without a session", () => {
  it("every route answers 401", async () => {
    const anonymous = new ScannedBrowser(server.url, scan)
    for (const route of routes()) {
      expect(errorCode(await send(anonymous, route), 401), `${route[0]} ${route[1]}`).toBe("UNAUTHENTICATED")
    }
    for (const path of ["/api/vps", "/api/subscriptions"]) {
      expect(errorCode(await anonymous.get(path), 401), path).toBe("UNAUTHENTICATED")
    }
    expect(errorCode(await anonymous.post("/api/orders", { planId: "vps-s", options: {} }), 401)).toBe("UNAUTHENTICATED")
  })

  it("the console handshake is refused with 401, also with a forged token", async () => {
    await refusedConsole({ origin: PANEL_ORIGIN }, 401, "UNAUTHENTICATED")
    await refusedConsole({ origin: PANEL_ORIGIN, cookie: "zh_token=not.a.jwt" }, 401, "UNAUTHENTICATED")
  })
})

describe("the console's origin check", () => {
  it("refuses a foreign Origin with 403 before any upgrade, even for the owner", async () => {
    await refusedConsole({ origin: "http://evil.test", cookie: sessionCookie(owner) }, 403, "ORIGIN_REFUSED")
  })

  it("refuses a request without an Origin with 403, even for the owner", async () => {
    await refusedConsole({ cookie: sessionCookie(owner) }, 403, "ORIGIN_REFUSED")
  })

  it("refuses a look-alike of the panel's origin", async () => {
    for (const origin of ["https://panel.test", "http://panel.test.evil.test", "http://panel.test:8080", "null"]) {
      await refusedConsole({ origin, cookie: sessionCookie(owner) }, 403, "ORIGIN_REFUSED")
    }
  })

  it("checks the Origin before the session: a foreign page learns nothing about the VPS", async () => {
    await refusedConsole({ origin: "http://evil.test" }, 403, "ORIGIN_REFUSED")
    await refusedConsole({ origin: "http://evil.test", cookie: sessionCookie(intruder) }, 403, "ORIGIN_REFUSED")
  })

  it("opens for the owner from the panel's origin", async () => {
    const terminal = await ownerConsole(server, owner, vps.vpsId)
    terminal.type("\r")
    await terminal.until("login: ")
    await terminal.close()
  })
})

describe("the leak scanner", () => {
  const check = scannerFor(upstreamMarkers("http://127.0.0.1:41234"))

  it.each([
    ["the hypervisor's host and port", "{\"url\":\"http://127.0.0.1:41234/api2/json\"}"],
    ["an auth cookie", "Cookie: PVEAuthCookie=PVE:root@pam:66A1B2C3::sig"],
    ["a console ticket", "PVEVNC:66A1B2C3::sig"],
    ["a task id", "UPID:pve1:0000C0DE:00ABCDEF:66A1B2C3:qmclone:100:root@pam:"]
  ])("fails on %s", (_label, text) => {
    expect(() => check("a reply", text)).toThrow(/shows the upstream/)
  })

  it("passes what the API answers to customers", () => {
    expect(() => check("a reply", JSON.stringify({ vps: { address: "192.0.2.10", status: "running" } }))).not.toThrow()
  })
})
