// What bounds the console WebSockets, over real sockets: anything but a valid WebSocket upgrade is refused with our
// JSON envelope (never a raw stream, never text/html), as the last answer on its connection and saying so; a frame
// over 64 KiB closes the socket with 1009 from its header, before its payload is read; a user holds at most
// MAX_CONSOLES_PER_USER consoles (VPS and game together, JSON 429 beyond); input floods are cut (VPS: closed with 4429;
// game: dropped with `throttled`, as Wings does); and consoles open when the server stops close with 1001.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import type { SandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { GameEnvelopes, gameLeakScanner, openGameConsole, provisionedGame, refusedUpgrade, sandboxPanelOf } from "../support/gameHttp.ts"
import { errorOf, inParallel, send } from "../support/fuzz.ts"
import { closeCodeIn, frameHeaderOnly, handshakeHeaders, lastAnswer, plainAnswer, rawWebSocket } from "../support/rawWebSocket.ts"
import { startTestServer } from "../support/testServer.ts"
import {
  allOf,
  expectBody,
  leakScanner,
  type LeakScanner,
  openConsole,
  ownerConsole,
  PANEL_ORIGIN,
  provisionedVps,
  type ScannedBrowser,
  sessionCookie,
  signedInCustomer,
  sleep,
  type TestServer,
  waitFor
} from "../support/vpsHttp.ts"

const LIMIT = 3

let server: TestServer
let panel: SandboxPterodactyl
let scan: LeakScanner
let owner: ScannedBrowser
let vpsId: string
let identifier: string

beforeAll(async () => {
  server = await startTestServer({ maxConsolesPerUser: LIMIT })
  panel = await sandboxPanelOf(server)
  scan = allOf(await leakScanner(server), gameLeakScanner(panel))
  owner = await signedInCustomer(server, scan, "owner")
  const [vps, game] = await Promise.all([provisionedVps(owner, "web-1"), provisionedGame(owner)])
  vpsId = vps.vpsId
  identifier = game.gameServer.identifier
}, 60_000)
afterAll(() => server?.stop())

