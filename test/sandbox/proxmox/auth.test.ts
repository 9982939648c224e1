// Specification of the sandbox PVE's authentication (reference/proxmox.md §1, §2.2): tickets, renewal, expiry on the
// simulated clock, CSRF on writes, API tokens, and PVE's 401/403/501 answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { field, login, Pve, startSandbox, TOKEN, tokenClient, type StartedSandbox } from "./pveHttp.ts"

let sandbox: StartedSandbox
let anonymous: Pve

beforeAll(async () => {
  sandbox = await startSandbox()
  anonymous = new Pve(sandbox.url, { _tag: "none" })
})
afterAll(() => sandbox.close())

const HOUR = 3_600_000

describe("ticket login", () => {
  it("returns a ticket and a CSRF token in PVE's formats", async () => {
    const answer = await anonymous.post("/access/ticket", { username: "root@pam", password: "sandbox" })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toBe("application/json;charset=UTF-8")
    expect(field(answer.data, "username")).toBe("root@pam")
    expect(field(answer.data, "ticket")).toMatch(/^PVE:root@pam:[0-9A-F]{8}::[A-Za-z0-9+/]+={0,2}$/)
    expect(field(answer.data, "CSRFPreventionToken")).toMatch(/^[0-9A-F]{8}:[A-Za-z0-9+/]+$/)
    const hex = String(field(answer.data, "ticket")).split(":")[2] ?? ""
    expect(Math.abs(parseInt(hex, 16) - Math.floor(sandbox.control.now() / 1000))).toBeLessThanOrEqual(1)
  })

  it("accepts a JSON body and a separate realm", async () => {
    const answer = await anonymous.call("POST", "/access/ticket", { json: { username: "root", realm: "pam", password: "sandbox" } })
    expect(answer.status).toBe(200)
    expect(field(answer.data, "username")).toBe("root@pam")
  })

  it("answers bad credentials with 401 'authentication failure' and PVE's error body", async () => {
    const answer = await anonymous.post("/access/ticket", { username: "root@pam", password: "wrong" })
    expect(answer.status).toBe(401)
    expect(answer.statusText).toBe("authentication failure")
    expect(answer.json).toEqual({ data: null, message: "authentication failure\n" })
  })

  it("renews a ticket posted as the password, and refuses it for another user", async () => {
    const pve = await login(sandbox.url)
    if (pve.credentials._tag !== "ticket") throw new Error("ticket expected")
    sandbox.control.advanceClock(60_000)
    const renewed = await anonymous.post("/access/ticket", { username: "root@pam", password: pve.credentials.ticket })
    expect(renewed.status).toBe(200)
    expect(field(renewed.data, "ticket")).not.toBe(pve.credentials.ticket)
    const other = await anonymous.post("/access/ticket", { username: "admin@pve", password: pve.credentials.ticket })
    expect(other.status).toBe(401)
  })

  it("refuses an API token on /access/ticket with 403", async () => {
    const answer = await tokenClient(sandbox.url).post("/access/ticket", { username: "root@pam", password: "sandbox" })
    expect(answer.status).toBe(403)
    expect(String(field(answer.json, "message"))).toContain("not available with API token, need proper ticket.")
  })
})

