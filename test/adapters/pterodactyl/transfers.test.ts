// Downloads and uploads through fresh signed URLs (reference/pterodactyl.md §4.1, §4.2), specified against a scripted
// panel and node on loopback: the panel call, the node call without any key, the streamed bytes and their metadata,
// the node's refusals as the port's errors, and a caller's aborted body.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { filenameOf } from "../../../adapters/pterodactyl/transfers.ts"
import { UploadAborted } from "../../../ports/GamePanel.ts"
import { jwtFor, scenario, type Stub } from "./stubPanel.ts"
import { readBody } from "../../support/download.ts"

const uuid = "4600605e-6e5a-4f29-b3c4-fc01b7aa1192"
const backup = "b0a7c6b8-0000-4000-8000-000000000001"

const signed = (stub: Stub, key: string, nodePath: string) => {
  const token = jwtFor(stub.url, { unique_id: key })
  stub.route(key, () => ({ json: { object: "signed_url", attributes: { url: `${stub.url}${nodePath}?token=${token}` } } }))
  return token
}

describe("PterodactylGamePanel transfers", () => {
  it.live("downloads a file from the node through a fresh signed URL, streaming its bytes with length and name", () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024, 7)
    return scenario((stub) => {
      signed(stub, `GET /api/client/servers/${uuid}/files/download`, "/download/file")
      stub.route("GET /download/file", () => ({
        bytes,
        headers: {
          "content-length": String(bytes.length),
          "content-disposition": `attachment; filename="world.zip"`,
          "content-type": "application/octet-stream"
        }
      }))
    }, (panel, stub) =>
      Effect.gen(function*() {
        const download = yield* panel.download("p1", uuid, { _tag: "File", path: "/worlds/world one.zip" })
        assert.deepStrictEqual([download.contentLength, download.filename, download.contentType], [bytes.length, "world.zip", "application/octet-stream"])
        const received = yield* readBody(download.body)
        assert.isTrue(received.equals(bytes))
        assert.strictEqual(stub.calls(`GET /api/client/servers/${uuid}/files/download`)[0]?.query.get("file"), "/worlds/world one.zip")
        const node = stub.calls("GET /download/file")[0]
        assert.isUndefined(node?.headers.authorization)
        assert.isString(node?.query.get("token"))
      }).pipe(Effect.scoped))
  })

  it.live("downloads a backup by its own uuid", () =>
    scenario((stub) => {
      signed(stub, `GET /api/client/servers/${uuid}/backups/${backup}/download`, "/download/backup")
      stub.route("GET /download/backup", () => ({ text: "tar", headers: { "content-disposition": `attachment; filename="${backup}.tar.gz"` } }))
    }, (panel) =>
      Effect.gen(function*() {
        const download = yield* panel.download("p1", uuid, { _tag: "Backup", uuid: backup })
        assert.strictEqual(download.filename, `${backup}.tar.gz`)
        assert.strictEqual(String(yield* readBody(download.body)), "tar")
      }).pipe(Effect.scoped)))

  it.live("a used or unknown signed URL (404 from the node) is PanelResourceNotFound", () =>
    scenario((stub) => {
      signed(stub, `GET /api/client/servers/${uuid}/files/download`, "/download/file")
      stub.route("GET /download/file", () => ({ status: 404, json: { error: "The requested resource was not found on this server." } }))
    }, (panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.scoped(panel.download("p1", uuid, { _tag: "File", path: "/x" })))
        assert.strictEqual(error._tag, "PanelResourceNotFound")
      })))

  it.live("the node's answer head is awaited within the request timeout: a silent node is GamePanelUnavailable", () =>
    scenario((stub) => {
      signed(stub, `GET /api/client/servers/${uuid}/files/download`, "/download/file")
      stub.route("GET /download/file", () => "hang")
    }, (panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.scoped(panel.download("p1", uuid, { _tag: "File", path: "/x" })))
        assert.strictEqual(error._tag, "GamePanelUnavailable")
      }), { requestTimeout: "300 millis" }))

  it.live("a download left unread is dropped with its scope: the node sees its connection close", () => {
    let closed = false
    return scenario((stub) => {
      signed(stub, `GET /api/client/servers/${uuid}/files/download`, "/download/file")
      stub.route("GET /download/file", () => ({
        respond: (res) => {
          res.writeHead(200, { "content-length": String(64 * 1024 * 1024) })
          res.write(Buffer.alloc(1024 * 1024))
          res.once("close", () => (closed = true))
        }
      }))
    }, (panel) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Effect.gen(function*() {
          const download = yield* panel.download("p1", uuid, { _tag: "File", path: "/big" })
          assert.strictEqual(download.contentLength, 64 * 1024 * 1024)
        }))
        for (let i = 0; i < 100 && !closed; i++) yield* Effect.sleep("20 millis")
        assert.isTrue(closed)
      }))
  })

  it.live("a node that stops part-way fails the body's reading (never a short file taken for whole)", () =>
    scenario((stub) => {
      signed(stub, `GET /api/client/servers/${uuid}/files/download`, "/download/file")
      stub.route("GET /download/file", () => ({
        respond: (res, req) => {
          res.writeHead(200, { "content-length": String(1024 * 1024) })
          res.write(Buffer.alloc(1000), () => req.socket.destroy())
        }
      }))
    }, (panel) =>
      Effect.gen(function*() {
        const download = yield* panel.download("p1", uuid, { _tag: "File", path: "/cut" })
        const failed = yield* Effect.flip(readBody(download.body))
        assert.isDefined(failed)
      }).pipe(Effect.scoped)))

  it.live("uploads the caller's multipart body as it is, with its content type, into the directory", () => {
    const body = "--b1\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.txt\"\r\n\r\nhello\r\n--b1--\r\n"
    return scenario((stub) => {
      signed(stub, `GET /api/client/servers/${uuid}/files/upload`, "/upload/file")
      stub.route("POST /upload/file", () => ({ status: 200 }))
    }, (panel, stub) =>
      Effect.gen(function*() {
        const bytes = new TextEncoder().encode(body)
        yield* panel.upload("p1", uuid, {
          directory: "/plugins",
          contentType: "multipart/form-data; boundary=b1",
          contentLength: bytes.byteLength,
          body: Stream.fromIterable([bytes.subarray(0, 10), bytes.subarray(10)])
        })
        const [request] = stub.calls("POST /upload/file")
        assert.strictEqual(request?.query.get("directory"), "/plugins")
        assert.isString(request?.query.get("token"))
        assert.strictEqual(request?.headers["content-type"], "multipart/form-data; boundary=b1")
        assert.isUndefined(request?.headers.authorization)
        assert.strictEqual(String(request?.body), body)
      }))
  })

  it.live("a body over the node's limit (413) is PanelRefused", () =>
    scenario((stub) => {
      signed(stub, `GET /api/client/servers/${uuid}/files/upload`, "/upload/file")
      stub.route("POST /upload/file", () => ({ status: 413, json: { error: "file is too large" } }))
    }, (panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(panel.upload("p1", uuid, {
          directory: "/",
          contentType: "multipart/form-data; boundary=b1",
          contentLength: null,
          body: Stream.make(new Uint8Array([1, 2, 3]))
        }))
        assert.strictEqual(error._tag, "PanelRefused")
        if (error._tag === "PanelRefused") assert.include(error.detail, "HTTP 413")
      })))

  it.live("a caller's body that stops fails the upload with UploadAborted", () =>
    scenario((stub) => {
      signed(stub, `GET /api/client/servers/${uuid}/files/upload`, "/upload/file")
      stub.route("POST /upload/file", () => ({ status: 200 }))
    }, (panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(panel.upload("p1", uuid, {
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
