// Every GamePanel operation end to end against the sandbox Pterodactyl (adapters/pterodactyl/sandbox): a customer's life
// from panel user to deleted server, through install, power, the console with token renewal, files, uploads and
// downloads, backups, suspension and its 409s.
import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Stream } from "effect"
import { layerWith } from "../../../adapters/pterodactyl/PterodactylGamePanel.ts"
import { onePanel } from "../../../adapters/pterodactyl/SimulatedGamePanel.ts"
import { type SandboxPterodactyl, sandboxPterodactyl } from "../../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { type ConsoleEvent, GamePanel, type NewServer } from "../../../ports/GamePanel.ts"
import { readBody } from "../../support/download.ts"
import { fileCall } from "../../support/fileCall.ts"
import { adapterOver } from "./onSimulation.ts"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const poll = <A, E>(read: Effect.Effect<A, E>, done: (a: A) => boolean, what: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      const value = yield* read
      if (done(value)) return value
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.die(new Error(`${what}: not reached in time`))
  })

const request = fileCall

const json = (value: unknown) => ({ contentType: "application/json", bytes: encoder.encode(JSON.stringify(value)) })

/** Waits on the console's events for one matching `match`, collecting every event seen on the way. */
const awaitEvent = (events: Stream.Stream<ConsoleEvent, unknown>, seen: Array<ConsoleEvent>, match: (e: ConsoleEvent) => boolean) =>
  events.pipe(
    Stream.tap((e) => Effect.sync(() => seen.push(e))),
    Stream.filter(match),
    Stream.take(1),
    Stream.runDrain,
    Effect.timeout("5 seconds")
  )

