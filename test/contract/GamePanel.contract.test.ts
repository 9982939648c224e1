// One GamePanel contract, run against the Pterodactyl client on the simulated panel, reached in memory and over
// loopback sockets: an implementation joins the list at the bottom with a layer, a GamePanelHarness and its clock.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Queue, Stream } from "effect"
import { randomUUID } from "node:crypto"
import {
  type ConsoleEvent, type FileCall, type GameConsole, GamePanel, type NewServer,
  PanelServerNotOurs
} from "../../ports/GamePanel.ts"
import {
  type GamePanelHarness, type InstallOutcome, multipart, sandboxHarness, sandboxPanelLayer, simulationHarness, simulationPanelLayer
} from "../support/gamePanelHarness.ts"
import { readBody } from "../support/download.ts"
import { fileCall } from "../support/fileCall.ts"

export interface GamePanelContractSetup<R> {
  readonly layer: Layer.Layer<GamePanel | R, unknown>
  readonly harness: GamePanelHarness<R>
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const text = (bytes: Uint8Array) => decoder.decode(bytes)
const request = (method: string, path: string, query = "", body?: unknown): FileCall =>
  fileCall(method, path, query, body === undefined ? null : typeof body === "string"
    ? { contentType: "text/plain", bytes: encoder.encode(body) }
    : { contentType: "application/json", bytes: encoder.encode(JSON.stringify(body)) })
const jsonOf = (bytes: Uint8Array): unknown => JSON.parse(text(bytes))
/** The names in a `files/list` answer (`file_object` items, reference §4.1). */
const namesIn = (body: unknown) =>
  ((body as { data: ReadonlyArray<{ object: string; attributes: { name: string } }> }).data).map((f) => {
    assert.strictEqual(f.object, "file_object")
    return f.attributes.name
  }).sort()

/** A console read event by event: `until` waits for the next event `match` accepts (bounded on the live clock). */
const watch = (console: GameConsole) =>
  Effect.gen(function*() {
    const seen = yield* Queue.unbounded<ConsoleEvent>()
    yield* console.events.pipe(Stream.runForEach((e) => Queue.offer(seen, e)), Effect.ignore, Effect.forkScoped)
    const until = (match: (e: ConsoleEvent) => boolean, what: string) =>
      Queue.take(seen).pipe(
        Effect.repeat({ until: match }),
        Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.die(new Error(`no ${what} on the console`)) })
      )
    return { until }
  })

