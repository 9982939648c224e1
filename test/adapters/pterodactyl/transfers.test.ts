// Downloads and uploads through fresh signed URLs (reference/pterodactyl.md §4.1, §4.2), specified against the
// simulated panel and Wings in memory: the panel call, the node call without any key, the streamed bytes and their
// metadata, the node's refusals as the port's errors, and a caller's aborted body.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { filenameOf } from "../../../adapters/pterodactyl/transfers.ts"
import { UploadAborted } from "../../../ports/GamePanel.ts"
import { readBody } from "../../support/download.ts"
import { aServer, calls, onSimulation } from "./onSimulation.ts"

const multipart = (boundary: string, filename: string, content: Uint8Array) =>
  new Uint8Array(Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`)
  ]))

describe("PterodactylGamePanel transfers", () => {
  it.live("downloads a file from the node through a fresh signed URL, streaming its bytes with length and name", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const bytes = Buffer.alloc(3 * 1024 * 1024, 7)
        sim.control.putFile(server.uuid, "/worlds/world one.zip", bytes)
        const download = yield* panel.download("p1", server.uuid, { _tag: "File", path: "/worlds/world one.zip" })
        assert.deepStrictEqual([download.contentLength, download.filename, download.contentType], [bytes.length, "world one.zip", "application/octet-stream"])
        const received = yield* readBody(download.body)
        assert.isTrue(received.equals(bytes))
        const [signing] = calls(sim, `GET /api/client/servers/${server.uuid}/files/download`)
        assert.deepStrictEqual([signing?.query["file"], signing?.key], ["/worlds/world one.zip", "client"])
        const [node] = sim.control.requests().filter((r) => r.target === "wings")
        assert.deepStrictEqual([node?.path, node?.authorization, node?.query["token"]], ["/download/file", false, "<redacted>"])
      }).pipe(Effect.scoped)))

  it.live("downloads a backup by its own uuid", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const created = yield* panel.relayFileCall("p1", server.uuid, { operation: { _tag: "CreateBackup" }, query: "", body: null })
        const backup = String(JSON.parse(new TextDecoder().decode(created.body)).attributes.uuid)
        const completed = (answer: { readonly body: Uint8Array }) => JSON.parse(new TextDecoder().decode(answer.body)).attributes.completed_at !== null
        const readBackup = panel.relayFileCall("p1", server.uuid, { operation: { _tag: "ReadBackup", backup }, query: "", body: null })
        for (let i = 0; i < 50 && !completed(yield* readBackup); i++) yield* Effect.sleep("50 millis")
        const download = yield* panel.download("p1", server.uuid, { _tag: "Backup", uuid: backup })
        assert.strictEqual(download.filename, `${backup}.tar.gz`)
        const received = yield* readBody(download.body)
        assert.isAbove(received.byteLength, 0)
        assert.strictEqual(download.contentLength, received.byteLength)
        assert.strictEqual(sim.control.requests().filter((r) => r.target === "wings")[0]?.path, "/download/backup")
      }).pipe(Effect.scoped)))

  it.live("a used or unknown signed URL (404 from the node) is PanelResourceNotFound", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const error = yield* Effect.flip(Effect.scoped(panel.download("p1", server.uuid, { _tag: "File", path: "/x" })))
        assert.strictEqual(error._tag, "PanelResourceNotFound")
        assert.strictEqual(calls(sim, "GET /download/file").length, 1, "the node was asked and answered 404")
      })))

  it.live("the node's answer head is awaited within the request timeout: a silent node is GamePanelUnavailable", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        sim.control.failNext({ kind: "hang", path: "/download/file", times: 5, status: 0 })
        const error = yield* Effect.flip(Effect.scoped(panel.download("p1", server.uuid, { _tag: "File", path: "/server.properties" })))
        assert.strictEqual(error._tag, "GamePanelUnavailable")
      }), { adapter: { requestTimeout: "300 millis" } }))

  it.live("a download left unread is dropped with its scope: the node sees its connection close", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        sim.control.putFile(server.uuid, "/big", { syntheticBytes: 64 * 1024 * 1024 })
        yield* Effect.scoped(Effect.gen(function*() {
          const download = yield* panel.download("p1", server.uuid, { _tag: "File", path: "/big" })
          assert.strictEqual(download.contentLength, 64 * 1024 * 1024)
          for (let i = 0; i < 100 && sim.control.downloadsInFlight() === 0; i++) yield* Effect.sleep("10 millis")
          assert.strictEqual(sim.control.downloadsInFlight(), 1)
        }))
        for (let i = 0; i < 100 && sim.control.downloadsInFlight() > 0; i++) yield* Effect.sleep("20 millis")
        assert.strictEqual(sim.control.downloadsInFlight(), 0)
      })))

  it.live("a node that stops part-way fails the body's reading (never a short file taken for whole)", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        sim.control.putFile(server.uuid, "/cut", Buffer.alloc(1024 * 1024, 1))
        sim.control.cutDownloadsAfter(512 * 1024)
        const download = yield* panel.download("p1", server.uuid, { _tag: "File", path: "/cut" })
        const failed = yield* Effect.flip(readBody(download.body))
        assert.isDefined(failed)
      }).pipe(Effect.scoped)))

  it.live("uploads the caller's multipart body as it is, with its content type, into the directory", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const bytes = multipart("b1", "a.txt", new TextEncoder().encode("hello"))
        yield* panel.upload("p1", server.uuid, {
          directory: "/plugins",
          contentType: "multipart/form-data; boundary=b1",
          contentLength: bytes.byteLength,
          body: Stream.fromIterable([bytes.subarray(0, 10), bytes.subarray(10)])
        })
        const [request] = sim.control.requests().filter((r) => r.target === "wings")
        assert.deepStrictEqual([request?.method, request?.path], ["POST", "/upload/file"])
        assert.deepStrictEqual([request?.query["directory"], request?.query["token"]], ["/plugins", "<redacted>"])
        assert.strictEqual(request?.contentType, "multipart/form-data; boundary=b1")
        assert.isFalse(request?.authorization)
        assert.strictEqual(String(sim.control.readFile(server.uuid, "/plugins/a.txt")), "hello")
      })))

  it.live("a body over the node's limit (413) is PanelRefused", () =>
    onSimulation((panel) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const bytes = multipart("b1", "big.bin", new Uint8Array(1536 * 1024))
        const error = yield* Effect.flip(panel.upload("p1", server.uuid, {
          directory: "/",
          contentType: "multipart/form-data; boundary=b1",
          contentLength: null,
          body: Stream.make(bytes)
        }))
        assert.strictEqual(error._tag, "PanelRefused")
        if (error._tag === "PanelRefused") assert.include(error.detail, "HTTP 413")
      }), { simulation: { uploadLimitMiB: 1 } }))

  it.live("a caller's body that stops fails the upload with UploadAborted", () =>
    onSimulation((panel) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const error = yield* Effect.flip(panel.upload("p1", server.uuid, {
          directory: "/",
          contentType: "multipart/form-data; boundary=b1",
          contentLength: null,
          body: Stream.concat(Stream.make(new Uint8Array([1, 2, 3])), Stream.fail(new UploadAborted({ reason: "too large" })))
        }))
        assert.deepStrictEqual(error, new UploadAborted({ reason: "too large" }))
      })))

  it("reads the file name from either Content-Disposition form", () => {
    assert.strictEqual(filenameOf(`attachment; filename="a b.txt"`), "a b.txt")
    assert.strictEqual(filenameOf(`attachment; filename=plain.txt`), "plain.txt")
    assert.strictEqual(filenameOf(`attachment; filename="x"; filename*=UTF-8''%C3%A9t%C3%A9.txt`), "été.txt")
    assert.isNull(filenameOf(null))
    assert.isNull(filenameOf("inline"))
  })
})
