// Specification of the sandbox file manager (reference/pterodactyl.md §4.1): the seeded tree, edits through the
// Client API, single-use signed URLs to Wings for downloads and multipart uploads, synthetic files streamed with
// their exact Content-Length, and the refusals (4 MiB editor limit, remote downloads, upload size).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { syntheticByte } from "../../../adapters/pterodactyl/sandbox/FileTree.ts"
import { call, clients, createServer, type Sandbox, startSandbox } from "./pteroHttp.ts"
import { errorsOf, FileObject, itemOf, listOf, SignedUrl } from "./shapes.ts"

let sandbox: Sandbox
let client: ReturnType<typeof clients>["client"]
let uuid: string

beforeAll(async () => {
  sandbox = await startSandbox({ uploadLimitMiB: 1 })
  const { app } = clients(sandbox)
  client = clients(sandbox).client
  const server = await createServer(app)
  await app.get(`/servers/${server.id}`)
  uuid = server.uuid
})
afterAll(() => sandbox.close())

const files = (path: string) => `/servers/${uuid}/files${path}`
const listing = async (dir: string) => listOf(FileObject)((await client.get(files(`/list?directory=${dir}`))).json).data
const names = async (dir = "/") => (await listing(encodeURIComponent(dir))).map((d) => d.attributes.name).sort()
const signed = async (path: string) => {
  const res = itemOf(SignedUrl)((await client.get(files(path))).json)
  expect(res.object).toBe("signed_url")
  return res.attributes.url
}

describe("the tree", () => {
  it("is seeded at install with server.properties, eula.txt and logs/latest.log", async () => {
    expect(await names()).toEqual(expect.arrayContaining(["eula.txt", "logs", "server.properties"]))
    expect(await names("/logs")).toEqual(["latest.log"])
    const logs = (await listing("/")).find((d) => d.attributes.name === "logs")
    expect(logs?.attributes).toMatchObject({ is_file: false, mimetype: "inode/directory", mode: "drwxr-xr-x" })
  })

  it("writes a raw body and reads it back as text/plain", async () => {
    const write = await client.post(files("/write?file=/notes.txt"), "hello\nworld", { "Content-Type": "text/plain" })
    expect(write.status).toBe(204)
    const read = await client.get(files("/contents?file=/notes.txt"))
    expect(read.headers.get("content-type")).toMatch(/^text\/plain/)
    expect(read.text).toBe("hello\nworld")
    expect(sandbox.control.readFile(uuid, "/notes.txt")?.toString()).toBe("hello\nworld")
  })

  it("gives a file's bytes as they are, never re-encoded: binary and Latin-1 content come back byte for byte", async () => {
    const bytes = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0xff, 0xfe, 0xe9, 0x0d, 0x0a, 0x80])
    sandbox.control.putFile(uuid, "/raw.bin", bytes)
    const read = await fetch(`${sandbox.url}/api/client${files("/contents?file=/raw.bin")}`, {
      headers: { Accept: "application/json", Authorization: `Bearer ${sandbox.clientKey}` }
    })
    expect(read.status).toBe(200)
    expect(Buffer.from(await read.arrayBuffer()).equals(bytes)).toBe(true)
  })

  it("renames, copies, creates folders, chmods, deletes, compresses and decompresses", async () => {
    sandbox.control.putFile(uuid, "/a.txt", Buffer.from("A"))
    expect((await client.post(files("/create-folder"), { root: "/", name: "dir" })).status).toBe(204)
    expect((await client.put(files("/rename"), { root: "/", files: [{ from: "a.txt", to: "dir/b.txt" }] })).status).toBe(204)
    expect(await names("/dir")).toEqual(["b.txt"])
    expect((await client.post(files("/copy"), { location: "/dir/b.txt" })).status).toBe(204)
    expect(await names("/dir")).toEqual(["b copy.txt", "b.txt"])
    expect((await client.post(files("/chmod"), { root: "/dir", files: [{ file: "b.txt", mode: 755 }] })).status).toBe(204)
    const b = (await listing("/dir")).find((d) => d.attributes.name === "b.txt")
    expect(b?.attributes.mode_bits).toBe("755")
    const archive = await client.post(files("/compress"), { root: "/", files: ["dir"] })
    expect(archive.status).toBe(200)
    const archived = itemOf(FileObject)(archive.json).attributes.name
    expect(archived).toMatch(/^archive-.*\.tar\.gz$/)
    expect((await client.post(files("/delete"), { root: "/", files: ["dir"] })).status).toBe(204)
    expect(await names()).not.toContain("dir")
    expect((await client.post(files("/decompress"), { root: "/", file: archived })).status).toBe(204)
    expect(await names("/dir")).toEqual(["b copy.txt", "b.txt"])
  })

  it("refuses to open a file over 4 MiB in the editor, and remote pulls", async () => {
    sandbox.control.putFile(uuid, "/big.bin", { syntheticBytes: 4 * 1024 * 1024 + 1 })
    const big = await client.get(files("/contents?file=/big.bin"))
    expect(big.status).toBe(400)
    expect(errorsOf(big.json)[0].code).toBe("FileSizeTooLargeException")
    const pull = await client.post(files("/pull"), { url: "https://example.com/x.jar" })
    expect(pull.status).toBe(400)
    expect(errorsOf(pull.json)[0].detail).toContain("remote downloads are disabled")
  })

  it("answers 404 for a missing directory or file", async () => {
    expect((await client.get(files("/list?directory=/nope"))).status).toBe(404)
    expect((await client.get(files("/contents?file=/nope.txt"))).status).toBe(404)
  })
})

