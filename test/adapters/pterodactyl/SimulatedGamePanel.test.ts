// Specification of the GamePanel domain tests run on (the Pterodactyl adapter over the simulated panel, in memory):
// its installs follow the TestClock, faults and counts come from the simulation's control, consoles and transfers
// work without a socket, and the backup limit and throttle hold as on the panel.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as SimulatedGamePanel from "../../../adapters/pterodactyl/SimulatedGamePanel.ts"
import { type FileCall, GamePanel, type NewServer } from "../../../ports/GamePanel.ts"
import { fileCall } from "../../support/fileCall.ts"
import { multipart } from "../../support/gamePanelHarness.ts"
import { panelControl, panelPaths, panelRequests, panelServers, panelTurn } from "../../support/simulatedPanel.ts"

const encoder = new TextEncoder()
const spec = (orderId: string, allocation: number, backups = 5): NewServer => ({
  name: orderId, orderId, user: 1, egg: 5, dockerImage: "ghcr.io/pterodactyl/yolks:java_21", startup: "java -jar server.jar",
  environment: { SERVER_JARFILE: "server.jar", MINECRAFT_VERSION: "latest", BUILD_NUMBER: "latest" },
  limits: { memoryMiB: 1024, swapMiB: 0, diskMiB: 2048, io: 500, cpuPercent: 100 }, oomDisabled: true,
  featureLimits: { databases: 0, backups, allocations: 1 }, allocation, startOnCompletion: false
})
const create = (orderId: string, allocation: number, backups?: number) =>
  Effect.flatMap(GamePanel, (p) => p.createServer("sandbox", spec(orderId, allocation, backups)))
const state = (id: number) => Effect.map(Effect.flatMap(GamePanel, (p) => p.server("sandbox", id)), (s) => s.state)
const createBackup: FileCall = fileCall("POST", "backups", "", { contentType: "application/json", bytes: encoder.encode("{}") })

