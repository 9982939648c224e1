// The live console (reference/pterodactyl.md §3.1–§3.3), specified against a scripted panel and Wings on loopback: the
// token fetched with the client key, the socket opened with the panel's Origin, `auth` before anything else, renewal on
// the same socket (asked by Wings, or due by the token's `exp`), the token lifecycle hidden from `events`, and a close
// from Wings ending the stream with ConsoleEnded.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { eventOf } from "../../../adapters/pterodactyl/console.ts"
import type { ConsoleEvent } from "../../../ports/GamePanel.ts"
import { clientKey, jwtFor, scenario, type Stub, type WingsHandshake } from "./stubPanel.ts"

const uuid = "4600605e-6e5a-4f29-b3c4-fc01b7aa1192"
const tokenRoute = `GET /api/client/servers/${uuid}/websocket`

/** Each token request answers a new token (`n` in its claims) with `exp` `ttlSeconds` away. */
const tokens = (stub: Stub, ttlSeconds = 600) =>
  stub.route(tokenRoute, (_, attempt) => ({
    json: {
      data: {
        token: jwtFor(stub.url, { n: attempt, exp: Math.floor(Date.now() / 1000) + ttlSeconds }),
        socket: `${stub.url.replace("http", "ws")}/api/servers/${uuid}/ws`
      }
    }
  }))

const frame = (event: string, ...args: ReadonlyArray<string>) => JSON.stringify({ event, args })

/** A Wings that accepts every `auth` and lets the test drive the rest. */
const wings = (stub: Stub, onAuth: (h: WingsHandshake, count: number) => void = () => {}) => {
  const sockets: Array<WingsHandshake> = []
  stub.onWings((h) => {
    sockets.push(h)
    let auths = 0
    h.socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as { event: string }
      if (message.event !== "auth") return
      auths += 1
      h.socket.send(frame("auth success"))
      if (auths === 1) h.socket.send(frame("status", "running"))
      onAuth(h, auths)
    })
  })
  return sockets
}

const until = (condition: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200 && !condition(); i++) yield* Effect.sleep("10 millis")
    assert.isTrue(condition(), "condition not reached in time")
  })

/** Events without `raw`, for comparing what they say. */
const plain = (events: Iterable<ConsoleEvent>) => Array.from(events, (e) => ({ event: e.event, args: e.args }))

const nth = <A>(items: ReadonlyArray<A>, n: number): A => {
  const item = items[n]
  if (item === undefined) throw new Error(`no item ${n}`)
  return item
}