describe("signed URLs", () => {
  it("download a file from Wings once, with Content-Length and Content-Disposition; a second use is 404", async () => {
    const url = await signed("/download?file=/server.properties")
    expect(url.startsWith(`${sandbox.nodeUrl}/download/file?token=`)).toBe(true)
    const first = await fetch(url)
    expect(first.status).toBe(200)
    expect(first.headers.get("content-disposition")).toBe("attachment; filename=\"server.properties\"")
    const body = Buffer.from(await first.arrayBuffer())
    expect(Number(first.headers.get("content-length"))).toBe(body.length)
    expect(body.toString()).toContain("server-port=25565")
    const second = await call(url)
    expect(second.status).toBe(404)
    expect(second.json).toEqual({ error: "The requested resource was not found on this server." })
  })

  it("expire after signedUrlTtlMs", async () => {
    const short = await startSandbox({ signedUrlTtlMs: 50 })
    try {
      const { app, client: c } = clients(short)
      const server = await createServer(app)
      await app.get(`/servers/${server.id}`)
      const url = itemOf(SignedUrl)((await c.get(`/servers/${server.uuid}/files/download?file=/eula.txt`)).json).attributes.url
      await new Promise((r) => setTimeout(r, 120))
      expect((await call(url)).status).toBe(403)
    } finally {
      await short.close()
    }
  })

  it("stream a synthetic file with its exact Content-Length and deterministic bytes", async () => {
    const size = 3 * 1024 * 1024 + 17
    sandbox.control.putFile(uuid, "/world.bin", { syntheticBytes: size })
    const res = await fetch(await signed("/download?file=/world.bin"))
    expect(Number(res.headers.get("content-length"))).toBe(size)
    const body = Buffer.from(await res.arrayBuffer())
    expect(body.length).toBe(size)
    for (const i of [0, 1, 250, 251, 65_535, 65_536, size - 1]) expect(body[i]).toBe(syntheticByte(i))
    expect((await listing("/")).find((d) => d.attributes.name === "world.bin")?.attributes.size).toBe(size)
  })

  it("upload multipart parts named files into ?directory, then download them back", async () => {
    const form = new FormData()
    form.append("files", new Blob([Buffer.from("plugin-bytes")]), "plugin.jar")
    form.append("files", new Blob([Buffer.from("second")]), "other.txt")
    const url = await signed("/upload")
    expect(url.startsWith(`${sandbox.nodeUrl}/upload/file?token=`)).toBe(true)
    const up = await fetch(`${url}&directory=/plugins`, { method: "POST", body: form })
    expect(up.status).toBe(200)
    expect(await names("/plugins")).toEqual(["other.txt", "plugin.jar"])
    const down = await fetch(await signed("/download?file=/plugins/plugin.jar"))
    expect(await down.text()).toBe("plugin-bytes")
    const reused = await fetch(`${url}&directory=/plugins`, { method: "POST", body: form })
    expect(reused.status).toBe(404)
  })

  it("refuse an upload over the limit with 413", async () => {
    const form = new FormData()
    form.append("files", new Blob([Buffer.alloc(1024 * 1024 + 1)]), "huge.bin")
    const res = await fetch(`${await signed("/upload")}&directory=/`, { method: "POST", body: form })
    expect(res.status).toBe(413)
    expect(await names()).not.toContain("huge.bin")
  })

  it("are refused with 403 when forged", async () => {
    expect((await call(`${sandbox.nodeUrl}/download/file?token=abc.def.ghi`)).status).toBe(403)
  })
})
