// A customer's actions on their services leave their rows in the audit log, over real HTTP and WebSocket: VPS power
// and shutdown, a VPS console opened, game power, a game console opened, and a change of the game server's files
// (summarised: the operation and the path, never the content); reads leave none. Operators read them in the log.
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AuditPage } from "../../adapters/http/views.ts"
import { openGameConsole, provisionedGame, sandboxesLeakScanner } from "../support/gameHttp.ts"
import { person } from "../support/staff.ts"
import { startTestServer } from "../support/testServer.ts"
import {
  expectBody,
  type LeakScanner,
  ownerConsole,
  provisionedVps,
  ScannedBrowser,
  signedInCustomer,
  waitFor
} from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
let scan: LeakScanner
beforeAll(async () => {
  server = await startTestServer()
  scan = await sandboxesLeakScanner(server)
}, 60_000)
afterAll(() => server?.stop())

const Me = Schema.Struct({ user: Schema.Struct({ id: Schema.String }) })

/** The events of `userId`'s account with `action`, as an operator reads them. */
const trail = async (userId: string, action: string) => {
  const support = await person(server, { role: "support" })
  return expectBody(await support.browser.get(`/api/admin/audit?user=${userId}&action=${action}`), 200, AuditPage).events
}

const customer = async () => {
  const browser: ScannedBrowser = await signedInCustomer(server, scan)
  const id = expectBody(await browser.get("/api/auth/me"), 200, Me).user.id
  return { browser, id }
}

describe("a customer's service actions in the audit log", () => {
  it("VPS power, shutdown and console are recorded with the VPS and the address", async () => {
    const { browser, id } = await customer()
    const { vpsId } = await provisionedVps(browser, "audited-vps")
    expect((await browser.post(`/api/vps/${vpsId}/stop`)).status).toBe(200)
    expect((await browser.post(`/api/vps/${vpsId}/start`)).status).toBe(200)
    expect((await browser.post(`/api/vps/${vpsId}/shutdown`, {})).status).toBe(200)
    const power = await trail(id, "vps.power")
    expect(power.map((e) => e.details)).toEqual([{ action: "shutdown" }, { action: "start" }, { action: "stop" }])
    for (const e of power) {
      expect(e.target).toEqual({ type: "vps", id: vpsId })
      expect(e.actorId).toBe(id)
      expect(e.address).toBe("127.0.0.1")
    }
    expect((await browser.post(`/api/vps/${vpsId}/start`)).status).toBe(200)
    const console = await ownerConsole(server, browser, vpsId)
    try {
      const opened = await waitFor("the console's audit row", async () => {
        const rows = await trail(id, "vps.console_opened")
        return rows.length === 1 ? rows : undefined
      })
      expect(opened[0]!.target).toEqual({ type: "vps", id: vpsId })
    } finally {
      console.close()
    }
  })

  it("game power, a console and a file change are recorded; a listing or a read is not", async () => {
    const { browser, id } = await customer()
    const { gameServer } = await provisionedGame(browser)
    expect((await browser.post(`/api/game-servers/${gameServer.id}/power`, { signal: "start" })).status).toBe(204)
    const power = await trail(id, "game.power")
    expect(power.map((e) => [e.target, e.details])).toEqual([[{ type: "game_server", id: gameServer.id }, { signal: "start" }]])

    const base = `/api/client/servers/${gameServer.identifier}/files`
    expect((await browser.get(`${base}/list?directory=/`)).status).toBe(200)
    const written = await browser.request("POST", `${base}/write?file=${encodeURIComponent("/notes.txt")}`, {
      body: "secret content",
      headers: { "content-type": "text/plain" }
    })
    expect(written.status, written.text).toBe(204)
    expect((await browser.get(`${base}/contents?file=${encodeURIComponent("/notes.txt")}`)).status).toBe(200)
    const changes = await trail(id, "game.files_changed")
    expect(changes.map((e) => e.details)).toEqual([{ operation: "WriteFile", path: "/notes.txt" }])
    expect(JSON.stringify(changes)).not.toContain("secret content")

    const console = await openGameConsole(server, browser, gameServer.identifier)
    try {
      const opened = await waitFor("the game console's audit row", async () => {
        const rows = await trail(id, "game.console_opened")
        return rows.length === 1 ? rows : undefined
      })
      expect(opened[0]!.target).toEqual({ type: "game_server", id: gameServer.id })
    } finally {
      console.close()
    }
  })
})
