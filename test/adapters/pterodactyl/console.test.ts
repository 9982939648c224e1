// The live console (reference/pterodactyl.md §3.1–§3.3), specified against the simulated panel and Wings in memory:
// the token fetched with the client key, the socket opened with the panel's Origin, `auth` before anything else,
// renewal on the same socket (asked by Wings, or due by the token's `exp`), the token lifecycle hidden from `events`,
// and a close from Wings ending the stream with ConsoleEnded.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { eventOf } from "../../../adapters/pterodactyl/console.ts"
import type { PterodactylSimulation } from "../../../adapters/pterodactyl/sandbox/PterodactylSimulation.ts"
import type { ConsoleEvent } from "../../../ports/GamePanel.ts"
import { advanceWithPanel, panelTurn } from "../../support/simulatedPanel.ts"
import { aServer, calls, onLoopback, onSimulation } from "./onSimulation.ts"

const frame = (event: string, ...args: ReadonlyArray<string>) => JSON.stringify({ event, args })

const until = (condition: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300 && !condition(); i++) yield* Effect.sleep("10 millis")
    assert.isTrue(condition(), "condition not reached in time")
  })

/** Console tokens the panel has issued so far. */
const consoleTokens = (sim: PterodactylSimulation) => sim.control.tokensIssued().filter((t) => t.kind === "websocket").length

/** Events without `raw`, for comparing what they say. */
const plain = (events: Iterable<ConsoleEvent>) => Array.from(events, (e) => ({ event: e.event, args: e.args }))

const lifecycle = ["auth success", "token expiring", "token expired", "jwt error"]