describe("presenting credentials", () => {
  it("refuses a request without credentials with a bare 401 'No ticket'", async () => {
    const answer = await anonymous.get("/version")
    expect(answer.status).toBe(401)
    expect(answer.statusText).toBe("No ticket")
    expect(answer.text).toBe("")
  })

  it("takes the ticket from the cookie (URI-escaped) or from the Authorization header", async () => {
    const pve = await login(sandbox.url)
    if (pve.credentials._tag !== "ticket") throw new Error("ticket expected")
    expect((await pve.get("/version")).status).toBe(200)
    expect((await pve.with({ ...pve.credentials, via: "header" }).get("/version")).status).toBe(200)
    const raw = await fetch(`${sandbox.url}/api2/json/version`, { headers: { Cookie: `lang=en; PVEAuthCookie=${pve.credentials.ticket}` } })
    expect(raw.status).toBe(200)
  })

  it("requires the CSRF header on writes made with a ticket", async () => {
    const pve = await login(sandbox.url)
    if (pve.credentials._tag !== "ticket") throw new Error("ticket expected")
    const withoutCsrf = await pve.call("POST", "/nodes/pve1/qemu/9000/agent/ping", { form: {} }, { CSRFPreventionToken: "" })
    expect(withoutCsrf.status).toBe(401)
    expect(withoutCsrf.statusText).toBe("Permission denied - invalid csrf token")
    const forged = await pve.call("POST", "/nodes/pve1/qemu/9000/agent/ping", { form: {} }, {
      CSRFPreventionToken: `${pve.credentials.csrf.split(":")[0] ?? ""}:AAAA`
    })
    expect(forged.status).toBe(401)
    const withCsrf = await pve.post("/nodes/pve1/qemu/9000/agent/ping")
    expect(withCsrf.status).toBe(500)
    expect(field(withCsrf.json, "message")).toBe("No QEMU guest agent configured\n")
  })

  it("accepts an API token without CSRF and refuses a wrong secret with 401", async () => {
    const pve = tokenClient(sandbox.url)
    expect((await pve.get("/version")).status).toBe(200)
    expect((await pve.post("/nodes/pve1/qemu/9000/agent/ping")).status).toBe(500)
    const wrong = await pve.with({ _tag: "token", id: TOKEN.id, secret: "nope" }).get("/version")
    expect(wrong.status).toBe(401)
    expect(wrong.statusText).toBe("Authentication failed!")
  })

  it("answers unknown paths with 501 once authenticated", async () => {
    const answer = await tokenClient(sandbox.url).get("/nodes/pve1/frobnicate")
    expect(answer.status).toBe(501)
    expect(field(answer.json, "message")).toBe("Method 'GET /nodes/pve1/frobnicate' not implemented")
  })
})

describe("expiry on the simulated clock", () => {
  it("keeps a ticket valid just under 2 h and refuses it, renewal included, at 2 h", async () => {
    const pve = await login(sandbox.url)
    if (pve.credentials._tag !== "ticket") throw new Error("ticket expected")
    sandbox.control.advanceClock(2 * HOUR - 2_000)
    expect((await pve.get("/version")).status).toBe(200)
    expect((await pve.post("/nodes/pve1/qemu/9000/agent/ping")).status).toBe(500)
    sandbox.control.advanceClock(2_000)
    const expired = await pve.get("/version")
    expect(expired.status).toBe(401)
    expect(expired.statusText).toBe("Authentication failed!")
    const renewal = await anonymous.post("/access/ticket", { username: "root@pam", password: pve.credentials.ticket })
    expect(renewal.status).toBe(401)
  })

  it("expires the CSRF token with the ticket: a renewed ticket with the old token is refused", async () => {
    const first = await login(sandbox.url)
    if (first.credentials._tag !== "ticket") throw new Error("ticket expected")
    sandbox.control.advanceClock(HOUR + 50 * 60_000)
    const renewed = await anonymous.post("/access/ticket", { username: "root@pam", password: first.credentials.ticket })
    const ticket = String(field(renewed.data, "ticket"))
    sandbox.control.advanceClock(20 * 60_000)
    const staleCsrf = first.with({ _tag: "ticket", ticket, csrf: first.credentials.csrf })
    expect((await staleCsrf.post("/nodes/pve1/qemu/9000/agent/ping")).statusText).toBe("Permission denied - invalid csrf token")
    const fresh = first.with({ _tag: "ticket", ticket, csrf: String(field(renewed.data, "CSRFPreventionToken")) })
    expect((await fresh.post("/nodes/pve1/qemu/9000/agent/ping")).status).toBe(500)
  })
})

describe("401 delay", () => {
  it("delays unauthorized answers by the configured time", async () => {
    const slow = await startSandbox({ authFailureDelayMs: 150 })
    try {
      const started = Date.now()
      const answer = await new Pve(slow.url, { _tag: "none" }).get("/version")
      expect(answer.status).toBe(401)
      expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    } finally {
      await slow.close()
    }
  })
})