export const gamePanelContract = <R>(name: string, setup: GamePanelContractSetup<R>) => {
  const { harness } = setup
  const { panel } = harness
  const run = randomUUID().slice(0, 8)
  const port = GamePanel

  const owner = (n: number) =>
    Effect.gen(function*() {
      const p = yield* port
      const userId = `zh-${run}-u${n}`
      return (yield* p.userFor(panel, userId)) ?? (yield* p.createUser(panel, {
        userId, email: `u${n}-${run}@players.zh.invalid`, username: `zh${run}u${n}`, firstName: "Contract", lastName: "Suite"
      }))
    })
  const publicNode = Effect.flatMap(port, (p) => p.nodes(panel)).pipe(
    Effect.map((nodes) => nodes.find((n) => n.public && !n.maintenance)),
    Effect.flatMap(Effect.fromNullishOr)
  )
  const freeAllocation = Effect.gen(function*() {
    const node = yield* publicNode
    const [first] = yield* (yield* port).freeAllocations(panel, node.id)
    return yield* Effect.fromNullishOr(first)
  })
  /** A Paper server for slot `n` with the egg's defaults, changed only where a test says. */
  const newServer = (n: number, overrides: Partial<NewServer> = {}) =>
    Effect.gen(function*() {
      const p = yield* port
      const egg = yield* p.egg(panel, harness.eggs.paper)
      return {
        name: `contract ${n}`, orderId: `zh-${run}-s${n}`, user: (yield* owner(n)).id, egg: egg.id,
        dockerImage: Object.values(egg.dockerImages)[0] ?? "", startup: egg.startup,
        environment: Object.fromEntries(egg.variables.map((v) => [v.envVariable, v.defaultValue])),
        limits: { memoryMiB: 1024, swapMiB: 0, diskMiB: 2048, io: 500, cpuPercent: 100 }, oomDisabled: true,
        featureLimits: { databases: 0, backups: 2, allocations: 1 }, allocation: (yield* freeAllocation).id,
        startOnCompletion: false, ...overrides
      } satisfies NewServer
    })
  /** Creates the server of slot `n` (deleted when the test ends) with its install ending as `outcome`. */
  const created = (n: number, outcome: InstallOutcome = "succeed", overrides: Partial<NewServer> = {}) =>
    Effect.gen(function*() {
      const p = yield* port
      const spec = yield* newServer(n, overrides)
      yield* harness.setInstallOutcome(spec.orderId, outcome)
      const server = yield* p.createServer(panel, spec)
      yield* Effect.addFinalizer(() => Effect.ignore(p.deleteOurServer(panel, server.id, spec.orderId)))
      return server
    })
  const installed = (n: number, overrides: Partial<NewServer> = {}) =>
    Effect.gen(function*() {
      const server = yield* created(n, "succeed", overrides)
      yield* harness.finishInstalls
      assert.strictEqual((yield* (yield* port).server(panel, server.id)).state, "installed")
      return server
    })
  const client = (uuid: string, call: FileCall) => Effect.flatMap(port, (p) => p.relayFileCall(panel, uuid, call))
  const validation = (fields: ReadonlyArray<{ readonly field: string; readonly rule: string }>) =>
    fields.map(({ field, rule }) => `${field}:${rule}`)

  // Both run on the live clock: the console's game takes its time (≈400 ms to start), and a WebSocket's frames are
  // not fibers a TestClock could wait for.
  layer(setup.layer, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("a panel user is found by its exact external id, never by a prefix of it", () =>
      Effect.gen(function*() {
        const p = yield* port
        const user = yield* owner(1)
        assert.deepStrictEqual(yield* p.userFor(panel, `zh-${run}-u1`), user)
        assert.isNull(yield* p.userFor(panel, `zh-${run}-u`))
        assert.strictEqual(user.username, `zh${run}u1`)
      }))

    it.effect("a second creation for the same user answers their account instead of making another", () =>
      Effect.gen(function*() {
        const p = yield* port
        const first = yield* owner(22)
        const again = yield* p.createUser(panel, {
          userId: `zh-${run}-u22`, email: `u22-${run}@players.zh.invalid`, username: `zh${run}u22`, firstName: "Contract", lastName: "Suite"
        })
        assert.deepStrictEqual(again, first)
      }))

    it.effect("a user with a bad username, or an e-mail or username already taken, is refused field by field", () =>
      Effect.gen(function*() {
        const p = yield* port
        const taken = yield* owner(2)
        const user = { userId: `zh-${run}-x`, email: `x-${run}@players.zh.invalid`, username: `zh${run}x`, firstName: "A", lastName: "B" }
        for (const username of ["-starts-with-dash", "ab", "has space"]) {
          const error = yield* Effect.flip(p.createUser(panel, { ...user, username }))
          assert.strictEqual(error._tag, "PanelValidationFailed", username)
          if (error._tag === "PanelValidationFailed") assert.include(validation(error.fields).join(), "username:", username)
        }
        const error = yield* Effect.flip(p.createUser(panel, { ...user, email: taken.email, username: taken.username }))
        assert.strictEqual(error._tag, "PanelValidationFailed")
        if (error._tag === "PanelValidationFailed") {
          assert.includeMembers(validation(error.fields), ["email:unique", "username:unique"])
        }
      }))

    it.effect("a server claims its memory and disk on its node and holds its allocation until it is deleted", () =>
      Effect.gen(function*() {
        const p = yield* port
        const before = yield* publicNode
        const spec = yield* newServer(3)
        const server = yield* p.createServer(panel, spec)
        const after = (yield* p.nodes(panel)).find((n) => n.id === before.id)
        assert.strictEqual((after?.allocatedMemoryMiB ?? 0) - before.allocatedMemoryMiB, 1024)
        assert.strictEqual((after?.allocatedDiskMiB ?? 0) - before.allocatedDiskMiB, 2048)
        assert.strictEqual(server.allocation, spec.allocation)
        assert.notInclude((yield* p.freeAllocations(panel, before.id)).map((a) => a.id), spec.allocation)
        yield* p.deleteOurServer(panel, server.id, spec.orderId)
        const free = yield* p.freeAllocations(panel, before.id)
        assert.include(free.map((a) => a.id), spec.allocation)
        for (const a of free) assert.isFalse(a.assigned)
        assert.strictEqual((yield* publicNode).allocatedMemoryMiB, before.allocatedMemoryMiB)
      }))

    it.effect("an egg gives its startup, its variables with defaults and what they accept, and its images by display name", () =>
      Effect.gen(function*() {
        const p = yield* port
        const egg = yield* p.egg(panel, harness.eggs.paper)
        const jar = egg.variables.find((v) => v.envVariable === "SERVER_JARFILE")
        assert.strictEqual(jar?.defaultValue, "server.jar")
        assert.isTrue(jar?.accepts.required)
        const accepted = (value: string) =>
          (jar?.accepts.checks ?? []).every((c) => c._tag !== "Matches" || c.pattern.test(value))
        assert.isTrue(accepted("paper.jar"))
        assert.isFalse(accepted("paper.zip"))
        assert.include(egg.startup, "{{SERVER_JARFILE}}")
        const images = Object.entries(egg.dockerImages)
        assert.isNotEmpty(images)
        for (const [display, image] of images) assert.notStrictEqual(display, image)
        if (harness.eggs.listImages !== null) {
          const listed = Object.entries((yield* p.egg(panel, harness.eggs.listImages)).dockerImages)
          assert.isNotEmpty(listed)
          for (const [display, image] of listed) assert.strictEqual(display, image)
        }
        assert.strictEqual((yield* Effect.flip(p.egg(panel, 987654)))._tag, "PanelResourceNotFound")
      }))

    it.effect("a required egg variable left out is refused as environment.<VAR> required", () =>
      Effect.gen(function*() {
        const spec = yield* newServer(4)
        const { SERVER_JARFILE: _, ...environment } = spec.environment
        const error = yield* Effect.flip(Effect.flatMap(port, (p) => p.createServer(panel, { ...spec, environment })))
        assert.strictEqual(error._tag, "PanelValidationFailed")
        if (error._tag === "PanelValidationFailed") assert.include(validation(error.fields), "environment.SERVER_JARFILE:required")
        assert.isNull(yield* Effect.flatMap(port, (p) => p.serverForOrder(panel, spec.orderId)))
      }))

    it.effect("an io weight outside 10–1000 is refused", () =>
      Effect.gen(function*() {
        for (const io of [5, 1001]) {
          const spec = yield* newServer(5, { limits: { memoryMiB: 1024, swapMiB: 0, diskMiB: 2048, io, cpuPercent: 100 } })
          const error = yield* Effect.flip(Effect.flatMap(port, (p) => p.createServer(panel, spec)))
          assert.strictEqual(error._tag, "PanelValidationFailed")
          if (error._tag === "PanelValidationFailed") assert.include(validation(error.fields).join(), "limits.io:")
        }
      }))

    it.effect("an allocation another server holds is refused as allocation.default exists", () =>
      Effect.gen(function*() {
        const first = yield* created(6)
        const spec = yield* newServer(7, { allocation: first.allocation })
        const error = yield* Effect.flip(Effect.flatMap(port, (p) => p.createServer(panel, spec)))
        assert.strictEqual(error._tag, "PanelValidationFailed")
        if (error._tag === "PanelValidationFailed") assert.include(validation(error.fields), "allocation.default:exists")
      }))

    it.effect("a second creation for the same order answers the first server instead of making another", () =>
      Effect.gen(function*() {
        const first = yield* created(8)
        const before = (yield* Effect.flatMap(port, (p) => p.servers(panel))).length
        const again = yield* Effect.flatMap(port, (p) => Effect.flatMap(newServer(8), (spec) => p.createServer(panel, spec)))
        assert.strictEqual(again.id, first.id)
        assert.lengthOf(yield* Effect.flatMap(port, (p) => p.servers(panel)), before)
      }))

    it.effect("a new server is installing, then installed when its install succeeds", () =>
      Effect.gen(function*() {
        const server = yield* created(9)
        assert.strictEqual(server.state, "installing")
        assert.isFalse(server.suspended)
        assert.strictEqual(server.identifier, server.uuid.slice(0, 8))
        yield* harness.finishInstalls
        assert.strictEqual((yield* Effect.flatMap(port, (p) => p.server(panel, server.id))).state, "installed")
      }))

    it.effect("a failed install shows install_failed; a hung one stays installing", () =>
      Effect.gen(function*() {
        const failed = yield* created(10, "fail")
        const hung = yield* created(11, "hang")
        yield* harness.finishInstalls
        const p = yield* port
        assert.strictEqual((yield* p.server(panel, failed.id)).state, "install_failed")
        assert.strictEqual((yield* p.server(panel, hung.id)).state, "installing")
      }))

    it.effect("a server is found by its exact external id, never by a prefix of it", () =>
      Effect.gen(function*() {
        const p = yield* port
        const server = yield* created(12)
        assert.strictEqual((yield* p.serverForOrder(panel, `zh-${run}-s12`))?.uuid, server.uuid)
        assert.isNull(yield* p.serverForOrder(panel, `zh-${run}-s1`))
        assert.strictEqual((yield* Effect.flip(p.server(panel, 987654)))._tag, "PanelResourceNotFound")
      }))

    it.effect("an installing server refuses Client API calls with ServerStateConflict", () =>
      Effect.gen(function*() {
        const server = yield* created(13, "hang")
        const error = yield* Effect.flip(client(server.uuid, request("GET", "files/list", "directory=%2F")))
        assert.strictEqual(error._tag, "ServerStateConflict")
        assert.strictEqual((yield* Effect.flip(Effect.flatMap(port, (p) => p.power(panel, server.uuid, "start"))))._tag, "ServerStateConflict")
      }))

    it.effect("a suspended server refuses power, files and console until unsuspended; suspending twice is fine", () =>
      Effect.gen(function*() {
        const p = yield* port
        const server = yield* installed(14)
        yield* p.suspend(panel, server.id)
        yield* p.suspend(panel, server.id)
        assert.isTrue((yield* p.server(panel, server.id)).suspended)
        assert.strictEqual((yield* p.server(panel, server.id)).state, "suspended")
        assert.strictEqual((yield* Effect.flip(client(server.uuid, request("GET", "files/list", "directory=%2F"))))._tag, "ServerStateConflict")
        assert.strictEqual((yield* Effect.flip(p.power(panel, server.uuid, "start")))._tag, "ServerStateConflict")
        assert.strictEqual((yield* Effect.flip(Effect.scoped(p.openConsole(panel, server.uuid))))._tag, "ServerStateConflict")
        yield* p.unsuspend(panel, server.id)
        assert.deepInclude(yield* p.server(panel, server.id), { state: "installed", suspended: false })
        assert.strictEqual((yield* client(server.uuid, request("GET", "files/list", "directory=%2F"))).status, 200)
        yield* p.power(panel, server.uuid, "start")
      }))

    it.effect("a power action shows on the console, and a console command is answered there", () =>
      Effect.gen(function*() {
        const p = yield* port
        const server = yield* installed(15)
        const gameConsole = yield* p.openConsole(panel, server.uuid)
        const seen = yield* watch(gameConsole)
        yield* seen.until((e) => e.event === "status", "first status")
        yield* p.power(panel, server.uuid, "start")
        yield* seen.until((e) => e.event === "status" && e.args[0] === "running", "status running")
        yield* gameConsole.send({ _tag: "Command", line: "say hello from the contract" })
        yield* seen.until((e) => e.event === "console output" && (e.args[0] ?? "").includes("hello from the contract"), "the answer")
        yield* gameConsole.send({ _tag: "Power", signal: "stop" })
        yield* seen.until((e) => e.event === "status" && e.args[0] === "offline", "status offline")
      }))

    it.effect("files are written, listed, read, renamed and deleted through the Client API", () =>
      Effect.gen(function*() {
        const { uuid } = yield* installed(16)
        assert.strictEqual((yield* client(uuid, request("POST", "files/create-folder", "", { root: "/", name: "contract" }))).status, 204)
        assert.strictEqual((yield* client(uuid, request("POST", "files/write", "file=%2Fcontract%2Fmotd.txt", "hello players"))).status, 204)
        yield* harness.putFile(uuid, "/contract/ops.json", encoder.encode("[]"))
        const listed = yield* client(uuid, request("GET", "files/list", "directory=%2Fcontract"))
        assert.deepStrictEqual(namesIn(jsonOf(listed.body)), ["motd.txt", "ops.json"])
        const read = yield* client(uuid, request("GET", "files/contents", "file=%2Fcontract%2Fmotd.txt"))
        assert.strictEqual(text(read.body), "hello players")
        const moves = { root: "/contract", files: [{ from: "motd.txt", to: "welcome.txt" }] }
        assert.strictEqual((yield* client(uuid, request("PUT", "files/rename", "", moves))).status, 204)
        yield* client(uuid, request("POST", "files/delete", "", { root: "/contract", files: ["ops.json"] }))
        const after = yield* client(uuid, request("GET", "files/list", "directory=%2Fcontract"))
        assert.deepStrictEqual(namesIn(jsonOf(after.body)), ["welcome.txt"])
        const gone = yield* Effect.flip(client(uuid, request("GET", "files/contents", "file=%2Fcontract%2Fmotd.txt")))
        assert.strictEqual(gone._tag, "PanelResourceNotFound")
      }))

    it.effect("an uploaded file comes back byte for byte through a download", () =>
      Effect.gen(function*() {
        const p = yield* port
        const { uuid } = yield* installed(17)
        const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256)
        const body = multipart([{ name: "world.dat", bytes }, { name: "notes.txt", bytes: encoder.encode("n") }])
        yield* p.upload(panel, uuid, {
          directory: "/uploads", contentType: body.contentType, contentLength: body.bytes.length, body: Stream.make(body.bytes)
        })
        const download = yield* p.download(panel, uuid, { _tag: "File", path: "/uploads/world.dat" })
        const back = yield* readBody(download.body)
        assert.deepStrictEqual(new Uint8Array(back), bytes)
        assert.strictEqual(download.filename, "world.dat")
        const listed = yield* client(uuid, request("GET", "files/list", "directory=%2Fuploads"))
        assert.deepStrictEqual(namesIn(jsonOf(listed.body)), ["notes.txt", "world.dat"])
      }))

    it.effect("backups are created, listed with backup_count, locked, and a locked one cannot be deleted", () =>
      Effect.gen(function*() {
        const { uuid } = yield* installed(18)
        const made = jsonOf((yield* client(uuid, request("POST", "backups", "", { name: "nightly" }))).body) as {
          object: string
          attributes: { uuid: string; name: string; is_locked: boolean }
        }
        assert.strictEqual(made.object, "backup")
        assert.deepInclude(made.attributes, { name: "nightly", is_locked: false })
        const backup = made.attributes.uuid
        // A backup still running may be deleted even when locked (the panel protects completed ones): wait for it.
        for (let i = 0; i < 100; i++) {
          const one = jsonOf((yield* client(uuid, request("GET", `backups/${backup}`))).body) as { attributes: { completed_at: string | null } }
          if (one.attributes.completed_at !== null) break
          yield* Effect.sleep("50 millis")
        }
        const list = jsonOf((yield* client(uuid, request("GET", "backups"))).body) as {
          data: ReadonlyArray<{ attributes: { uuid: string } }>
          meta: { backup_count: number }
        }
        assert.deepStrictEqual(list.data.map((b) => b.attributes.uuid), [backup])
        assert.strictEqual(list.meta.backup_count, 1)
        const locked = jsonOf((yield* client(uuid, request("POST", `backups/${backup}/lock`))).body) as {
          attributes: { is_locked: boolean }
        }
        assert.isTrue(locked.attributes.is_locked)
        const refused = yield* Effect.flip(client(uuid, request("DELETE", `backups/${backup}`)))
        assert.strictEqual(refused._tag, "BackupLocked")
        yield* client(uuid, request("POST", `backups/${backup}/lock`))
        assert.strictEqual((yield* client(uuid, request("DELETE", `backups/${backup}`))).status, 204)
        const missing = yield* Effect.flip(client(uuid, request("GET", `backups/${backup}`)))
        assert.strictEqual(missing._tag, "PanelResourceNotFound")
      }))

    it.effect("deleting a server twice succeeds and leaves nothing to find", () =>
      Effect.gen(function*() {
        const p = yield* port
        const server = yield* created(19)
        yield* p.deleteOurServer(panel, server.id, `zh-${run}-s19`)
        yield* p.deleteOurServer(panel, server.id, `zh-${run}-s19`)
        assert.strictEqual((yield* Effect.flip(p.server(panel, server.id)))._tag, "PanelResourceNotFound")
        assert.isNull(yield* p.serverForOrder(panel, `zh-${run}-s19`))
      }))

    it.effect("a server whose external id is not the expected one is not deleted (PanelServerNotOurs)", () =>
      Effect.gen(function*() {
        const p = yield* port
        const server = yield* created(20)
        assert.deepStrictEqual(
          yield* Effect.flip(p.deleteOurServer(panel, server.id, `zh-${run}-someone-else`)),
          new PanelServerNotOurs({ panel, id: server.id, expected: `zh-${run}-someone-else`, found: `zh-${run}-s20` })
        )
        assert.strictEqual((yield* p.server(panel, server.id)).orderId, `zh-${run}-s20`)
      }))

    it.effect("the panel's servers are listed with their external ids", () =>
      Effect.gen(function*() {
        const p = yield* port
        const server = yield* created(21)
        const listed = (yield* p.servers(panel)).find((s) => s.id === server.id)
        assert.deepInclude(listed, { id: server.id, uuid: server.uuid, orderId: `zh-${run}-s21` })
      }))

    it.effect("an unknown panel fails with PanelUnknown", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.flatMap(port, (p) => p.nodes("no-such-panel")))
        assert.deepInclude(error, { _tag: "PanelUnknown", panel: "no-such-panel" })
      }))
  })
}

describe("GamePanel contract", () => {
  gamePanelContract("Pterodactyl client on the simulated panel in memory", { layer: simulationPanelLayer, harness: simulationHarness() })
  gamePanelContract("Pterodactyl client on the sandbox panel", { layer: sandboxPanelLayer, harness: sandboxHarness() })
})