describe("PterodactylGamePanel console", () => {
  it.live("authenticates with the panel's token and Origin, relays events and frames", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const console = yield* panel.openConsole("p1", server.uuid)
        const [upgrade] = sim.control.requests().filter((r) => r.target === "wings")
        assert.deepStrictEqual([upgrade?.path, upgrade?.origin, upgrade?.key], [`/api/servers/${server.uuid}/ws`, sim.url, null])
        assert.strictEqual(calls(sim, `GET /api/client/servers/${server.uuid}/websocket`)[0]?.key, "client")
        sim.control.emitConsole(server.uuid, "[Server] Done (3.2s)!")
        const events = yield* console.events.pipe(Stream.filter((e) => e.event !== "stats"), Stream.take(2), Stream.runCollect)
        assert.deepStrictEqual(plain(events), [
          { event: "status", args: ["offline"] },
          { event: "console output", args: ["[Server] Done (3.2s)!"] }
        ])
        // A command reaches the game as a `send command` frame: the running server echoes it.
        yield* console.send({ _tag: "Power", signal: "start" })
        yield* console.events.pipe(Stream.filter((e) => e.event === "status" && e.args[0] === "running"), Stream.take(1), Stream.runDrain)
        yield* console.send({ _tag: "Command", line: "say hi" })
        const echoed = yield* console.events.pipe(Stream.filter((e) => e.event === "console output" && (e.args[0] ?? "").includes("[Server] hi")), Stream.take(1), Stream.runCollect)
        assert.lengthOf(echoed, 1)
      }).pipe(Effect.scoped), { simulation: { installDurationMs: 0 } }))

  it.live("re-authenticates on the same socket when Wings says the token is expiring or refuses it, and hides it", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const console = yield* panel.openConsole("p1", server.uuid)
        const seen: Array<ConsoleEvent> = []
        const collected = yield* console.events.pipe(
          Stream.tap((e) => Effect.sync(() => seen.push(e))),
          Stream.filter((e) => e.event === "console output" && e.args[0] === "after renewal"),
          Stream.take(1),
          Stream.runDrain,
          Effect.forkChild
        )
        // A 2 s token: Wings checks every 500 ms and says `token expiring` (under 60 s left) each time.
        yield* until(() => consoleTokens(sim) >= 3)
        // Every token issued so far denied (as Wings' denylist after a reinstall): the next frame gets `jwt error`.
        sim.control.expireWingsTokens()
        const before = consoleTokens(sim)
        yield* console.send({ _tag: "SendLogs" })
        yield* until(() => consoleTokens(sim) > before)
        yield* until(() => {
          sim.control.emitConsole(server.uuid, "after renewal")
          return seen.some((e) => e.args[0] === "after renewal")
        })
        yield* Fiber.join(collected)
        assert.strictEqual(sim.control.consoleSockets(server.uuid), 1, "one socket for the whole session")
        assert.strictEqual(sim.control.requests().filter((r) => r.target === "wings").length, 1, "one upgrade")
        assert.isFalse(seen.some((e) => lifecycle.includes(e.event)), "no token lifecycle event reaches the caller")
      }).pipe(Effect.scoped), { simulation: { wingsTokenTtlMs: 2_000 }, adapter: { consoleTokenRefreshMargin: "0 millis" } }))

  it.live("a renewal slower than the token's life (Wings says `token expired`) is survived on the same socket", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const console = yield* panel.openConsole("p1", server.uuid)
        // The first renewal's request gets no answer: the 400 ms token runs out while the adapter waits, then retries.
        sim.control.failNext({ kind: "hang", path: `/api/client/servers/${server.uuid}/websocket`, times: 1, status: 0 })
        const seen: Array<ConsoleEvent> = []
        yield* console.events.pipe(Stream.tap((e) => Effect.sync(() => seen.push(e))), Stream.runDrain, Effect.forkChild)
        yield* until(() => consoleTokens(sim) >= 3)
        yield* until(() => {
          sim.control.emitConsole(server.uuid, "after expiry")
          return seen.some((e) => e.args[0] === "after expiry")
        })
        assert.strictEqual(sim.control.consoleSockets(server.uuid), 1)
        assert.isFalse(seen.some((e) => lifecycle.includes(e.event)), "no token lifecycle event reaches the caller")
      }).pipe(Effect.scoped), {
        simulation: { wingsTokenTtlMs: 400 },
        adapter: { consoleTokenRefreshMargin: "0 millis", requestTimeout: "600 millis" }
      }))

  it.effect("renews the token before its exp without waiting for Wings", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        yield* panel.openConsole("p1", server.uuid)
        // A 200 s token: Wings says `token expiring` once under 60 s are left (at 150 s); the adapter's 90 s margin
        // makes the renewal due at 110 s, its own.
        yield* advanceWithPanel("10 seconds", 10)
        assert.strictEqual(consoleTokens(sim), 1)
        yield* advanceWithPanel("10 seconds", 2)
        for (let i = 0; i < 100 && consoleTokens(sim) < 2; i++) yield* panelTurn
        assert.strictEqual(consoleTokens(sim), 2)
        assert.strictEqual(sim.control.consoleSockets(server.uuid), 1)
      }).pipe(Effect.scoped), { simulation: { wingsTokenTtlMs: 200_000 }, adapter: { consoleTokenRefreshMargin: "90 seconds" } }))

  it.live("a close from Wings ends the stream with ConsoleEnded, and sending afterwards fails", () =>
    onSimulation((panel) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const console = yield* panel.openConsole("p1", server.uuid)
        // Suspending a server closes its console sockets with 4409 (Wings ≥ 1.11).
        yield* panel.suspend("p1", server.id)
        const error = yield* Effect.flip(Stream.runDrain(console.events))
        assert.deepStrictEqual(error._tag, "ConsoleEnded")
        assert.strictEqual(error.reason, "the server is suspended")
        assert.strictEqual((yield* Effect.flip(console.send({ _tag: "SendLogs" })))._tag, "ConsoleEnded")
      }).pipe(Effect.scoped)))

  it.live("the socket closes with the scope", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        yield* Effect.scoped(Effect.gen(function*() {
          yield* panel.openConsole("p1", server.uuid)
          assert.strictEqual(sim.control.consoleSockets(server.uuid), 1)
        }))
        yield* until(() => sim.control.consoleSockets(server.uuid) === 0)
      })))

  it.live("a refused upgrade (403) is GamePanelUnavailable without the node's address", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        sim.control.failNext({ path: `/api/servers/${server.uuid}/ws`, times: 1, status: 403 })
        const error = yield* Effect.flip(Effect.scoped(panel.openConsole("p1", server.uuid)))
        assert.strictEqual(error._tag, "GamePanelUnavailable")
        assert.include(error.message, "403")
        assert.notInclude(error.message, "wings.pterodactyl.invalid")
      })))

  // On loopback: the adapter's handshake deadline is the WebSocket client's, on the socket's own timer.
  it.live("a node that drops or never answers the upgrade is GamePanelUnavailable", () =>
    onLoopback((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        for (const kind of ["drop", "hang"] as const) {
          sim.control.failNext({ kind, path: `/api/servers/${server.uuid}/ws`, times: 1, status: 0 })
          const error = yield* Effect.flip(Effect.scoped(panel.openConsole("p1", server.uuid)))
          assert.strictEqual(error._tag, "GamePanelUnavailable", kind)
        }
        assert.strictEqual(sim.control.consoleSockets(server.uuid), 0)
      }), { adapter: { consoleOpenTimeout: "300 millis" } }))

  it.live("a token refused during authentication ends the console", () =>
    // A token already past its exp when Wings reads it (a node whose clock runs ahead of the panel's).
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const error = yield* Effect.flip(Effect.scoped(panel.openConsole("p1", server.uuid)))
        assert.strictEqual(error._tag, "ConsoleEnded")
        yield* until(() => sim.control.consoleSockets(server.uuid) === 0)
      }), { simulation: { wingsTokenTtlMs: 0 } }))

  it.live("a suspended server's token request (409) is ServerStateConflict", () =>
    onSimulation((panel) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        yield* panel.suspend("p1", server.id)
        const error = yield* Effect.flip(Effect.scoped(panel.openConsole("p1", server.uuid)))
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

  it.live("events arriving in a burst all reach the caller, in order", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const console = yield* panel.openConsole("p1", server.uuid)
        for (let i = 0; i < 50; i++) sim.control.emitConsole(server.uuid, `line ${i}`)
        const events = yield* console.events.pipe(Stream.filter((e) => e.event === "console output"), Stream.take(50), Stream.runCollect)
        assert.deepStrictEqual(plain(events).map((e) => e.args[0]), Array.from({ length: 50 }, (_, i) => `line ${i}`))
      }).pipe(Effect.scoped)))
})
