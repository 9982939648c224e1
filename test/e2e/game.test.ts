// End to end, over real HTTP and WebSocket, on a real database, against the sandbox Pterodactyl panel and its
// Wings: order → installed → console command round trip → files (write, upload, list, download) → backup
// (create, download) → expiry → suspended (relay refused, console closed) → renewal → unsuspended. Every reply,
// header, token and console frame the customer receives is scanned for the panel's and the node's address.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Envelopes, errorCode, expectBody, type ScannedBrowser, signedInCustomer, type TestServer, waitFor } from "../support/vpsHttp.ts"
import { startTestServer } from "../support/testServer.ts"
import {
  fetchSigned,
  gameLeakScanner,
  GameEnvelopes,
  lapseGame,
  openGameConsole,
  provisionedGame,
  refusedUpgrade,
  sandboxPanelOf,
  uploadFiles
} from "../support/gameHttp.ts"
import type { LeakScanner } from "../support/vpsHttp.ts"
import type { SandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"

let server: TestServer
let panel: SandboxPterodactyl
let scan: LeakScanner

beforeAll(async () => {
  server = await startTestServer()
  panel = await sandboxPanelOf(server)
  scan = gameLeakScanner(panel)
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

const files = (identifier: string) => `/api/client/servers/${identifier}/files`
const backups = (identifier: string) => `/api/client/servers/${identifier}/backups`

describe("a game server, end to end", () => {
  let browser: ScannedBrowser
  let identifier: string
  let gameServerId: string
  let subscriptionId: string

  it("is ordered and installed in five named steps", async () => {
    browser = await signedInCustomer(server, scan, "gamer")
    const { gameServer, steps, subscriptionId: sub } = await provisionedGame(browser, { MINECRAFT_VERSION: "1.21.1" })
    identifier = gameServer.identifier
    gameServerId = gameServer.id
    subscriptionId = sub
    expect(steps.at(-1)).toBe("5/5 Installing the game")
    expect(gameServer.status).toBe("active")
    expect(gameServer.address).toMatch(/^127\.0\.0\.1:255\d\d$/)
    const listed = expectBody(await browser.get("/api/game-servers"), 200, GameEnvelopes.gameServers).gameServers
    expect(listed.map((s) => s.id)).toEqual([gameServerId])
    // The panel server carries our order id as its external id, and the customer's choice.
    const onPanel = panel.control.servers().find((s) => s.identifier === identifier)
    expect(onPanel?.environment["MINECRAFT_VERSION"]).toBe("1.21.1")
  })

  it("relays the console: our token, a command round trip, power through the socket, only allowed events", async () => {
    const { data } = expectBody(await browser.get(`/api/client/servers/${identifier}/websocket`), 200, GameEnvelopes.websocket)
    expect(data.socket).toBe(`ws://panel.test/api/client/servers/${identifier}/ws`)
    const console = await openGameConsole(server, browser, identifier)
    console.send("send command", "say too early")
    await console.waitFor("a jwt error before auth", (f) => f.event === "jwt error")
    console.send("auth", data.token)
    await console.waitFor("auth success", (f) => f.event === "auth success")
    console.send("set state", "start")
    await console.waitFor("the server running", (f) => f.event === "status" && f.args?.[0] === "running")
    const mark = console.frames.length
    console.send("send command", "say hello from the relay")
    await console.waitFor("the command's answer", (f) => f.event === "console output" && (f.args?.[0] ?? "").includes("hello from the relay"), mark)
    // Not allowed from a customer: dropped, never forwarded.
    console.send("send install logs")
    console.send("set state", "explode")
    console.close()
    expect((await console.closed).code).toBeGreaterThan(0)
  })

  it("relays files: write, list, contents, upload and download through our own URLs", async () => {
    const wrote = await browser.request("POST", `${files(identifier)}/write?file=%2Fhello.txt`, {
      body: "hello, world\n",
      headers: { "content-type": "text/plain" }
    })
    expect(wrote.status, wrote.text).toBe(204)
    const listed = await browser.get(`${files(identifier)}/list?directory=%2F`)
    expect(listed.status, listed.text).toBe(200)
    const names = (listed.body as { data: Array<{ attributes: { name: string } }> }).data.map((f) => f.attributes.name)
    expect(names).toContain("hello.txt")
    const contents = await browser.get(`${files(identifier)}/contents?file=%2Fhello.txt`)
    expect(contents.text).toBe("hello, world\n")

    const upload = await browser.get(`${files(identifier)}/upload`)
    expect(upload.status, upload.text).toBe(200)
    const uploadUrl = (upload.body as { attributes: { url: string } }).attributes.url
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 31) % 251)
    const sent = await uploadFiles(browser, uploadUrl, "/uploads", [{ name: "world.dat", bytes }])
    expect(sent.status, sent.text).toBe(204)

    const download = await browser.get(`${files(identifier)}/download?file=%2Fuploads%2Fworld.dat`)
    expect(download.status, download.text).toBe(200)
    const got = await fetchSigned(browser, (download.body as { attributes: { url: string } }).attributes.url)
    expect(got.status).toBe(200)
    expect(got.headers.get("content-disposition")).toContain("world.dat")
    expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true)

    const missing = await browser.get(`${files(identifier)}/contents?file=%2Fnope.txt`)
    expect(errorCode(missing, 404)).toBe("NOT_FOUND")
    const pull = await browser.post(`${files(identifier)}/pull`, { url: "http://169.254.169.254/" })
    expect(errorCode(pull, 403)).toBe("REMOTE_DOWNLOAD_DISABLED")
    const unknown = await browser.get(`${files(identifier)}/../../startup`)
    expect(unknown.status).toBe(404)
  })

  it("relays backups: create, wait, download, lock refuses delete", async () => {
    const created = await browser.post(backups(identifier), { name: "before the update" })
    expect(created.status, created.text).toBe(200)
    const uuid = (created.body as { attributes: { uuid: string } }).attributes.uuid
    await waitFor("the backup to complete", async () => {
      const one = await browser.get(`${backups(identifier)}/${uuid}`)
      return (one.body as { attributes: { completed_at: string | null } }).attributes.completed_at === null ? undefined : true
    })
    const list = await browser.get(backups(identifier))
    expect(list.status).toBe(200)
    expect(list.text).not.toContain("links")
    const link = await browser.get(`${backups(identifier)}/${uuid}/download`)
    const archive = await fetchSigned(browser, (link.body as { attributes: { url: string } }).attributes.url)
    expect(archive.status).toBe(200)
    expect(archive.bytes.byteLength).toBeGreaterThan(0)
    const locked = await browser.post(`${backups(identifier)}/${uuid}/lock`)
    expect(locked.status, locked.text).toBe(200)
    const refused = await browser.delete(`${backups(identifier)}/${uuid}`)
    expect(errorCode(refused, 400)).toBe("BACKUP_LOCKED")
  })

  it("keeps everything from other customers: 404 on every route, no token, no console", async () => {
    const mallory = await signedInCustomer(server, scan, "mallory")
    expect(errorCode(await mallory.get(`/api/game-servers/${gameServerId}`), 404)).toBe("GAME_SERVER_NOT_FOUND")
    expect(errorCode(await mallory.post(`/api/game-servers/${gameServerId}/power`, { signal: "stop" }), 404)).toBe("GAME_SERVER_NOT_FOUND")
    expect(errorCode(await mallory.get(`/api/client/servers/${identifier}/websocket`), 404)).toBe("GAME_SERVER_NOT_FOUND")
    expect(errorCode(await mallory.get(`${files(identifier)}/list`), 404)).toBe("GAME_SERVER_NOT_FOUND")
    expect(errorCode(await mallory.get(backups(identifier)), 404)).toBe("GAME_SERVER_NOT_FOUND")
    const cookie = (b: ScannedBrowser) => [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    expect(await refusedUpgrade(server, `/api/client/servers/${identifier}/ws`, { cookie: cookie(mallory), origin: "http://panel.test" })).toBe(404)
    // The owner's own token is bound to the owner: with it, someone else's session gets nothing either.
    expect(await refusedUpgrade(server, `/api/client/servers/${identifier}/ws`, { cookie: cookie(browser), origin: "https://evil.example" })).toBe(403)
    expect(await refusedUpgrade(server, `/api/client/servers/${identifier}/ws`, { origin: "http://panel.test" })).toBe(401)
  })

  it("a console token works only for the customer and the server it was issued to", async () => {
    const mallory = await signedInCustomer(server, scan, "mallory2")
    const own = (await provisionedGame(mallory)).gameServer.identifier
    const stolen = expectBody(await browser.get(`/api/client/servers/${identifier}/websocket`), 200, GameEnvelopes.websocket).data.token
    const console = await openGameConsole(server, mallory, own)
    console.send("auth", stolen)
    await console.waitFor("the stolen token refused", (f) => f.event === "jwt error")
    expect(console.frames.some((f) => f.event === "auth success")).toBe(false)
    console.send("send command", "say not yours")
    await console.waitFor("still refused", (f) => f.event === "jwt error", 1)
    console.close()
  })

  it("expiry suspends it: relay and power refused, the open console closed; renewal brings it back", async () => {
    const { data } = expectBody(await browser.get(`/api/client/servers/${identifier}/websocket`), 200, GameEnvelopes.websocket)
    const console = await openGameConsole(server, browser, identifier)
    console.send("auth", data.token)
    await console.waitFor("auth success", (f) => f.event === "auth success")

    await lapseGame(server, subscriptionId, new Date(Date.now() - 60_000))
    await waitFor("the game server to be suspended", async () => {
      const s = expectBody(await browser.get(`/api/game-servers/${gameServerId}`), 200, GameEnvelopes.gameServer).gameServer
      return s.status === "suspended" ? true : undefined
    })
    expect((await console.closed).code).toBe(4409)
    expect(errorCode(await browser.get(`${files(identifier)}/list`), 409)).toBe("GAME_SERVER_SUSPENDED")
    expect(errorCode(await browser.get(`/api/client/servers/${identifier}/websocket`), 409)).toBe("GAME_SERVER_SUSPENDED")
    expect(errorCode(await browser.post(`/api/game-servers/${gameServerId}/power`, { signal: "start" }), 409)).toBe("GAME_SERVER_SUSPENDED")
    await waitFor("the panel to suspend it", async () =>
      panel.control.servers().find((s) => s.identifier === identifier)?.suspended === true ? true : undefined)

    const renewed = expectBody(await browser.post(`/api/subscriptions/${subscriptionId}/renew`), 200, Envelopes.subscription)
    expect(renewed.subscription.status).toBe("active")
    await waitFor("the game server to be active again", async () => {
      const s = expectBody(await browser.get(`/api/game-servers/${gameServerId}`), 200, GameEnvelopes.gameServer).gameServer
      return s.status === "active" ? true : undefined
    }).catch(async (e) => {
      const subs = await browser.get("/api/subscriptions")
      const gs = await browser.get(`/api/game-servers/${gameServerId}`)
      throw new Error(`${e}\n${subs.text}\n${gs.text}\n${JSON.stringify(panel.control.servers().find((s) => s.identifier === identifier))}\n${JSON.stringify(renewed)}`)
    })
    expect(panel.control.servers().find((s) => s.identifier === identifier)?.suspended).toBe(false)
    const listed = await browser.get(`${files(identifier)}/list?directory=%2F`)
    expect(listed.status, listed.text).toBe(200)
  })
})