const cookieOf = (browser: ScannedBrowser) => [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
const consolePaths = () => [["the VPS console", `/api/vps/${vpsId}/console`], ["the game console", `/api/client/servers/${identifier}/ws`]] as const

/** The error code of a JSON refusal, checking it is our envelope. */
const refusalCode = (answer: { readonly headers: Readonly<Record<string, unknown>>; readonly body: string }) => {
  expect(String(answer.headers["content-type"])).toContain("application/json")
  return (JSON.parse(answer.body) as { error: { code: string } }).error.code
}

describe("anything but a valid WebSocket upgrade", () => {
  for (const [label, path] of [["the VPS console", "vps"], ["the game console", "game"]] as const) {
    it(`${label}: a plain GET, another Upgrade, a bad key, version or subprotocol get JSON refusals, never an upgrade`, async () => {
      const url = path === "vps" ? `/api/vps/${vpsId}/console` : `/api/client/servers/${identifier}/ws`
      const session = { cookie: cookieOf(owner), origin: PANEL_ORIGIN }

      const plain = await plainAnswer(server.url, url, session)
      expect([plain.status, refusalCode(plain), plain.headers["upgrade"]]).toEqual([426, "UPGRADE_REQUIRED", "websocket"])

      const other = await plainAnswer(server.url, url, { ...session, connection: "Upgrade", upgrade: "foo" })
      expect([other.status, refusalCode(other)]).toEqual([426, "UPGRADE_REQUIRED"])

      const { "sec-websocket-key": _key, ...noKey } = handshakeHeaders()
      const keyless = await plainAnswer(server.url, url, { ...session, ...noKey })
      expect([keyless.status, refusalCode(keyless)]).toEqual([400, "INVALID_WEBSOCKET_HANDSHAKE"])
      const badKey = await plainAnswer(server.url, url, { ...session, ...handshakeHeaders(), "sec-websocket-key": "short" })
      expect([badKey.status, refusalCode(badKey)]).toEqual([400, "INVALID_WEBSOCKET_HANDSHAKE"])

      const version = await plainAnswer(server.url, url, { ...session, ...handshakeHeaders(), "sec-websocket-version": "12" })
      expect([version.status, refusalCode(version), version.headers["sec-websocket-version"]]).toEqual([426, "UPGRADE_REQUIRED", "13"])

      for (const protocols of ["a,,b", "chat, chat", "a b", ""]) {
        const bad = await plainAnswer(server.url, url, { ...session, ...handshakeHeaders(), "sec-websocket-protocol": protocols })
        expect([bad.status, refusalCode(bad)], protocols).toEqual([400, "INVALID_WEBSOCKET_HANDSHAKE"])
      }
      // Without a session either: the handshake is judged first, and answered the same way.
      const anonymous = await plainAnswer(server.url, url, {})
      expect([anonymous.status, refusalCode(anonymous)]).toEqual([426, "UPGRADE_REQUIRED"])
    })
  }

  it("the refusals after a valid handshake are JSON too: origin, session, ownership", async () => {
    for (const [, url] of consolePaths()) {
      for (const [headers, status] of [[{ origin: "http://evil.test" }, 403], [{ origin: PANEL_ORIGIN }, 401]] as const) {
        const answer = await plainAnswer(server.url, url, { ...handshakeHeaders(), ...headers })
        expect(answer.status, url).toBe(status)
        refusalCode(answer)
      }
    }
  })
})

/**
 * The upgrade requests a console refuses before its session is looked at (so none spends the user's upstream budget),
 * with the status each gets.
 */
const refusedUpgrades = (): ReadonlyArray<readonly [string, Record<string, string>, number]> => {
  const session = { cookie: cookieOf(owner), origin: PANEL_ORIGIN }
  const { "sec-websocket-key": _key, ...noKey } = handshakeHeaders()
  return [
    ["Upgrade: h2c", { ...session, connection: "Upgrade", upgrade: "h2c" }, 426],
    ["Upgrade: foo", { ...session, connection: "keep-alive, Upgrade", upgrade: "foo" }, 426],
    ["no key", { ...session, ...noKey }, 400],
    ["bad version", { ...session, ...handshakeHeaders(), "sec-websocket-version": "7" }, 426],
    ["bad subprotocol", { ...session, ...handshakeHeaders(), "sec-websocket-protocol": "a,,b" }, 400],
    ["foreign Origin", { ...handshakeHeaders(), cookie: cookieOf(owner), origin: "http://evil.test" }, 403],
    ["no session", { ...handshakeHeaders(), origin: PANEL_ORIGIN }, 401]
  ]
}

describe("a refused upgrade ends its connection, and says so", () => {
  it("each refusal carries `Connection: close`, nothing follows it, and the server closes the connection", async () => {
    for (const [, url] of consolePaths()) {
      for (const [label, headers, status] of refusedUpgrades()) {
        const answer = await lastAnswer(server.url, url, headers)
        expect([answer.status, answer.headers["connection"], answer.after], `${url} [${label}]`).toEqual([status, "close", 0])
        refusalCode(answer)
      }
    }
  })

  it("hundreds of refusals at once, through a client that reuses connections, each arrive complete as JSON", async () => {
    // Node's agent (8 sockets here, 32 requests in flight) hands a queued request the connection of an answer that
    // did not say `close`: one the server is closing, which then answers nothing ("socket hang up").
    const tasks = Array.from({ length: 20 }).flatMap(() =>
      consolePaths().flatMap(([, path]) =>
        refusedUpgrades().map(([label, headers, status]) => async () => {
          const reply = await send(server.url, { method: "GET", path, headers })
          return reply.status === status && errorOf(reply) !== undefined
            ? undefined
            : `${path} [${label}]: ${reply.status} ${reply.text.slice(0, 120)}`
        })
      )
    )
    const problems = (await inParallel(tasks, 32)).filter((p) => p !== undefined)
    expect(problems, `${problems.length} of ${tasks.length}:\n${problems.slice(0, 20).join("\n")}`).toEqual([])
  }, 60_000)
})

describe("frames over 64 KiB", () => {
  it("a frame header announcing 32 MiB closes the VPS console with 1009 at once; its payload is never buffered", async () => {
    const before = process.memoryUsage().rss
    const chunk = Buffer.alloc(4 * 1024 * 1024, 0x61)
    for (let i = 0; i < 10; i++) {
      const raw = await rawWebSocket(server.url, `/api/vps/${vpsId}/console`, { ...handshakeHeaders(), cookie: cookieOf(owner), origin: PANEL_ORIGIN })
      raw.socket.write(frameHeaderOnly(0x2, 32 * 1024 * 1024))
      // The close comes from the header alone: nothing of the payload has been sent yet.
      expect(await waitFor("a close frame", async () => closeCodeIn(raw.received()), 5_000)).toBe(1009)
      // Whatever of the payload still arrives is never kept (the server ends the connection): 32 MiB per socket.
      for (let sent = 0; sent < 32 * 1024 * 1024 && !raw.socket.destroyed; sent += chunk.length) {
        if (!raw.socket.write(chunk)) {
          await Promise.race([new Promise((resolve) => raw.socket.once("drain", resolve)), raw.ended])
        }
      }
      raw.socket.destroy()
      await raw.ended
    }
    // Loosely (the test shares the server's process): 320 MiB were sent; far less than that stayed.
    expect(process.memoryUsage().rss - before).toBeLessThan(96 * 1024 * 1024)
    await waitFor("the slots to be free again", async () => ((await ownerConsole(server, owner, vpsId).then((c) => c.close().then(() => true), () => undefined))))
  }, 60_000)

  it("the game console takes a 64 KiB frame and closes with 1009 on one byte more", async () => {
    const console = await openGameConsole(server, owner, identifier)
    const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/api/client/servers/${identifier}/ws`, {
      headers: { cookie: cookieOf(owner), origin: PANEL_ORIGIN }
    })
    console.close()
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject))
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)))
    socket.send("x".repeat(64 * 1024))
    socket.send(JSON.stringify({ event: "send logs" }))
    await sleep(300)
    expect(socket.readyState).toBe(WebSocket.OPEN)
    socket.send("x".repeat(64 * 1024 + 1))
    expect(await closed).toBe(1009)
  })
})

describe("consoles per user", () => {
  it(`the ${LIMIT + 1}th console of a user is refused with a JSON 429, VPS and game together; closing one frees it`, async () => {
    const first = await ownerConsole(server, owner, vpsId)
    const second = await ownerConsole(server, owner, vpsId)
    const game = await openGameConsole(server, owner, identifier)

    const vpsRefused = await openConsole(server, vpsId, scan, { origin: PANEL_ORIGIN, cookie: sessionCookie(owner) })
    if (vpsRefused._tag === "Open") throw new Error("a fourth console opened")
    expect(vpsRefused.status).toBe(429)
    expect(JSON.parse(vpsRefused.body)).toMatchObject({ error: { code: "TOO_MANY_CONSOLES" } })
    expect(await refusedUpgrade(server, `/api/client/servers/${identifier}/ws`, { cookie: cookieOf(owner), origin: PANEL_ORIGIN })).toBe(429)

    // Another customer is not counted with this one.
    const other = await signedInCustomer(server, scan, "other")
    const theirs = await provisionedVps(other, "web-2")
    await (await ownerConsole(server, other, theirs.vpsId)).close()

    game.close()
    await game.closed
    const again = await waitFor("a slot to be free", async () => {
      const attempt = await openConsole(server, vpsId, scan, { origin: PANEL_ORIGIN, cookie: sessionCookie(owner) })
      return attempt._tag === "Open" ? attempt.session : undefined
    }, 5_000)
    for (const open of [first, second, again]) await open.close()
  })

  it("concurrent opens never exceed the limit", async () => {
    const attempts = await Promise.all(Array.from({ length: 8 }, () =>
      openConsole(server, vpsId, scan, { origin: PANEL_ORIGIN, cookie: sessionCookie(owner) })))
    const opened = attempts.flatMap((a) => (a._tag === "Open" ? [a.session] : []))
    const refused = attempts.flatMap((a) => (a._tag === "Refused" ? [a.status] : []))
    expect(opened.length).toBe(LIMIT)
    expect(refused).toEqual(Array.from({ length: 8 - LIMIT }, () => 429))
    for (const open of opened) await open.close()
  })
})

describe("input floods", () => {
  it("hundreds of frames at once close the VPS console with 4429; nothing past the limit is typed", async () => {
    const terminal = await ownerConsole(server, owner, vpsId)
    for (let i = 0; i < 300; i++) terminal.type("x")
    expect(await terminal.closed).toBe(4429)
  })

  it("a burst of game console commands is cut to Wings' rate: the excess is dropped and the browser told `throttled`", async () => {
    const { data } = expectBody(await owner.get(`/api/client/servers/${identifier}/websocket`), 200, GameEnvelopes.websocket)
    const console = await openGameConsole(server, owner, identifier)
    console.send("auth", data.token)
    await console.waitFor("auth success", (f) => f.event === "auth success")
    console.send("set state", "start")
    await console.waitFor("the server running", (f) => f.event === "status" && f.args?.[0] === "running")
    await sleep(1_000)
    const mark = console.frames.length
    for (let i = 0; i < 50; i++) console.send("send command", `say flood-${i}`)
    await console.waitFor("a throttled event", (f) => f.event === "throttled", mark)
    await sleep(1_000)
    // Each command the server ran shows up in its output (possibly more than one line): count the commands.
    const ran = new Set(console.frames.slice(mark).flatMap((f) =>
      f.event === "console output" ? [...(f.args?.[0] ?? "").matchAll(/flood-(\d+)/g)].map((m) => m[1]) : []))
    expect(ran.size).toBeGreaterThan(0)
    expect(ran.size).toBeLessThanOrEqual(12)
    // Told once, not once per dropped frame.
    expect(console.frames.slice(mark).filter((f) => f.event === "throttled").length).toBeLessThanOrEqual(2)
    // The socket lives on: at a normal pace, commands go through again.
    const later = console.frames.length
    console.send("send command", "say after the flood")
    await console.waitFor("the next command's answer", (f) => f.event === "console output" && (f.args?.[0] ?? "").includes("after the flood"), later)
    console.close()
  })
})

describe("a server that stops", () => {
  it("closes its open consoles with 1001 (going away)", async () => {
    // Open sockets no longer hold the stop for NodeHttpServer's default 20 s: the routes' scopes are interrupted soon.
    const stopping = await startTestServer({}, { gracefulShutdown: "200 millis" })
    const stoppingScan = await leakScanner(stopping)
    const customer = await signedInCustomer(stopping, stoppingScan, "leaving")
    const [vps, game] = await Promise.all([provisionedVps(customer, "web-3"), provisionedGame(customer)])
    const terminal = await ownerConsole(stopping, customer, vps.vpsId)
    const gameConsole = await openGameConsole(stopping, customer, game.gameServer.identifier)
    await stopping.stop()
    expect(await terminal.closed).toBe(1001)
    expect(await gameConsole.closed).toEqual({ code: 1001, reason: "server shutting down" })
  }, 60_000)
})
