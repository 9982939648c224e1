// Nothing lost, nothing silently cut (issue 10 §5): a body over its limit is refused whole with 413
// PAYLOAD_TOO_LARGE before anything reaches the panel, whether its length is declared or it arrives chunked; a body of
// exactly the limit is written whole, byte for byte. The same for the API's JSON bodies.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { SandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { errorOf, type RawRequest, send } from "../support/fuzz.ts"
import { provisionedGame, sandboxPanelOf } from "../support/gameHttp.ts"
import { startTestServer } from "../support/testServer.ts"
import { leakScanner, PANEL_ORIGIN, signedInCustomer, type TestServer } from "../support/vpsHttp.ts"

const MAX_BODY_BYTES = 64 * 1024
/** The relay's limit for JSON and text bodies: the panel editor's 4 MiB and a margin (app/Layers.ts). */
const RELAY_LIMIT = 4 * 1024 * 1024 + 64 * 1024

let server: TestServer
let panel: SandboxPterodactyl
let headers: Readonly<Record<string, string>>
let identifier: string
let uuid: string

beforeAll(async () => {
  server = await startTestServer({ maxBodyBytes: MAX_BODY_BYTES })
  panel = await sandboxPanelOf(server)
  const browser = await signedInCustomer(server, await leakScanner(server), "limits")
  identifier = (await provisionedGame(browser)).gameServer.identifier
  uuid = panel.control.servers().find((s) => s.identifier === identifier)!.uuid
  headers = { origin: PANEL_ORIGIN, cookie: `zh_token=${browser.cookies.get("zh_token") ?? ""}` }
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

/** Deterministic bytes of every value, newlines and NULs included: a file body is the customer's business. */
const bytes = (size: number, salt: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 131 + salt) % 256))

/** The same bytes sent in pieces with no declared length. */
const chunked = (body: Buffer) => ({ chunks: [body.subarray(0, 1000), body.subarray(1000, 2_000_000), body.subarray(2_000_000)] })

const write = (path: string, body: NonNullable<RawRequest["body"]>, extra: Readonly<Record<string, string>> = {}) =>
  send(server.url, {
    method: "POST",
    path: `/api/client/servers/${identifier}/files/write?file=${encodeURIComponent(path)}`,
    headers: { ...headers, "content-type": "text/plain", ...extra },
    body,
    timeoutMs: 30_000
  })

const writesTo = (path: string) =>
  panel.control.requests().filter((r) => r.method === "POST" && r.path.endsWith("/files/write") && r.query["file"] === path).length


describe("a body over its limit", () => {
  it("files/write: one byte over the relay's limit is refused 413 and the file on the panel stays as it was", async () => {
    const original = bytes(1000, 1)
    panel.control.putFile(uuid, "/kept.txt", original)
    for (const [how, body, extra] of [
      ["declared", bytes(RELAY_LIMIT + 1, 2), {}],
      ["chunked", chunked(bytes(RELAY_LIMIT + 1, 3)), { "transfer-encoding": "chunked" }]
    ] as const) {
      const reply = await write("/kept.txt", body, extra)
      expect(reply.status, `${how}: ${reply.text}`).toBe(413)
      expect(errorOf(reply)?.code).toBe("PAYLOAD_TOO_LARGE")
      expect(Buffer.compare(panel.control.readFile(uuid, "/kept.txt")!, original), how).toBe(0)
    }
    expect(writesTo("/kept.txt")).toBe(0)
  })

  it("files/write: a body of exactly the limit is written whole, byte for byte, declared or chunked", async () => {
    for (const [how, salt, extra] of [["declared", 4, {}], ["chunked", 5, { "transfer-encoding": "chunked" }]] as const) {
      const body = bytes(RELAY_LIMIT, salt)
      const reply = await write(`/whole-${how}.bin`, how === "declared" ? body : chunked(body), extra)
      expect(reply.status, `${how}: ${reply.text}`).toBe(204)
      const stored = panel.control.readFile(uuid, `/whole-${how}.bin`)
      expect(stored?.byteLength, how).toBe(RELAY_LIMIT)
      expect(Buffer.compare(stored!, body), how).toBe(0)
    }
  })

  it("a relayed JSON body over the limit is 413, not a JSON error about a body cut short", async () => {
    const reply = await send(server.url, {
      method: "POST",
      path: `/api/client/servers/${identifier}/files/create-folder`,
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ root: "/", name: "x".repeat(RELAY_LIMIT) }),
      timeoutMs: 30_000
    })
    expect(reply.status, reply.text).toBe(413)
    expect(errorOf(reply)?.code).toBe("PAYLOAD_TOO_LARGE")
  })

  it("an API JSON body over MAX_BODY_BYTES is 413 PAYLOAD_TOO_LARGE, declared or chunked", async () => {
    const json = JSON.stringify({ email: `${"x".repeat(MAX_BODY_BYTES)}@example.com`, password: "correct horse battery" })
    for (const [how, body, extra] of [
      ["declared", json, {}],
      ["chunked", { chunks: [Buffer.from(json.slice(0, 10)), Buffer.from(json.slice(10))] }, { "transfer-encoding": "chunked" }]
    ] as const) {
      const reply = await send(server.url, {
        method: "POST",
        path: "/api/auth/login",
        headers: { origin: PANEL_ORIGIN, "content-type": "application/json", ...extra },
        body
      })
      expect(reply.status, `${how}: ${reply.text}`).toBe(413)
      expect(errorOf(reply)?.code).toBe("PAYLOAD_TOO_LARGE")
    }
  })
})
