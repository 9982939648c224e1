// Sessions end when the user says so, over real HTTP and WebSocket: after logout the same token is refused, after
// logout-all or a password reset every token of the user is, and the consoles of an ended session close with 4401
// while its game console tokens stop working. Sign-in and reset throttling seen from several client addresses.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { fillBillingProfile } from "../support/checkout.ts"
import { GameEnvelopes, openGameConsole, provisionedGame, sandboxesLeakScanner } from "../support/gameHttp.ts"
import { startTestServer } from "../support/testServer.ts"
import {
  errorCode,
  expectBody,
  type LeakScanner,
  ownerConsole,
  provisionedVps,
  ScannedBrowser,
  type TestServer
} from "../support/vpsHttp.ts"

let server: TestServer
let scan: LeakScanner

beforeAll(async () => {
  server = await startTestServer()
  scan = await sandboxesLeakScanner(server)
}, 60_000)
afterAll(() => server?.stop())

const password = "correct horse battery"
let seq = 0

/** A registered customer, and a way to sign them in again from a new browser (a new session). */
const customer = async () => {
  const email = `session.${++seq}.${Date.now()}@example.com`
  const registered = await new Browser(server.url).post("/api/auth/register", {
    email,
    password,
    accountType: "personal",
    firstName: "Ada",
    lastName: "Lovelace"
  })
  expect(registered.status, registered.text).toBe(201)
  const signIn = async () => {
    const browser = new ScannedBrowser(server.url, scan)
    const login = await browser.post("/api/auth/login", { email, password })
    expect(login.status, login.text).toBe(200)
    return browser
  }
  // Billing details once, so the customer can order.
  await fillBillingProfile(await signIn())
  return { email, signIn }
}

/** Another client holding the same token (a copy of the cookie), which the server cannot tell from the first. */
const copyOf = (browser: Browser) => {
  const copy = new Browser(server.url)
  copy.cookies.set("zh_token", browser.cookies.get("zh_token")!)
  return copy
}

/** A console of an ended session closes within a few seconds (it re-reads its session every 2 s). */
const CLOSE_WAIT_MS = 8_000
const closedWithin = <A>(closed: Promise<A>, ms = CLOSE_WAIT_MS) =>
  Promise.race([closed, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`not closed within ${ms} ms`)), ms))])

describe("the end of a session over HTTP", () => {
  it("after logout the same token is refused, while the user's other sessions go on", async () => {
    const alice = await customer()
    const laptop = await alice.signIn()
    const phone = await alice.signIn()
    const kept = copyOf(laptop)
    expect((await kept.get("/api/auth/me")).status).toBe(200)
    expect((await laptop.post("/api/auth/logout")).status).toBe(204)
    const refused = await kept.get("/api/auth/me")
    expect(refused.status).toBe(401)
    expect(errorCode(refused, 401)).toBe("UNAUTHENTICATED")
    expect((await phone.get("/api/auth/me")).status).toBe(200)
  })

  it("after logout-all every token of the user is refused, and signing in again works", async () => {
    const alice = await customer()
    const sessions = [await alice.signIn(), await alice.signIn(), await alice.signIn()]
    const copies = sessions.map(copyOf)
    expect((await sessions[0]!.post("/api/auth/logout-all")).status).toBe(204)
    for (const copy of copies) expect((await copy.get("/api/auth/me")).status).toBe(401)
    expect((await (await alice.signIn()).get("/api/auth/me")).status).toBe(200)
  })

  it("after a password reset every token of the user is refused", async () => {
    const alice = await customer()
    const before = copyOf(await alice.signIn())
    const anonymous = new Browser(server.url)
    expect((await anonymous.post("/api/auth/forgot-password", { email: alice.email })).status).toBe(202)
    let token: string | undefined
    for (const deadline = Date.now() + 5_000; token === undefined && Date.now() < deadline;) {
      const mail = (await server.outbox(50)).find((m) => m.to === alice.email)
      token = /reset-password\?token=([0-9a-f]{64})/.exec(mail?.text ?? "")?.[1]
      if (token === undefined) await new Promise((r) => setTimeout(r, 50))
    }
    expect((await anonymous.post("/api/auth/reset-password", { token, password: "a brand new secret" })).status).toBe(204)
    expect((await before.get("/api/auth/me")).status).toBe(401)
  })
})