describe("PterodactylGamePanel against the sandbox", () => {
  it.live("every port operation, end to end", () =>
    Effect.gen(function*() {
      const sandbox = yield* sandboxPterodactyl({ installDurationMs: 200, wingsTokenTtlMs: 2_000, onWarning: () => {} })
      yield* Effect.gen(function*() {
        const panel = yield* GamePanel
        const p = "p1"

        // Users: exact lookup by our id, creation, and lookup again.
        assert.isNull(yield* panel.userFor(p, "usr_1"))
        const user = yield* panel.createUser(p, {
          userId: "usr_1",
          email: "usr_1@users.zh.invalid",
          username: "zh_usr_1",
          firstName: "Ann",
          lastName: "Lee"
        })
        assert.strictEqual((yield* panel.userFor(p, "usr_1"))?.id, user.id)

        // Placement inputs.
        const nodes = yield* panel.nodes(p)
        assert.deepStrictEqual(nodes.map((n) => [n.id, n.public, n.maintenance]), [[1, true, false]])
        const free = yield* panel.freeAllocations(p, 1)
        assert.deepStrictEqual(free.map((a) => a.port), [25565, 25566, 25567, 25568, 25569, 25570, 25571, 25572, 25573, 25574])
        const paper = yield* panel.egg(p, 5)
        assert.strictEqual(paper.nest, 1)
        assert.deepStrictEqual(paper.variables.map((v) => v.envVariable).sort(), ["BUILD_NUMBER", "MINECRAFT_VERSION", "SERVER_JARFILE"])
        const bedrock = yield* panel.egg(p, 6)
        assert.strictEqual(bedrock.nest, 2)
        assert.deepStrictEqual(bedrock.dockerImages, { "ghcr.io/pterodactyl/yolks:debian": "ghcr.io/pterodactyl/yolks:debian" })

        // Creation: a required variable missing is a 422 per field; then the real one.
        const environment = Object.fromEntries(paper.variables.map((v) => [v.envVariable, v.defaultValue]))
        const allocation = free[0]?.id ?? 0
        const spec: NewServer = {
          name: "survival",
          orderId: "gs_1",
          user: user.id,
          egg: paper.id,
          dockerImage: Object.values(paper.dockerImages)[0] ?? "",
          startup: paper.startup,
          environment,
          limits: { memoryMiB: 1024, swapMiB: 0, diskMiB: 4096, io: 500, cpuPercent: 100 },
          oomDisabled: true,
          featureLimits: { databases: 0, backups: 2, allocations: 1 },
          allocation,
          startOnCompletion: false
        }
        const { SERVER_JARFILE: _, ...withoutJar } = environment
        const invalid = yield* Effect.flip(panel.createServer(p, { ...spec, orderId: "gs_0", environment: withoutJar }))
        assert.strictEqual(invalid._tag, "PanelValidationFailed")
        if (invalid._tag === "PanelValidationFailed") {
          assert.deepInclude(invalid.fields.map((f) => ({ field: f.field, rule: f.rule })), { field: "environment.SERVER_JARFILE", rule: "required" })
        }
        const created = yield* panel.createServer(p, spec)
        assert.deepStrictEqual([created.state, created.allocation, created.user], ["installing", allocation, user.id])
        assert.strictEqual((yield* panel.serverForOrder(p, "gs_1"))?.id, created.id)
        assert.isNull(yield* panel.serverForOrder(p, "gs"))
        assert.notInclude((yield* panel.freeAllocations(p, 1)).map((a) => a.id), allocation)
        yield* poll(panel.server(p, created.id), (s) => s.state === "installed", "install")

        // Power and the console, kept open past the token's lifetime: renewed on the same socket.
        yield* Effect.scoped(Effect.gen(function*() {
          const console = yield* panel.openConsole(p, created.uuid)
          const seen: Array<ConsoleEvent> = []
          yield* panel.power(p, created.uuid, "start")
          yield* awaitEvent(console.events, seen, (e) => e.event === "status" && e.args[0] === "running")
          yield* Effect.sleep("2500 millis")
          yield* console.send({ _tag: "Command", line: "say hello" })
          yield* awaitEvent(console.events, seen, (e) => e.event === "console output" && (e.args[0] ?? "").includes("[Server] hello"))
          const lifecycle = ["auth success", "token expiring", "token expired", "jwt error"]
          assert.isFalse(seen.some((e) => lifecycle.includes(e.event)), "no token lifecycle event reaches the caller")
          assert.strictEqual(sandbox.control.consoleSockets(created.uuid), 1)
          const websocketTokens = sandbox.control.tokensIssued().filter((t) => t.kind === "websocket")
          assert.isAtLeast(websocketTokens.length, 2, "the token was renewed")
        }))

        // Files through the relay.
        const listing = yield* panel.relayFileCall(p, created.uuid, request("GET", "files/list", "directory=%2F"))
        assert.include(decoder.decode(listing.body), "server.properties")
        yield* panel.relayFileCall(p, created.uuid, request("POST", "files/write", "file=%2Fhello.txt", {
          contentType: "text/plain",
          bytes: encoder.encode("hi there\n")
        }))
        const contents = yield* panel.relayFileCall(p, created.uuid, request("GET", "files/contents", "file=%2Fhello.txt"))
        assert.strictEqual(decoder.decode(contents.body), "hi there\n")

        // Upload, then download the same bytes.
        const payload = Buffer.alloc(256 * 1024, 0x5a)
        const boundary = "zh-boundary-1"
        const multipart = Buffer.concat([
          Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="up.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
          payload,
          Buffer.from(`\r\n--${boundary}--\r\n`)
        ])
        yield* panel.upload(p, created.uuid, {
          directory: "/uploads",
          contentType: `multipart/form-data; boundary=${boundary}`,
          contentLength: multipart.byteLength,
          body: Stream.fromIterable([multipart.subarray(0, 1000), multipart.subarray(1000)])
        })
        const downloaded = yield* Effect.scoped(Effect.gen(function*() {
          const d = yield* panel.download(p, created.uuid, { _tag: "File", path: "/uploads/up.bin" })
          return { d, bytes: yield* readBody(d.body) }
        }))
        assert.isTrue(downloaded.bytes.equals(payload))
        assert.deepStrictEqual([downloaded.d.contentLength, downloaded.d.filename], [payload.byteLength, "up.bin"])

        // A backup, completed, then downloaded.
        const backupAnswer = yield* panel.relayFileCall(p, created.uuid, request("POST", "backups", "", json({ name: "b1" })))
        const backupUuid = String(JSON.parse(decoder.decode(backupAnswer.body)).attributes.uuid)
        yield* poll(
          panel.relayFileCall(p, created.uuid, request("GET", `backups/${backupUuid}`)),
          (a) => JSON.parse(decoder.decode(a.body)).attributes.completed_at !== null,
          "backup"
        )
        const backupBytes = yield* Effect.scoped(Effect.gen(function*() {
          const d = yield* panel.download(p, created.uuid, { _tag: "Backup", uuid: backupUuid })
          return { length: d.contentLength, received: (yield* readBody(d.body)).byteLength }
        }))
        assert.isAbove(backupBytes.received, 0)
        assert.strictEqual(backupBytes.length, backupBytes.received)

        // Suspension: the Client API answers 409, typed; suspending twice is fine; unsuspending lifts it.
        yield* panel.suspend(p, created.id)
        yield* panel.suspend(p, created.id)
        assert.isTrue((yield* panel.server(p, created.id)).suspended)
        const conflict = yield* Effect.flip(panel.relayFileCall(p, created.uuid, request("GET", "files/list", "directory=%2F")))
        assert.strictEqual(conflict._tag, "ServerStateConflict")
        assert.strictEqual((yield* Effect.flip(panel.power(p, created.uuid, "start")))._tag, "ServerStateConflict")
        yield* panel.unsuspend(p, created.id)
        assert.strictEqual((yield* panel.relayFileCall(p, created.uuid, request("GET", "files/list", "directory=%2F"))).status, 200)

        // Deletion, twice.
        yield* panel.deleteOurServer(p, created.id, "gs_1")
        assert.strictEqual((yield* Effect.flip(panel.server(p, created.id)))._tag, "PanelResourceNotFound")
        yield* panel.deleteOurServer(p, created.id, "gs_1")

        // Every request asked for JSON, with a key.
        for (const r of sandbox.control.requests().filter((r) => r.target === "panel")) {
          assert.strictEqual(r.accept, "application/json", `${r.method} ${r.path}`)
          assert.isTrue(r.authorization, `${r.method} ${r.path}`)
        }
        for (const r of sandbox.control.requests().filter((r) => r.target === "wings")) {
          assert.isFalse(r.authorization, `no key is sent to the node: ${r.method} ${r.path}`)
        }
      }).pipe(Effect.provide(adapterOver(sandbox, { requestTimeout: "5 seconds" })))
    }).pipe(Effect.scoped), { timeout: 30_000 })

  it.live("allocations are read page by page; throttled Client-API calls fail fast; 5xx are retried", () =>
    Effect.gen(function*() {
      const sandbox = yield* sandboxPterodactyl({ installDurationMs: 0, onWarning: () => {} })
      yield* Effect.gen(function*() {
        const panel = yield* GamePanel
        const free = yield* panel.freeAllocations("p1", 1)
        assert.strictEqual(free.length, 10)
        const pages = sandbox.control.requests().filter((r) => r.path === "/api/application/nodes/1/allocations")
        assert.deepStrictEqual(pages.map((r) => r.query["page"]), ["1", "2", "3", "4"])

        sandbox.control.failNext({ method: "GET", path: "/api/application/nodes", times: 2, status: 503 })
        assert.strictEqual((yield* panel.nodes("p1")).length, 1)

        const uuid = "00000000-0000-4000-8000-000000000000"
        sandbox.control.throttleNext({ times: 1, retryAfterSeconds: 30 })
        const first = yield* Effect.flip(panel.power("p1", uuid, "start"))
        assert.deepStrictEqual([first._tag, first._tag === "GamePanelThrottled" ? first.retryAfterSeconds : 0], ["GamePanelThrottled", 30])
        const before = sandbox.control.requests().length
        const second = yield* Effect.flip(panel.relayFileCall("p1", uuid, request("GET", "files/list")))
        assert.strictEqual(second._tag, "GamePanelThrottled")
        assert.strictEqual(sandbox.control.requests().length, before, "the panel is not asked while blocked")
      }).pipe(Effect.provide(adapterOver(sandbox, { requestTimeout: "5 seconds", pageSize: 3 })))
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
