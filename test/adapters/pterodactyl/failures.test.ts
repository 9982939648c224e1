// How the adapter reads the panel's failures (reference/pterodactyl.md §1.3–§1.5), specified against a scripted panel
// on loopback: the error envelope onto the port's typed errors, bounded retries of transient failures, Retry-After
// waited out by Application-API calls but never by Client-API calls, the per-panel "blocked until" memory, and no
// key, token, signed URL or address in any error.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { FileCall } from "../../../ports/GamePanel.ts"
import { applicationKey, clientKey, errors, jwtFor, scenario, serverItem } from "./stubPanel.ts"

const uuid = "4600605e-6e5a-4f29-b3c4-fc01b7aa1192"
const listFiles: FileCall = { operation: { _tag: "ListFiles" }, query: "directory=%2F", body: null }
const createBackup: FileCall = { operation: { _tag: "CreateBackup" }, query: "", body: null }
const filesList = `GET /api/client/servers/${uuid}/files/list`
const throttled = (seconds: number, code = "ThrottleRequestsException") => ({
  status: 429,
  json: { errors: [{ code, status: "429", detail: "Too Many Attempts." }] },
  headers: { "retry-after": String(seconds) }
})

describe("PterodactylGamePanel failures", () => {
  it.live("a 422 is PanelValidationFailed with one entry per field and rule", () =>
    scenario((stub) => {
      // A taken e-mail may be this user's own account: it is looked for (not there) before the refusal stands.
      stub.route("GET /api/application/users/external/u", () => errors(404, "NotFoundHttpException", "none"))
      stub.route("POST /api/application/users", () => ({
        status: 422,
        json: {
          errors: [
            { code: "ValidationException", status: "422", detail: "The username format is invalid.", meta: { source_field: "username", rule: "p_username" } },
            { code: "ValidationException", status: "422", detail: "The email has already been taken.", meta: { source_field: "email", rule: "unique" } }
          ]
        }
      }))
    }, (panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(panel.createUser("p1", { userId: "u", email: "e@x.invalid", username: "-", firstName: "a", lastName: "b" }))
        assert.strictEqual(error._tag, "PanelValidationFailed")
        if (error._tag !== "PanelValidationFailed") return
        assert.deepStrictEqual(error.fields, [
          { field: "username", rule: "p_username", detail: "The username format is invalid." },
          { field: "email", rule: "unique", detail: "The email has already been taken." }
        ])
      })))

  it.live("409 is ServerStateConflict, 404 PanelResourceNotFound, another 4xx a refusal named in our words", () =>
    scenario((stub) => {
      stub.route("POST /api/application/servers/12/suspend", () => errors(409, "ConflictHttpException", "being transferred"))
      stub.route("GET /api/application/servers/13", () => errors(404, "NotFoundHttpException", "The requested resource could not be found on the server."))
      stub.route(`POST /api/client/servers/${uuid}/backups`, () =>
        errors(400, "TooManyBackupsException", "Cannot create a new backup, this server has reached its limit of 2 backups."))
    }, (panel) =>
      Effect.gen(function*() {
        const conflict = yield* Effect.flip(panel.suspend("p1", 12))
        assert.deepStrictEqual([conflict._tag, conflict._tag === "ServerStateConflict" ? conflict.detail : ""], ["ServerStateConflict", "being transferred"])
        assert.strictEqual((yield* Effect.flip(panel.server("p1", 13)))._tag, "PanelResourceNotFound")
        const rejected = yield* Effect.flip(panel.relayFileCall("p1", uuid, createBackup))
        assert.strictEqual(rejected._tag, "BackupLimitReached")
      })))

  it.live("5xx is retried within the bound, then GamePanelUnavailable", () =>
    scenario((stub) => {
      stub.route("GET /api/application/servers/12", (_, attempt) => attempt < 2 ? errors(503, "HttpException", "down") : serverItem())
      stub.route("GET /api/application/servers/13", () => errors(500, "QueryException", "An unexpected error was encountered"))
    }, (panel, stub) =>
      Effect.gen(function*() {
        assert.strictEqual((yield* panel.server("p1", 12)).id, 12)
        const error = yield* Effect.flip(panel.server("p1", 13))
        assert.strictEqual(error._tag, "GamePanelUnavailable")
        assert.strictEqual(stub.calls("GET /api/application/servers/13").length, 3, "one attempt and two retries")
      })))

  it.live("a dropped connection and a panel that never answers are GamePanelUnavailable after the retries", () =>
    scenario((stub) => {
      stub.route("GET /api/application/servers/1", () => "reset")
      stub.route("GET /api/application/servers/2", () => "hang")
    }, (panel, stub) =>
      Effect.gen(function*() {
        assert.strictEqual((yield* Effect.flip(panel.server("p1", 1)))._tag, "GamePanelUnavailable")
        assert.strictEqual(stub.calls("GET /api/application/servers/1").length, 2, "one attempt and one retry")
        const hung = yield* Effect.flip(panel.server("p1", 2))
        assert.strictEqual(hung._tag, "GamePanelUnavailable")
        assert.include(hung.message, "no answer within")
      }), { requestTimeout: "200 millis", retries: 1 }))

  it.live("a non-idempotent client call is not sent again after a 5xx", () =>
    scenario((stub) => stub.route(`POST /api/client/servers/${uuid}/files/compress`, () => errors(502, "DaemonConnectionException", "Server must be online")), (panel, stub) =>
      Effect.gen(function*() {
        const body = { contentType: "application/json", bytes: new TextEncoder().encode(JSON.stringify({ root: "/", files: ["world"] })) }
        const error = yield* Effect.flip(panel.relayFileCall("p1", uuid, { operation: { _tag: "CompressFiles" }, query: "", body }))
        assert.strictEqual(error._tag, "GamePanelUnavailable")
        assert.strictEqual(stub.calls(`POST /api/client/servers/${uuid}/files/compress`).length, 1)
      })))

  it.live("an Application-API call waits out a short Retry-After and tries again", () =>
    scenario((stub) => stub.route("GET /api/application/servers/12", (_, attempt) => (attempt === 0 ? throttled(1) : serverItem())), (panel, stub) =>
      Effect.gen(function*() {
        assert.strictEqual((yield* panel.server("p1", 12)).id, 12)
        assert.strictEqual(stub.calls("GET /api/application/servers/12").length, 2)
      })))

  it.live("an Application-API call fails at once on a Retry-After longer than the bound", () =>
    scenario((stub) => stub.route("GET /api/application/servers/12", () => throttled(120)), (panel, stub) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(panel.server("p1", 12))
        assert.deepStrictEqual([error._tag, error._tag === "GamePanelThrottled" ? error.retryAfterSeconds : 0], ["GamePanelThrottled", 120])
        assert.strictEqual(stub.calls("GET /api/application/servers/12").length, 1)
      })))

  it.effect("a Client-API 429 fails at once, and the panel's Client API stays blocked until Retry-After has passed", () =>
    scenario((stub) => {
      stub.route(`GET /api/client/servers/${uuid}/files/list`, (_, attempt) => (attempt === 0 ? throttled(30) : { json: { object: "list", data: [] } }))
      stub.route("GET /api/application/servers/12", () => serverItem())
    }, (panel, stub) =>
      Effect.gen(function*() {
        const first = yield* Effect.flip(panel.relayFileCall("p1", uuid, listFiles))
        assert.deepStrictEqual([first._tag, first._tag === "GamePanelThrottled" ? first.retryAfterSeconds : 0], ["GamePanelThrottled", 30])
        yield* TestClock.adjust("10 seconds")
        const again = yield* Effect.flip(panel.power("p1", uuid, "start"))
        assert.deepStrictEqual([again._tag, again._tag === "GamePanelThrottled" ? again.retryAfterSeconds : 0], ["GamePanelThrottled", 20])
        const download = yield* Effect.flip(Effect.scoped(panel.download("p1", uuid, { _tag: "File", path: "/a" })))
        assert.strictEqual(download._tag, "GamePanelThrottled")
        assert.strictEqual(stub.calls(filesList).length, 1)
        assert.strictEqual(stub.calls("POST").length + stub.calls(`GET /api/client/servers/${uuid}/files/download`).length, 0)
        // The Application API has its own bucket.
        assert.strictEqual((yield* panel.server("p1", 12)).id, 12)
        yield* TestClock.adjust("21 seconds")
        const answer = yield* panel.relayFileCall("p1", uuid, listFiles)
        assert.strictEqual(answer.status, 200)
        assert.strictEqual(stub.calls(filesList).length, 2)
      })))

  it.live("a per-server throttle (backup creation) fails that call only", () =>
    scenario((stub) => {
      stub.route(`POST /api/client/servers/${uuid}/backups`, () => throttled(500, "TooManyRequestsHttpException"))
      stub.route(`GET /api/client/servers/${uuid}/files/list`, () => ({ json: { object: "list", data: [] } }))
    }, (panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(panel.relayFileCall("p1", uuid, createBackup))
        assert.strictEqual(error._tag, "GamePanelThrottled")
        assert.strictEqual((yield* panel.relayFileCall("p1", uuid, listFiles)).status, 200)
      })))

  it.live("a relayed backup id cannot leave the server's routes", () =>
    scenario(() => {}, (panel, stub) =>
      Effect.gen(function*() {
        for (const backup of ["../../account", "/files/list", "a/../../x", "..%2F..", "x?y=1", ".."]) {
          const error = yield* Effect.flip(panel.relayFileCall("p1", uuid, { operation: { _tag: "ReadBackup", backup }, query: "", body: null }))
          assert.strictEqual(error._tag, "PanelRefused", backup)
        }
        assert.isEmpty(stub.seen)
      })))

  it.live("relays a Client-API call with the client key and answers status, content type and bytes", () =>
    scenario((stub) =>
      stub.route(`POST /api/client/servers/${uuid}/files/write`, () => ({ status: 204 })), (panel, stub) =>
      Effect.gen(function*() {
        const bytes = new TextEncoder().encode("motd=hello\n")
        const answer = yield* panel.relayFileCall("p1", uuid, {
          operation: { _tag: "WriteFile" },
          query: "file=%2Fserver.properties",
          body: { contentType: "text/plain", bytes }
        })
        assert.strictEqual(answer.status, 204)
        const [request] = stub.calls(`POST /api/client/servers/${uuid}/files/write`)
        assert.strictEqual(request?.headers.authorization, `Bearer ${clientKey}`)
        assert.strictEqual(request?.headers["content-type"], "text/plain")
        assert.strictEqual(request?.query.get("file"), "/server.properties")
        assert.strictEqual(String(request?.body), "motd=hello\n")
      })))

  it.live("no key, token, signed URL or address appears in any error", () =>
    scenario((stub) => {
      const leaky = `cURL error 7: Failed to connect to wings.internal:8080 (${stub.url}/api/servers) token ${jwtFor(stub.url)} key ${applicationKey}`
      stub.route("GET /api/application/servers/1", () => errors(500, "DaemonConnectionException", leaky))
      stub.route("POST /api/application/servers/2/suspend", () => errors(409, "ConflictHttpException", leaky))
      stub.route(`GET /api/client/servers/${uuid}/files/list`, () => errors(403, "HttpForbiddenException", leaky))
      stub.route(`GET /api/client/servers/${uuid}/files/download`, () => ({
        json: { object: "signed_url", attributes: { url: `${stub.url}/download/file?token=${jwtFor(stub.url)}` } }
      }))
      stub.route("GET /download/file", () => ({ status: 418, json: { error: `used token at ${stub.url}` } }))
      stub.route("GET /api/application/servers/3", () => "reset")
    }, (panel, stub) =>
      Effect.gen(function*() {
        const failures = [
          yield* Effect.flip(panel.server("p1", 1)),
          yield* Effect.flip(panel.suspend("p1", 2)),
          yield* Effect.flip(panel.relayFileCall("p1", uuid, listFiles)),
          yield* Effect.flip(Effect.scoped(panel.download("p1", uuid, { _tag: "File", path: "/a" }))),
          yield* Effect.flip(panel.server("p1", 3))
        ]
        const host = new URL(stub.url).host
        for (const error of failures) {
          const text = `${error.message} ${JSON.stringify(error)} ${String(error)}`
          for (const secret of [applicationKey, clientKey, host, "127.0.0.1", "wings.internal", "eyJ", "token="]) {
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
    scenario((stub) => {
      stub.route("GET /api/application/servers/12", () => serverItem())
      stub.route(`GET /api/client/servers/${uuid}/files/download`, () => ({
        json: { object: "signed_url", attributes: { url: `${stub.url}/download/file?token=t` } }
      }))
      stub.route("GET /download/file", () => ({ text: "x" }))
    }, (panel, stub) =>
      Effect.gen(function*() {
        yield* panel.server("p1", 12)
        yield* Effect.scoped(Effect.flatMap(panel.download("p1", uuid, { _tag: "File", path: "/a" }), (d) => Effect.void.pipe(Effect.as(d))))
        assert.strictEqual(stub.calls("GET /api/application")[0]?.headers.authorization, `Bearer ${applicationKey}`)
        assert.strictEqual(stub.calls("GET /api/client")[0]?.headers.authorization, `Bearer ${clientKey}`)
        assert.isUndefined(stub.calls("GET /download/file")[0]?.headers.authorization)
      })))
})
