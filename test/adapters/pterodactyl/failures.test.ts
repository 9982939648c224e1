// How the adapter reads the panel's failures (reference/pterodactyl.md §1.3–§1.5), specified against the simulated
// panel in memory: the error envelope onto the port's typed errors, bounded retries of transient failures, Retry-After
// waited out by Application-API calls but never by Client-API calls, the per-panel "blocked until" memory, and no
// key, token, signed URL or address in any error.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { FileCall } from "../../../ports/GamePanel.ts"
import { aServer, calls, onSimulation } from "./onSimulation.ts"

const uuid = "4600605e-6e5a-4f29-b3c4-fc01b7aa1192"
const listFiles: FileCall = { operation: { _tag: "ListFiles" }, query: "directory=%2F", body: null }
const createBackup: FileCall = { operation: { _tag: "CreateBackup" }, query: "", body: null }
const filesList = (server: string) => `GET /api/client/servers/${server}/files/list`

describe("PterodactylGamePanel failures", () => {
  it.live("a 422 is PanelValidationFailed with one entry per field and rule", () =>
    onSimulation((panel) =>
      Effect.gen(function*() {
        yield* panel.createUser("p1", { userId: "v", email: "e@x.invalid", username: "taken", firstName: "a", lastName: "b" })
        // A taken e-mail may be this user's own account: it is looked for (not there) before the refusal stands.
        const error = yield* Effect.flip(panel.createUser("p1", { userId: "u", email: "e@x.invalid", username: "-", firstName: "a", lastName: "b" }))
        assert.strictEqual(error._tag, "PanelValidationFailed")
        if (error._tag !== "PanelValidationFailed") return
        assert.deepStrictEqual(error.fields.map((f) => [f.field, f.rule]), [["email", "unique"], ["username", "p_username"]])
        assert.strictEqual(error.fields[0]?.detail, "The email has already been taken.")
      })))

  it.live("409 is ServerStateConflict, 404 PanelResourceNotFound, another 4xx a refusal named in our words", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        sim.control.failNext({ method: "POST", path: `/api/application/servers/${server.id}/suspend`, times: 1, status: 409, detail: "being transferred" })
        const conflict = yield* Effect.flip(panel.suspend("p1", server.id))
        assert.deepStrictEqual([conflict._tag, conflict._tag === "ServerStateConflict" ? conflict.detail : ""], ["ServerStateConflict", "being transferred"])
        assert.strictEqual((yield* Effect.flip(panel.server("p1", server.id + 1)))._tag, "PanelResourceNotFound")
        // The server's feature limit is 2 backups: the third is a 400 TooManyBackupsException.
        yield* panel.relayFileCall("p1", server.uuid, createBackup)
        yield* panel.relayFileCall("p1", server.uuid, createBackup)
        const rejected = yield* Effect.flip(panel.relayFileCall("p1", server.uuid, createBackup))
        assert.strictEqual(rejected._tag, "BackupLimitReached")
      }), { simulation: { backupThrottle: { limit: 10, periodMs: 600_000 } } }))

  it.live("5xx is retried within the bound, then GamePanelUnavailable", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        sim.control.failNext({ method: "GET", path: `/api/application/servers/${server.id}`, times: 2, status: 503 })
        assert.strictEqual((yield* panel.server("p1", server.id)).id, server.id)
        assert.strictEqual(calls(sim, `GET /api/application/servers/${server.id}`).length, 3)
        sim.control.failNext({ method: "GET", path: "/api/application/servers/99", times: 5, status: 500, code: "QueryException" })
        const error = yield* Effect.flip(panel.server("p1", 99))
        assert.strictEqual(error._tag, "GamePanelUnavailable")
        assert.strictEqual(calls(sim, "GET /api/application/servers/99").length, 3, "one attempt and two retries")
      })))

  it.live("a dropped connection and a panel that never answers are GamePanelUnavailable after the retries", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        sim.control.failNext({ kind: "drop", path: "/api/application/servers/1", times: 5, status: 0 })
        sim.control.failNext({ kind: "hang", path: "/api/application/servers/2", times: 5, status: 0 })
        assert.strictEqual((yield* Effect.flip(panel.server("p1", 1)))._tag, "GamePanelUnavailable")
        assert.strictEqual(calls(sim, "GET /api/application/servers/1").length, 2, "one attempt and one retry")
        const hung = yield* Effect.flip(panel.server("p1", 2))
        assert.strictEqual(hung._tag, "GamePanelUnavailable")
        assert.include(hung.message, "no answer within")
      }), { adapter: { requestTimeout: "200 millis", retries: 1 } }))

  it.live("a non-idempotent client call is not sent again after a 5xx", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        sim.control.failNext({ method: "POST", path: `/api/client/servers/${uuid}/files/compress`, times: 5, status: 502, detail: "Server must be online" })
        const body = { contentType: "application/json", bytes: new TextEncoder().encode(JSON.stringify({ root: "/", files: ["world"] })) }
        const error = yield* Effect.flip(panel.relayFileCall("p1", uuid, { operation: { _tag: "CompressFiles" }, query: "", body }))
        assert.strictEqual(error._tag, "GamePanelUnavailable")
        assert.strictEqual(calls(sim, `POST /api/client/servers/${uuid}/files/compress`).length, 1)
      })))

  it.live("an Application-API call waits out a short Retry-After and tries again", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        sim.control.throttleNext({ times: 1, retryAfterSeconds: 1 })
        assert.strictEqual((yield* panel.server("p1", server.id)).id, server.id)
        assert.strictEqual(calls(sim, `GET /api/application/servers/${server.id}`).length, 2)
      })))

  it.live("a Retry-After given as an HTTP date is waited out too", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const inOneSecond = new Date(Date.now() + 1500).toUTCString()
        sim.control.failNext({ path: `/api/application/servers/${server.id}`, times: 1, status: 429, headers: { "Retry-After": inOneSecond } })
        assert.strictEqual((yield* panel.server("p1", server.id)).id, server.id)
        assert.strictEqual(calls(sim, `GET /api/application/servers/${server.id}`).length, 2)
      })))

  it.live("an Application-API call fails at once on a Retry-After longer than the bound", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        sim.control.throttleNext({ times: 1, retryAfterSeconds: 120 })
        const error = yield* Effect.flip(panel.server("p1", 12))
        assert.deepStrictEqual([error._tag, error._tag === "GamePanelThrottled" ? error.retryAfterSeconds : 0], ["GamePanelThrottled", 120])
        assert.strictEqual(calls(sim, "GET /api/application/servers/12").length, 1)
      })))

  it.effect("a Client-API 429 fails at once, and the panel's Client API stays blocked until Retry-After has passed", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        sim.control.throttleNext({ times: 1, retryAfterSeconds: 30 })
        const first = yield* Effect.flip(panel.relayFileCall("p1", server.uuid, listFiles))
        assert.deepStrictEqual([first._tag, first._tag === "GamePanelThrottled" ? first.retryAfterSeconds : 0], ["GamePanelThrottled", 30])
        yield* TestClock.adjust("10 seconds")
        const again = yield* Effect.flip(panel.power("p1", server.uuid, "start"))
        assert.deepStrictEqual([again._tag, again._tag === "GamePanelThrottled" ? again.retryAfterSeconds : 0], ["GamePanelThrottled", 20])
        const download = yield* Effect.flip(Effect.scoped(panel.download("p1", server.uuid, { _tag: "File", path: "/a" })))
        assert.strictEqual(download._tag, "GamePanelThrottled")
        assert.strictEqual(calls(sim, filesList(server.uuid)).length, 1)
        assert.strictEqual(calls(sim, "POST /api/client").length + calls(sim, `GET /api/client/servers/${server.uuid}/files/download`).length, 0)
        // The Application API has its own bucket.
        assert.strictEqual((yield* panel.server("p1", server.id)).id, server.id)
        yield* TestClock.adjust("21 seconds")
        const answer = yield* panel.relayFileCall("p1", server.uuid, listFiles)
        assert.strictEqual(answer.status, 200)
        assert.strictEqual(calls(sim, filesList(server.uuid)).length, 2)
      })))

  it.live("a per-server throttle (backup creation) fails that call only", () =>
    onSimulation((panel) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        yield* panel.relayFileCall("p1", server.uuid, createBackup)
        const error = yield* Effect.flip(panel.relayFileCall("p1", server.uuid, createBackup))
        assert.strictEqual(error._tag, "GamePanelThrottled")
        assert.strictEqual((yield* panel.relayFileCall("p1", server.uuid, listFiles)).status, 200)
      }), { simulation: { backupThrottle: { limit: 1, periodMs: 600_000 } } }))

  it.live("a relayed backup id cannot leave the server's routes", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        for (const backup of ["../../account", "/files/list", "a/../../x", "..%2F..", "x?y=1", ".."]) {
          const error = yield* Effect.flip(panel.relayFileCall("p1", uuid, { operation: { _tag: "ReadBackup", backup }, query: "", body: null }))
          assert.strictEqual(error._tag, "PanelRefused", backup)
        }
        assert.isEmpty(sim.control.requests())
      })))

  it.live("relays a Client-API call with the client key and answers status, content type and bytes", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const bytes = new TextEncoder().encode("motd=hello\n")
        const answer = yield* panel.relayFileCall("p1", server.uuid, {
          operation: { _tag: "WriteFile" },
          query: "file=%2Fserver.properties",
          body: { contentType: "text/plain", bytes }
        })
        assert.strictEqual(answer.status, 204)
        const [request] = calls(sim, `POST /api/client/servers/${server.uuid}/files/write`)
        assert.strictEqual(request?.key, "client")
        assert.strictEqual(request?.contentType, "text/plain")
        assert.strictEqual(request?.query["file"], "/server.properties")
        assert.strictEqual(String(request?.body), "motd=hello\n")
        assert.strictEqual(String(sim.control.readFile(server.uuid, "/server.properties")), "motd=hello\n")
      })))

  it.live("no key, token, signed URL or address appears in any error", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const signedUrl = `${sim.url}/download/file?token=eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJ4In0.c2ln`
        // A panel in debug mode (APP_DEBUG) puts the daemon's address and the exception's text in `detail`.
        const leaky = `cURL error 7: Failed to connect to wings.internal:8080 (${signedUrl}) key ${sim.applicationKey} ${sim.clientKey}`
        sim.control.failNext({ path: "/api/application/servers/1", times: 5, status: 500, code: "DaemonConnectionException", detail: leaky })
        sim.control.failNext({ path: `/api/application/servers/${server.id}/suspend`, times: 1, status: 409, detail: leaky })
        sim.control.failNext({ path: `/api/client/servers/${server.uuid}/files/list`, times: 1, status: 403, code: "HttpForbiddenException", detail: leaky })
        sim.control.failNext({ path: "/download/file", times: 1, status: 418, detail: leaky })
        sim.control.failNext({ kind: "drop", path: "/api/application/servers/3", times: 5, status: 0 })
        const failures = [
          yield* Effect.flip(panel.server("p1", 1)),
          yield* Effect.flip(panel.suspend("p1", server.id)),
          yield* Effect.flip(panel.relayFileCall("p1", server.uuid, listFiles)),
          yield* Effect.flip(Effect.scoped(panel.download("p1", server.uuid, { _tag: "File", path: "/server.properties" }))),
          yield* Effect.flip(panel.server("p1", 3))
        ]
        for (const error of failures) {
          const text = `${error.message} ${JSON.stringify(error)} ${String(error)}`
          for (const secret of [sim.applicationKey, sim.clientKey, new URL(sim.url).host, "wings.internal", "eyJ", "token="]) {
            assert.notInclude(text, secret, `${error._tag} leaks ${secret}`)
          }
        }
        assert.deepStrictEqual(failures.map((e) => e._tag), [
          "GamePanelUnavailable",
          "ServerStateConflict",
          "PanelRefused",
          "PanelRefused",
          "GamePanelUnavailable"
        ])
      })))

  it.live("the application key is never sent to the Client API nor to a node, the client key never to the Application API", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        yield* panel.server("p1", server.id)
        yield* Effect.scoped(panel.download("p1", server.uuid, { _tag: "File", path: "/server.properties" }))
        const requests = sim.control.requests()
        assert.isNotEmpty(requests.filter((r) => r.path.startsWith("/api/application")))
        assert.isNotEmpty(requests.filter((r) => r.target === "wings"))
        for (const r of requests) {
          const expected = r.target === "wings" ? null : r.path.startsWith("/api/application") ? "application" : "client"
          assert.strictEqual(r.key, expected, `${r.target} ${r.method} ${r.path}`)
        }
      })))
})
