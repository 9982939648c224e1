// Conflicts are 409s (issue 10 §3): snapshot requests racing for one name or for the plan's last place, on a sandbox
// Proxmox whose snapshot tasks take their realistic time (the hypervisor holds the VM's lock while one runs and lists
// the snapshot only once it is done: our records settle the race), and a registration race.
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer } from "../support/testServer.ts"
import { Envelopes, errorCode, expectBody, leakScanner, provisionedVps, type ScannedBrowser, signedInCustomer, type TestServer } from "../support/vpsHttp.ts"

let server: TestServer
let browser: ScannedBrowser
let vpsId: string

beforeAll(async () => {
  server = await startTestServer({ sandboxTaskSpeed: "realistic" })
  browser = await signedInCustomer(server, await leakScanner(server), "conflicts")
  vpsId = (await provisionedVps(browser, "race")).vpsId
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

describe("conflicts", () => {
  it("two snapshots asked for at once under the same name: one is taken (201), the other is told it exists (409)", async () => {
    const [a, b] = await Promise.all([
      browser.post(`/api/vps/${vpsId}/snapshots`, { name: "same-name" }),
      browser.post(`/api/vps/${vpsId}/snapshots`, { name: "same-name" })
    ])
    const [taken, refused] = a!.status === 201 ? [a!, b!] : [b!, a!]
    expect(taken.status, taken.text).toBe(201)
    expect(errorCode(refused, 409)).toBe("SNAPSHOT_EXISTS")
    const listed = expectBody(await browser.get(`/api/vps/${vpsId}/snapshots`), 200, Envelopes.snapshots).snapshots
    expect(listed.filter((s) => s.name === "same-name")).toHaveLength(1)
  }, 30_000)

  it("two snapshots of different names asked for at once for the plan's last place: one is taken, the other 409 SNAPSHOT_LIMIT_REACHED", async () => {
    const snapshots = async () => expectBody(await browser.get(`/api/vps/${vpsId}/snapshots`), 200, Envelopes.snapshots).snapshots
    // The plan (vps-s) keeps two: fill all places but one, whatever the tests before left.
    const limit = 2
    for (let i = (await snapshots()).length; i < limit - 1; i++) {
      expect((await browser.post(`/api/vps/${vpsId}/snapshots`, { name: `filler-${i}` })).status).toBe(201)
    }
    expect(await snapshots()).toHaveLength(limit - 1)
    const replies = await Promise.all(["last-a", "last-b"].map((name) => browser.post(`/api/vps/${vpsId}/snapshots`, { name })))
    const [taken, refused] = replies[0]!.status === 201 ? [replies[0]!, replies[1]!] : [replies[1]!, replies[0]!]
    expect(taken.status, taken.text).toBe(201)
    expect(errorCode(refused, 409)).toBe("SNAPSHOT_LIMIT_REACHED")
    expect(await snapshots()).toHaveLength(limit)
  }, 30_000)

  it("five registrations of one address at once: one account (201), the others 409 EMAIL_TAKEN", async () => {
    const email = `race.${randomUUID()}@example.com`
    const replies = await Promise.all(Array.from({ length: 5 }, () =>
      browser.post("/api/auth/register", {
        email,
        password: "correct horse battery",
        accountType: "personal",
        firstName: "Ada",
        lastName: "Lovelace"
      })))
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409])
    for (const r of replies.filter((r) => r.status === 409)) expect(errorCode(r, 409)).toBe("EMAIL_TAKEN")
  })
})
