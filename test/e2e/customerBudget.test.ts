// One customer cannot starve the others, with two customers at once on one server: every customer shares the panel's
// one Client-API key (here limited to 40 requests a minute, as a small panel would be) and the Proxmox API. Customer A
// loops on the files relay with 25 requests in flight and gets 429 RATE_LIMITED with Retry-After past their share
// (CUSTOMER_UPSTREAM_RATE_PER_MINUTE, 10 here), while customer B's files, power, console-token and console calls all
// succeed — the panel never reaches its own limit, so nobody sees GAME_PANEL_BUSY. Likewise on Proxmox.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { SandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { type Reply } from "../support/browser.ts"
import { GameEnvelopes, gameLeakScanner, openGameConsole, provisionedGame, sandboxPanelOf } from "../support/gameHttp.ts"
import { startTestServer } from "../support/testServer.ts"
import {
  allOf,
  expectBody,
  leakScanner,
  type LeakScanner,
  openConsole,
  ownerConsole,
  panelHeaders,
  provisionedVps,
  type ScannedBrowser,
  signedInCustomer,
  sleep,
  type TestServer
} from "../support/vpsHttp.ts"

const SHARE = 10
const PANEL_LIMIT = 40

let server: TestServer
let panel: SandboxPterodactyl
let scan: LeakScanner
let greedy: ScannedBrowser
let polite: ScannedBrowser
let greedyGame: Awaited<ReturnType<typeof provisionedGame>>
let politeGame: Awaited<ReturnType<typeof provisionedGame>>
let greedyVps: Awaited<ReturnType<typeof provisionedVps>>
let politeVps: Awaited<ReturnType<typeof provisionedVps>>

beforeAll(async () => {
  server = await startTestServer({ customerUpstreamRatePerMinute: SHARE })
  panel = await sandboxPanelOf(server)
  scan = allOf(await leakScanner(server), gameLeakScanner(panel))
  greedy = await signedInCustomer(server, scan, "greedy")
  polite = await signedInCustomer(server, scan, "polite")
  ;[greedyGame, politeGame, greedyVps, politeVps] = await Promise.all([
    provisionedGame(greedy),
    provisionedGame(polite),
    provisionedVps(greedy, "greedy-1"),
    provisionedVps(polite, "polite-1")
  ])
}, 90_000)
afterAll(() => server?.stop())

/** `count` calls of `call`, `concurrency` in flight at a time; their replies in order. */
const loop = async (count: number, concurrency: number, call: (i: number) => Promise<Reply>) => {
  const replies: Array<Reply> = []
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++
      replies[i] = await call(i)
    }
  }))
  return replies
}

const codeOf = (reply: Reply) => (reply.body as { error?: { code?: string } } | undefined)?.error?.code ?? null
const tally = (replies: ReadonlyArray<Reply>) => ({
  ok: replies.filter((r) => r.status >= 200 && r.status < 300).length,
  rateLimited: replies.filter((r) => r.status === 429 && codeOf(r) === "RATE_LIMITED").length,
  panelBusy: replies.filter((r) => codeOf(r) === "GAME_PANEL_BUSY").length,
  other: replies.filter((r) => !(r.status >= 200 && r.status < 300) && !(r.status === 429 && codeOf(r) === "RATE_LIMITED")).map((r) => `${r.status} ${r.text}`)
})

const panelClientCalls = () => panel.control.requests().filter((r) => r.target === "panel" && r.path.startsWith("/api/client/")).length