describe("the simulated game panel", () => {
  layer(SimulatedGamePanel.layer({ installDurationMs: 20_000 }))("installs on the TestClock", (it) => {
    it.effect("an install reports its outcome once its duration has passed on the clock", () =>
      Effect.gen(function*() {
        const server = yield* create("timed", 1)
        yield* TestClock.adjust("19 seconds")
        assert.strictEqual(yield* state(server.id), "installing")
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* state(server.id), "installed")
      }))

    it.effect("an outcome set while the install runs decides it; an install ending while suspended stays suspended", () =>
      Effect.gen(function*() {
        const p = yield* GamePanel
        const server = yield* create("suspended-mid-install", 2)
        yield* Effect.map(panelControl, (c) => c.setInstallOutcome({ externalId: "suspended-mid-install" }, "fail"))
        yield* p.suspend("sandbox", server.id)
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(yield* state(server.id), "suspended")
        yield* p.unsuspend("sandbox", server.id)
        assert.strictEqual(yield* state(server.id), "installed")
        const failing = yield* create("fails-later", 3)
        yield* Effect.map(panelControl, (c) => c.setInstallOutcome({ externalId: "fails-later" }, "fail"))
        yield* TestClock.adjust("20 seconds")
        assert.strictEqual(yield* state(failing.id), "install_failed")
      }))

    it.effect("an external id changed on the panel is what the port then reads", () =>
      Effect.gen(function*() {
        const server = yield* create("renamed", 4)
        yield* Effect.map(panelControl, (c) => c.setExternalId(server.id, "whmcs-service-17"))
        assert.strictEqual((yield* Effect.flatMap(GamePanel, (p) => p.server("sandbox", server.id))).orderId, "whmcs-service-17")
        assert.isNull(yield* Effect.flatMap(GamePanel, (p) => p.serverForOrder("sandbox", "renamed")))
      }))
  })

  layer(SimulatedGamePanel.layer())("faults, counts, consoles, backups", (it) => {
    const ready = (orderId: string, allocation: number, backups?: number) =>
      Effect.gen(function*() {
        const server = yield* create(orderId, allocation, backups)
        yield* TestClock.adjust("30 seconds")
        return server
      })

    it.effect("a failing panel answers the port with GamePanelUnavailable once per call, and every request is counted", () =>
      Effect.gen(function*() {
        yield* Effect.map(panelControl, (c) => c.failNext({ method: "POST", path: panelPaths.users, times: 1, status: 502 }))
        const user = { userId: "u", email: "u@players.zh.invalid", username: "user1", firstName: "A", lastName: "B" }
        const down = yield* Effect.flip(Effect.flatMap(GamePanel, (p) => p.createUser("sandbox", user)))
        assert.strictEqual(down._tag, "GamePanelUnavailable")
        assert.include(down.message, "HTTP 502")
        assert.strictEqual((yield* Effect.flatMap(GamePanel, (p) => p.createUser("sandbox", user))).userId, "u")
        assert.strictEqual(yield* panelRequests("POST", panelPaths.users), 2)
      }))

    it.effect("a console opens without a socket and is counted on the server until its scope closes", () =>
      Effect.gen(function*() {
        const server = yield* ready("console", 1)
        const count = Effect.map(panelControl, (c) => c.consoleSockets(server.uuid))
        yield* Effect.scoped(Effect.gen(function*() {
          const gameConsole = yield* Effect.flatMap(GamePanel, (p) => p.openConsole("sandbox", server.uuid))
          assert.strictEqual(yield* count, 1)
          yield* gameConsole.send({ _tag: "SendStats" })
          const [stats] = yield* Stream.runCollect(Stream.take(Stream.filter(gameConsole.events, (e) => e.event === "stats"), 1))
          assert.strictEqual(stats?.event, "stats")
        }))
        for (let i = 0; i < 100 && (yield* count) > 0; i++) yield* panelTurn
        assert.strictEqual(yield* count, 0)
      }))

    it.effect("backups stop at the server's limit, and more than two in ten minutes are throttled", () =>
      Effect.gen(function*() {
        const backup = (uuid: string) => Effect.flatMap(GamePanel, (p) => p.relayFileCall("sandbox", uuid, createBackup))
        const limited = yield* ready("limited", 2, 1)
        yield* backup(limited.uuid)
        const full = yield* Effect.flip(backup(limited.uuid))
        assert.strictEqual(full._tag, "BackupLimitReached")
        const busy = yield* ready("busy", 3)
        yield* backup(busy.uuid)
        yield* backup(busy.uuid)
        assert.deepInclude(yield* Effect.flip(backup(busy.uuid)), { _tag: "GamePanelThrottled", retryAfterSeconds: 600 })
        yield* TestClock.adjust("10 minutes")
        yield* backup(busy.uuid)
      }))

    it.effect("an upload writes only the files parts of the multipart body, without a socket", () =>
      Effect.gen(function*() {
        const server = yield* ready("upload", 4)
        const body = multipart([{ name: "a.txt", bytes: encoder.encode("a") }], { directory: "/ignored" })
        yield* Effect.flatMap(GamePanel, (p) =>
          p.upload("sandbox", server.uuid, { directory: "/", contentType: body.contentType, contentLength: null, body: Stream.make(body.bytes) }))
        const control = yield* panelControl
        assert.strictEqual(control.readFile(server.uuid, "/a.txt")?.toString("utf8"), "a")
        assert.isUndefined(control.readFile(server.uuid, "/ignored/a.txt"))
        assert.strictEqual((yield* panelServers).find((s) => s.uuid === server.uuid)?.status, null)
      }))
  })

  // The live clock: the game and Wings' token checks take their time, over a WebSocket that is two ends of a stream.
  layer(SimulatedGamePanel.layer({ installDurationMs: 0, wingsTokenTtlMs: 1_000 }), { excludeTestServices: true })(
    "a console without a socket",
    (it) => {
      it.effect("renews its token on the same socket before it expires, and after Wings forgets every token", () =>
        Effect.gen(function*() {
          const p = yield* GamePanel
          const server = yield* create("renewed", 5)
          const control = yield* panelControl
          const consoleTokens = () => control.tokensIssued().filter((t) => t.kind === "websocket" && t.serverUuid === server.uuid).length
          const gameConsole = yield* p.openConsole("sandbox", server.uuid)
          const answered = (line: string) =>
            Effect.gen(function*() {
              yield* gameConsole.send({ _tag: "Command", line: `say ${line}` })
              yield* Stream.runHead(Stream.filter(gameConsole.events, (e) => (e.args[0] ?? "").includes(`[Server] ${line}`)))
            }).pipe(Effect.timeout("5 seconds"))
          yield* p.power("sandbox", server.uuid, "start")
          yield* Stream.runHead(Stream.filter(gameConsole.events, (e) => e.event === "status" && e.args[0] === "running"))
          yield* Effect.sleep("1500 millis")
          assert.isAtLeast(consoleTokens(), 2)
          yield* answered("after renewal")
          control.expireWingsTokens()
          const before = consoleTokens()
          yield* gameConsole.send({ _tag: "SendStats" })
          yield* Effect.sleep("300 millis")
          assert.isAbove(consoleTokens(), before)
          yield* answered("after a Wings restart")
          assert.strictEqual(control.consoleSockets(server.uuid), 1)
        }).pipe(Effect.scoped))
    }
  )
})