describe("the consoles of an ended session", () => {
  it("the VPS console closes with 4401 after logout-all, and cannot be opened again with the old cookie", async () => {
    const alice = await customer()
    const browser = await alice.signIn()
    const { vpsId } = await provisionedVps(browser, "session-end")
    const terminal = await ownerConsole(server, browser, vpsId)
    terminal.type("\r")
    await terminal.until("login: ")
    const oldCookie = browser.cookies.get("zh_token")!
    expect((await browser.post("/api/auth/logout-all")).status).toBe(204)
    expect(await closedWithin(terminal.closed)).toBe(4401)
    browser.cookies.set("zh_token", oldCookie)
    await expect(ownerConsole(server, browser, vpsId)).rejects.toThrow(/refused with 401/)
  }, 60_000)

  it("the game console closes with 4401 after logout, and its console token no longer authenticates any socket", async () => {
    const alice = await customer()
    const browser = await alice.signIn()
    const { gameServer } = await provisionedGame(browser)
    const identifier = gameServer.identifier
    const { data } = expectBody(await browser.get(`/api/client/servers/${identifier}/websocket`), 200, GameEnvelopes.websocket)
    const console = await openGameConsole(server, browser, identifier)
    console.send("auth", data.token)
    await console.waitFor("auth success", (f) => f.event === "auth success")
    expect((await browser.post("/api/auth/logout")).status).toBe(204)
    expect((await closedWithin(console.closed)).code).toBe(4401)

    // Signed in again (a new session): the old session's token is refused on the new session's socket.
    const again = await alice.signIn()
    const next = await openGameConsole(server, again, identifier)
    next.send("auth", data.token)
    await next.waitFor("the old token refused", (f) => f.event === "jwt error")
    expect(next.frames.some((f) => f.event === "auth success")).toBe(false)
    const fresh = expectBody(await again.get(`/api/client/servers/${identifier}/websocket`), 200, GameEnvelopes.websocket)
    next.send("auth", fresh.data.token)
    await next.waitFor("auth success with the new session's token", (f) => f.event === "auth success")
    next.close()
  }, 60_000)
})

describe("throttling seen from several addresses", () => {
  let proxied: Awaited<ReturnType<typeof startTestServer>>
  beforeAll(async () => {
    // Behind a reverse proxy: the client address is X-Forwarded-For's last hop, so one test can be many clients.
    proxied = await startTestServer({ trustProxy: true })
  }, 60_000)
  afterAll(() => proxied?.stop())

  const from = (address: string, method: string, path: string, json: unknown) =>
    new Browser(proxied.url).request(method, path, { json, headers: { "x-forwarded-for": address } })

  it("five wrong passwords from one address refuse that address, not the owner signing in from another", async () => {
    const email = `owner.${Date.now()}@example.com`
    expect((await from("198.51.100.5", "POST", "/api/auth/register", {
      email,
      password,
      accountType: "personal",
      firstName: "Ada",
      lastName: "Lovelace"
    })).status).toBe(201)
    for (let i = 0; i < 5; i++) {
      expect((await from("203.0.113.66", "POST", "/api/auth/login", { email, password: `guess ${i} wrong` })).status).toBe(401)
    }
    const refused = await from("203.0.113.66", "POST", "/api/auth/login", { email, password })
    expect(refused.status).toBe(429)
    expect(errorCode(refused, 429)).toBe("LOGIN_THROTTLED")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(14 * 60)
    expect((await from("198.51.100.5", "POST", "/api/auth/login", { email, password })).status).toBe(200)
  })

  it("password reset attempts are refused past 10 per address with 429 and Retry-After; another address goes on", async () => {
    const bogus = { token: "cd".repeat(32), password: "a brand new secret" }
    for (let i = 0; i < 10; i++) expect((await from("203.0.113.77", "POST", "/api/auth/reset-password", bogus)).status).toBe(400)
    const refused = await from("203.0.113.77", "POST", "/api/auth/reset-password", bogus)
    expect(refused.status).toBe(429)
    expect(errorCode(refused, 429)).toBe("RESET_THROTTLED")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(14 * 60)
    const elsewhere = await from("198.51.100.78", "POST", "/api/auth/reset-password", bogus)
    expect(errorCode(elsewhere, 400)).toBe("RESET_TOKEN_INVALID")
  })
})