describe("two customers on one game panel", () => {
  it("A looping on the files relay gets RATE_LIMITED with Retry-After; B's files, power, console token and console all work", async ({ annotate }) => {
    panel.control.setRateLimits({ client: PANEL_LIMIT })
    const panelBefore = panelClientCalls()
    const files = (browser: ScannedBrowser, identifier: string) => browser.get(`/api/client/servers/${identifier}/files/list?directory=%2F`)

    const greedyLoop = loop(100, 25, () => files(greedy, greedyGame.gameServer.identifier))
    const politeCalls = (async () => {
      const replies: Array<Reply> = []
      for (let round = 0; round < 2; round++) {
        replies.push(await files(polite, politeGame.gameServer.identifier))
        replies.push(await polite.post(`/api/game-servers/${politeGame.gameServer.id}/power`, { signal: "start" }))
        replies.push(await polite.get(`/api/client/servers/${politeGame.gameServer.identifier}/websocket`))
        await sleep(50)
      }
      replies.push(await files(polite, politeGame.gameServer.identifier))
      return replies
    })()
    const [greedyReplies, politeReplies] = await Promise.all([greedyLoop, politeCalls])

    const a = tally(greedyReplies)
    expect(a.other).toEqual([])
    expect(a.panelBusy).toBe(0)
    // Their share (a burst of SHARE, refilled at SHARE a minute: the loop lasts seconds), and no more.
    expect(a.ok).toBeGreaterThanOrEqual(SHARE)
    expect(a.ok).toBeLessThanOrEqual(SHARE + 2)
    expect(a.rateLimited).toBe(100 - a.ok)
    for (const reply of greedyReplies.filter((r) => r.status === 429)) {
      expect(Number(reply.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    }
    const b = tally(politeReplies)
    await annotate(`A: ${a.ok} answered, ${a.rateLimited} RATE_LIMITED of ${greedyReplies.length}; B: ${b.ok} of ${politeReplies.length} answered`)
    expect(b).toEqual({ ok: politeReplies.length, rateLimited: 0, panelBusy: 0, other: [] })

    // B's console opens on the panel too.
    const { data } = expectBody(await polite.get(`/api/client/servers/${politeGame.gameServer.identifier}/websocket`), 200, GameEnvelopes.websocket)
    const console = await openGameConsole(server, polite, politeGame.gameServer.identifier)
    console.send("auth", data.token)
    await console.waitFor("auth success", (f) => f.event === "auth success")
    console.close()
    // The panel was asked far less than its limit: no customer saw it busy.
    await annotate(`the panel's Client API was called ${panelClientCalls() - panelBefore} times (its limit: ${PANEL_LIMIT} a minute)`)
    expect(panelClientCalls() - panelBefore).toBeLessThan(PANEL_LIMIT)
  }, 60_000)
})

describe("two customers on one Proxmox cluster", () => {
  it("A looping on snapshots and power gets RATE_LIMITED with Retry-After; B's snapshots, power and console work", async ({ annotate }) => {
    const greedyReplies = await loop(40, 10, (i) =>
      i % 2 === 0 ? greedy.get(`/api/vps/${greedyVps.vpsId}/snapshots`) : greedy.post(`/api/vps/${greedyVps.vpsId}/start`))
    const a = tally(greedyReplies)
    expect(a.other).toEqual([])
    expect(a.ok).toBeLessThanOrEqual(SHARE + 2)
    expect(a.rateLimited).toBe(40 - a.ok)
    expect(Number(greedyReplies.find((r) => r.status === 429)?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)

    const politeReplies = [
      await polite.get(`/api/vps/${politeVps.vpsId}/snapshots`),
      await polite.post(`/api/vps/${politeVps.vpsId}/snapshots`, { name: "before-flood" }),
      await polite.post(`/api/vps/${politeVps.vpsId}/shutdown`),
      await polite.post(`/api/vps/${politeVps.vpsId}/start`)
    ]
    await annotate(`A: ${a.ok} answered, ${a.rateLimited} RATE_LIMITED of ${greedyReplies.length}; B: ${tally(politeReplies).ok} of ${politeReplies.length} answered`)
    expect(tally(politeReplies)).toEqual({ ok: 4, rateLimited: 0, panelBusy: 0, other: [] })
    await (await ownerConsole(server, polite, politeVps.vpsId)).close()

    // A's console open is refused as their other calls are, with our JSON 429.
    const refused = await openConsole(server, greedyVps.vpsId, scan, panelHeaders(greedy))
    expect(refused._tag === "Refused" ? [refused.status, JSON.parse(refused.body).error.code] : "opened").toEqual([429, "RATE_LIMITED"])
  })
})