describe("PterodactylGamePanel console", () => {
  it.live("authenticates with the panel's token and Origin, relays events and frames", () => {
    let sockets: Array<WingsHandshake> = []
    return scenario((stub) => {
      tokens(stub)
      sockets = wings(stub)
    }, (panel, stub) =>
      Effect.gen(function*() {
        const console = yield* panel.openConsole("p1", uuid)
        const socket = nth(sockets, 0)
        assert.strictEqual(socket.request.headers.origin, stub.url)
        assert.strictEqual(socket.request.url, `/api/servers/${uuid}/ws`)
        assert.strictEqual(stub.calls(tokenRoute)[0]?.headers.authorization, `Bearer ${clientKey}`)
        assert.deepStrictEqual(socket.received[0]?.event, "auth")
        socket.socket.send(frame("console output", "[Server] Done (3.2s)!"))
        const events = yield* console.events.pipe(Stream.take(2), Stream.runCollect)
        assert.deepStrictEqual(plain(events), [
          { event: "status", args: ["running"] },
          { event: "console output", args: ["[Server] Done (3.2s)!"] }
        ])
        yield* console.send({ _tag: "Command", line: "say hi" })
        yield* until(() => socket.received.length === 2)
        assert.deepStrictEqual(socket.received[1], { event: "send command", args: ["say hi"] })
      }).pipe(Effect.scoped))
  })

  it.live("re-authenticates on the same socket when Wings says the token is expiring or expired, and hides it", () => {
    let sockets: Array<WingsHandshake> = []
    return scenario((stub) => {
      tokens(stub)
      sockets = wings(stub, (h, count) => {
        if (count === 1) h.socket.send(frame("token expiring"))
        if (count === 2) h.socket.send(frame("token expired"))
        if (count === 3) h.socket.send(frame("jwt error", "jwt: exp claim is invalid"))
        if (count === 4) h.socket.send(frame("console output", "after renewal"))
      })
    }, (panel, stub) =>
      Effect.gen(function*() {
        const console = yield* panel.openConsole("p1", uuid)
        const collected = yield* console.events.pipe(Stream.take(2), Stream.runCollect, Effect.forkChild)
        yield* until(() => nth(sockets, 0).received.filter((m) => m.event === "auth").length >= 4)
        assert.deepStrictEqual(plain(yield* Fiber.join(collected)), [
          { event: "status", args: ["running"] },
          { event: "console output", args: ["after renewal"] }
        ])
        assert.strictEqual(sockets.length, 1, "one socket for the whole session")
        const auths = nth(sockets, 0).received.filter((m) => m.event === "auth").map((m) => m.args?.[0])
        assert.strictEqual(new Set(auths).size, auths.length, "each auth carries a fresh token")
        assert.isAtLeast(stub.calls(tokenRoute).length, 4)
      }).pipe(Effect.scoped))
  })

  it.live("renews the token before its exp without waiting for Wings", () => {
    let sockets: Array<WingsHandshake> = []
    return scenario((stub) => {
      tokens(stub, 2)
      sockets = wings(stub)
    }, (panel) =>
      Effect.gen(function*() {
        yield* panel.openConsole("p1", uuid)
        yield* until(() => nth(sockets, 0).received.filter((m) => m.event === "auth").length >= 2)
      }).pipe(Effect.scoped), { consoleTokenRefreshMargin: "1900 millis" })
  })

  it.live("a close from Wings ends the stream with ConsoleEnded, and sending afterwards fails", () => {
    let sockets: Array<WingsHandshake> = []
    return scenario((stub) => {
      tokens(stub)
      sockets = wings(stub)
    }, (panel) =>
      Effect.gen(function*() {
        const console = yield* panel.openConsole("p1", uuid)
        nth(sockets, 0).socket.close(4409, "server is suspended")
        const error = yield* Effect.flip(Stream.runDrain(console.events))
        assert.deepStrictEqual(error._tag, "ConsoleEnded")
        assert.strictEqual(error.reason, "the server is suspended")
        assert.strictEqual((yield* Effect.flip(console.send({ _tag: "SendLogs" })))._tag, "ConsoleEnded")
      }).pipe(Effect.scoped))
  })

  it.live("the socket closes with the scope", () => {
    let sockets: Array<WingsHandshake> = []
    return scenario((stub) => {
      tokens(stub)
      sockets = wings(stub)
    }, (panel) =>
      Effect.gen(function*() {
        yield* Effect.scoped(panel.openConsole("p1", uuid))
        yield* until(() => nth(sockets, 0).socket.readyState === nth(sockets, 0).socket.CLOSED)
      }).pipe(Effect.scoped))
  })

  it.live("a refused upgrade (wrong Origin: 403) is GamePanelUnavailable without the node's address", () =>
    scenario((stub) => tokens(stub), (panel, stub) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.scoped(panel.openConsole("p1", uuid)))
        assert.strictEqual(error._tag, "GamePanelUnavailable")
        assert.include(error.message, "403")
        assert.notInclude(error.message, new URL(stub.url).host)
      })))

  it.live("a token refused during authentication ends the console", () =>
    scenario((stub) => {
      tokens(stub)
      stub.onWings((h) => h.socket.on("message", () => h.socket.send(frame("jwt error", "jwt: missing connect permission"))))
    }, (panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.scoped(panel.openConsole("p1", uuid)))
        assert.strictEqual(error._tag, "ConsoleEnded")
      })))

  it.live("a suspended server's token request (409) is ServerStateConflict", () =>
    scenario((stub) =>
      stub.route(tokenRoute, () => ({
        status: 409,
        json: { errors: [{ code: "ConflictHttpException", status: "409", detail: "This server is currently suspended." }] }
      })), (panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.scoped(panel.openConsole("p1", uuid)))
        assert.strictEqual(error._tag, "ServerStateConflict")
      })))

  it("keeps a frame's text as `raw` only when it says exactly the event, with string args", () => {
    const exact = frame("console output", "[Server] hi")
    assert.deepStrictEqual(eventOf(exact), { event: "console output", args: ["[Server] hi"], raw: exact })
    assert.deepStrictEqual(eventOf(`{"event":"status"}`), { event: "status", args: [], raw: `{"event":"status"}` })
    assert.deepStrictEqual(eventOf(`{"event":"stats","args":[{"cpu":1}]}`), { event: "stats", args: [`{"cpu":1}`] })
    assert.deepStrictEqual(eventOf(`{"event":"status","args":["running"],"node":"n1"}`), { event: "status", args: ["running"] })
    assert.isUndefined(eventOf("not json"))
    assert.isUndefined(eventOf(`{"args":[]}`))
  })

  it.live("events arriving in a burst all reach the caller, in order", () => {
    let sockets: Array<WingsHandshake> = []
    return scenario((stub) => {
      tokens(stub)
      sockets = wings(stub)
    }, (panel) =>
      Effect.gen(function*() {
        const console = yield* panel.openConsole("p1", uuid)
        const socket = nth(sockets, 0)
        for (let i = 0; i < 50; i++) socket.socket.send(frame("console output", `line ${i}`))
        const events = yield* console.events.pipe(Stream.take(51), Stream.runCollect)
        assert.deepStrictEqual(plain(events).slice(1).map((e) => e.args[0]), Array.from({ length: 50 }, (_, i) => `line ${i}`))
      }).pipe(Effect.scoped))
  })
})
