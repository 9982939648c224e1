// Every bad input gets a 4xx, never a 5xx (issue 10 §3). A seeded fuzz walks the server's own /openapi.json and the
// game relay's files and backups routes, and sends each operation malformed variants — bad ids in every path
// parameter, wrong types, missing and extra fields, huge strings, control characters in every text field, invalid
// JSON, wrong content types, empty and oversize bodies — as the owner of a VPS and a game server and as an anonymous
// client. No answer may be a 5xx, and every refusal must be the JSON envelope `{ error: { code, message } }`.
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  BAD_IDS,
  badTexts,
  deeplyNested,
  errorOf,
  fieldsOf,
  fillPath,
  inParallel,
  isTextField,
  junkBodies,
  MALFORMED_ESCAPES,
  type Operation,
  operationsOf,
  type RawReply,
  type RawRequest,
  REMOVE,
  sample,
  seeded,
  send,
  withField,
  wrongTypes
} from "../support/fuzz.ts"
import { provisionedGame } from "../support/gameHttp.ts"
import { startTestServer } from "../support/testServer.ts"
import { expectBody, leakScanner, PANEL_ORIGIN, provisionedVps, signedInCustomer, type TestServer } from "../support/vpsHttp.ts"
import { UserEnvelope } from "../../adapters/http/views.ts"
import { invoiceAMonth } from "../support/invoicing.ts"
import { person } from "../support/staff.ts"

const MAX_BODY_BYTES = 64 * 1024
/** The relay's own limit for JSON and text bodies (the panel's editor size and a margin: app/Layers.ts). */
const MAX_RELAY_BODY_BYTES = 4 * 1024 * 1024 + 64 * 1024

let server: TestServer
let owner: Readonly<Record<string, string>>
const anonymous = { origin: PANEL_ORIGIN }
let operations: ReadonlyArray<Operation>
let email: string

/** A fresh session of the owner (the fuzz's last requests may end the one before). */
const signIn = async (): Promise<Readonly<Record<string, string>>> => {
  const reply = await send(server.url, {
    method: "POST",
    path: "/api/auth/login",
    headers: { origin: PANEL_ORIGIN, "content-type": "application/json" },
    body: JSON.stringify({ email, password: "correct horse battery" })
  })
  const cookie = [reply.headers["set-cookie"] ?? []].flat().find((c) => c.startsWith("zh_token="))
  if (reply.status !== 200 || cookie === undefined) throw new Error(`the owner cannot sign in: ${reply.status} ${reply.text}`)
  return { origin: PANEL_ORIGIN, cookie: cookie.split(";")[0]! }
}
let mine: {
  readonly orderId: string
  readonly subscriptionId: string
  readonly vpsId: string
  readonly gameServerId: string
  readonly identifier: string
  readonly invoiceId: string
}

beforeAll(async () => {
  server = await startTestServer({
    maxBodyBytes: MAX_BODY_BYTES,
    // The fuzz sends thousands of upstream-facing requests as one owner: its share is not what is tested here.
    customerUpstreamRatePerMinute: 100_000
  })
  const browser = await signedInCustomer(server, await leakScanner(server), "fuzz")
  const vps = await provisionedVps(browser, "fuzz-vps")
  const game = await provisionedGame(browser)
  expect((await browser.put("/api/billing-profile", {
    name: "Fuzz Owner", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" }
  })).status).toBe(200)
  const ownerId = expectBody(await browser.get("/api/auth/me"), 200, UserEnvelope).user.id
  const { invoice } = await invoiceAMonth(server, ownerId, new Date("2026-05-01T10:00:00.000Z"))
  mine = {
    orderId: vps.order.id,
    subscriptionId: vps.subscriptionId,
    vpsId: vps.vpsId,
    gameServerId: game.gameServer.id,
    identifier: game.gameServer.identifier,
    invoiceId: invoice.id
  }
  const me = await browser.get("/api/auth/me")
  email = expectBody(me, 200, UserEnvelope).user.email
  owner = await signIn()
  operations = operationsOf(JSON.parse((await send(server.url, { method: "GET", path: "/openapi.json" })).text))
}, 120_000)

afterAll(async () => {
  await server?.stop()
})

// --- what a path parameter may be -------------------------------------------------------------------------------

/** The owner's own value of each path parameter, by route; a new route with a path parameter must be added here. */
const realPathValues = (path: string): Readonly<Record<string, string>> => {
  const table: ReadonlyArray<readonly [RegExp, Readonly<Record<string, string>>]> = [
    [/^\/api\/orders\/\{id\}/, { id: mine.orderId }],
    [/^\/api\/subscriptions\/\{id\}/, { id: mine.subscriptionId }],
    [/^\/api\/vps\/\{id\}/, { id: mine.vpsId, name: "fuzz-missing" }],
    [/^\/api\/game-servers\/\{id\}/, { id: mine.gameServerId }],
    [/^\/api\/client\/servers\/\{id\}/, { id: mine.identifier }],
    [/^\/api\/invoices\/\{id\}/, { id: mine.invoiceId }],
    // Public: any page that is not one of the three is the same 404.
    [/^\/api\/legal\/\{page\}/, { page: "terms" }],
    // The owner is a customer: the back-office refuses them whatever the id (403, the same answer for any).
    [/^\/api\/admin\/.*\{id\}/, { id: mine.orderId }]
  ]
  const found = table.find(([pattern]) => pattern.test(path))
  if (found === undefined && path.includes("{")) throw new Error(`the fuzz has no values for the path parameters of ${path}`)
  return found?.[1] ?? {}
}

/** Values that name nothing, of the right shape, per parameter: the answer every malformed one must match. */
const missingPathValue = (path: string, param: string) =>
  param === "name" ? "fuzz-none" : path.startsWith("/api/client/servers/") ? "0badc0de" : randomUUID()

// --- one request, judged ------------------------------------------------------------------------------------------

interface Probe extends RawRequest {
  readonly label: string
}

const header = (reply: RawReply, name: string) => {
  const value = reply.headers[name]
  return Array.isArray(value) ? value.join(", ") : typeof value === "string" ? value : undefined
}

/** Why the reply is not acceptable: a 5xx, or a refusal that is not the JSON envelope. */
const problemWith = (reply: RawReply): string | undefined => {
  if (reply.status === 0) return reply.text
  if (reply.status >= 500) return `answered ${reply.status}`
  if (reply.status < 400) return undefined
  if (!(header(reply, "content-type") ?? "").includes("application/json")) return `refused (${reply.status}) as ${header(reply, "content-type")}`
  return errorOf(reply) === undefined ? "refused without the error envelope" : undefined
}

/**
 * The fuzz comes from its own loopback address: the thousands of failed logins it sends throttle that address, not
 * the owner's own sign-ins.
 */
const FUZZ_ADDRESS = "127.0.0.2"

const probeAll = async (probes: ReadonlyArray<Probe>) => {
  const replies = await inParallel(probes.map((p) => () => send(server.url, { ...p, localAddress: FUZZ_ADDRESS })), 4)
  const problems = replies.flatMap((reply, i) => {
    const problem = problemWith(reply)
    return problem === undefined ? [] : [`${probes[i]!.label}: ${problem}: ${reply.text.slice(0, 300)}`]
  })
  return { sent: probes.length, replies, problems }
}

// --- variants -----------------------------------------------------------------------------------------------------

const rng = seeded(10_3)

/** Every variant of one operation, for one caller. */
const variantsOf = (op: Operation, who: string, headers: Readonly<Record<string, string>>): ReadonlyArray<Probe> => {
  const real = realPathValues(op.path)
  const path = fillPath(op.path, real)
  const at = (label: string, request: Partial<RawRequest>): Probe => ({
    method: op.method,
    path,
    ...request,
    headers: { ...headers, ...request.headers },
    label: `${who} ${op.method} ${op.path} [${label}]`
  })
  const probes: Array<Probe> = []
  for (const param of op.pathParams) {
    for (const bad of [...BAD_IDS, ...MALFORMED_ESCAPES]) {
      probes.push(at(`${param}=${bad.slice(0, 40)}`, { path: fillPath(op.path, { ...real, [param]: bad }) }))
    }
  }
  probes.push(at("query junk", { path: `${path}?x=%00&y=%ZZ&z=${"q".repeat(4000)}` }))
  // Session cookies that are not ours: garbage, an unsigned token (`alg: none`), one far too long.
  for (const token of ["not.a.jwt", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "a".repeat(8000), "%00%ZZ"]) {
    probes.push(at(`cookie ${token.slice(0, 12)}`, { headers: { cookie: `zh_token=${token}` } }))
  }
  probes.push(at("unknown method", { method: "PATCH" }))
  const bodies = op.payload === undefined ? junkBodies(MAX_BODY_BYTES).filter((b) => b.label === "invalid JSON" || b.label.startsWith("oversize")) : junkBodies(MAX_BODY_BYTES)
  for (const b of bodies) {
    probes.push(at(b.label, { body: b.body, headers: b.type === undefined ? {} : { "content-type": b.type } }))
  }
  probes.push(at("oversize chunked", {
    body: { chunks: Array.from({ length: 5 }, () => Buffer.alloc(MAX_BODY_BYTES / 4, 0x61)) },
    headers: { "content-type": "application/json", "transfer-encoding": "chunked" }
  }))
  // Bytes after the head with neither a length nor chunked framing: read as the next request, which is garbage.
  probes.push(at("unframed body", { body: { chunks: [Buffer.from("{\"a\":1}")] }, headers: { "content-type": "application/json" } }))
  if (op.payload === undefined) return probes
  const base = sample(op.payload)
  const withBody = (label: string, value: unknown) => at(label, { body: JSON.stringify(value), headers: { "content-type": "application/json" } })
  probes.push(withBody("extra field", withField(base, ["zzExtra"], 1)))
  for (const field of fieldsOf(op.payload)) {
    const name = field.path.join(".")
    if (field.required) probes.push(withBody(`${name} missing`, withField(base, field.path, REMOVE)))
    for (const wrong of wrongTypes(field.schema)) probes.push(withBody(`${name}=${JSON.stringify(wrong)}`, withField(base, field.path, wrong)))
    if (field.path.at(-1) === "fuzz") {
      // A free-form value nested far deeper than any checker's recursion could go.
      const text = JSON.stringify(withField(base, field.path, "NESTED")).replace("\"NESTED\"", deeplyNested(20_000))
      probes.push(at(`${name} deeply nested`, { body: text, headers: { "content-type": "application/json" } }))
    }
    if (isTextField(field)) {
      for (const text of badTexts(rng, MAX_BODY_BYTES, field.schema)) probes.push(withBody(`${name}=${JSON.stringify(text.slice(0, 20))}`, withField(base, field.path, text)))
    }
  }
  return probes
}

// --- the game relay -----------------------------------------------------------------------------------------------

const relayJsonBodies: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  "PUT files/rename": { root: "/", files: [{ from: "fuzz-none", to: "fuzz-none-2" }] },
  "POST files/copy": { location: "/fuzz-none" },
  "POST files/delete": { root: "/", files: ["fuzz-none"] },
  "POST files/create-folder": { root: "/", name: "fuzz-folder" },
  "POST files/compress": { root: "/", files: ["fuzz-none"] },
  "POST files/decompress": { root: "/", file: "fuzz-none.tar.gz" },
  "POST files/chmod": { root: "/", files: [{ file: "fuzz-none", mode: 755 }] },
  "POST files/pull": { url: "http://169.254.169.254/" },
  "POST backups": { name: "fuzz" },
  "POST backups/{uuid}/restore": { truncate: false }
}

const relayRoutes: ReadonlyArray<readonly [method: string, path: string]> = [
  ["GET", "files/list?directory=%2F"],
  ["GET", "files/contents?file=%2Fserver.properties"],
  ["POST", "files/write?file=%2Ffuzz.txt"],
  ["GET", "files/download?file=%2Fserver.properties"],
  ["GET", "files/download/stream?file=%2Feula.txt"],
  ["GET", "files/upload"],
  ["POST", "files/upload/stream?directory=%2F"],
  ["GET", "backups"],
  ["GET", "backups/{uuid}"],
  ["DELETE", "backups/{uuid}"],
  ["POST", "backups/{uuid}/lock"],
  ["GET", "backups/{uuid}/download"],
  ["GET", "backups/{uuid}/download/stream"],
  ...Object.keys(relayJsonBodies).map((key) => [key.slice(0, key.indexOf(" ")), key.slice(key.indexOf(" ") + 1)] as const)
]

const relayProbes = (who: string, headers: Readonly<Record<string, string>>, full: boolean): ReadonlyArray<Probe> => {
  const probes: Array<Probe> = []
  const url = (identifier: string, sub: string, uuid: string = randomUUID()) => `/api/client/servers/${identifier}/${sub.replace("{uuid}", uuid)}`
  for (const [method, sub] of relayRoutes) {
    const key = `${method} ${sub}`
    const body = relayJsonBodies[key]
    const at = (label: string, request: Partial<RawRequest>): Probe => ({
      method,
      path: url(mine.identifier, sub),
      ...request,
      headers: { ...headers, ...request.headers },
      label: `${who} relay ${key} [${label}]`
    })
    probes.push(at("as is", body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }))
    if (!full) continue
    for (const bad of [...BAD_IDS, ...MALFORMED_ESCAPES]) probes.push(at(`id=${bad.slice(0, 40)}`, { path: url(bad, sub) }))
    if (sub.includes("{uuid}")) {
      for (const bad of ["not-a-uuid", "%00", "..", "0".repeat(36), "%ZZ"]) probes.push(at(`uuid=${bad}`, { path: url(mine.identifier, sub, bad) }))
    }
    if (sub.includes("?")) {
      const [bare = "", query = ""] = sub.split("?")
      const name = query.split("=")[0] ?? "file"
      for (const value of ["", "%00", "a%00b", "%0A", "%01", "..%2F..%2Fetc%2Fpasswd", "%ZZ", "x".repeat(6000), "%F0%9F%98%80", "%2F%2F%2F"]) {
        probes.push(at(`${name}=${value.slice(0, 30)}`, { path: `${url(mine.identifier, bare)}?${name}=${value}` }))
      }
    }
    if (body !== undefined) {
      for (const b of junkBodies(MAX_BODY_BYTES)) probes.push(at(b.label, { body: b.body, headers: b.type === undefined ? {} : { "content-type": b.type } }))
      for (const field of fieldsOf({ type: "object", properties: Object.fromEntries(Object.keys(body).map((k) => [k, {}])) })) {
        for (const wrong of [null, 42, true, [], {}, "\u0000", "a\u0000b", "\u001b[2J", rng.junk(), "x".repeat(10_000)]) {
          probes.push(at(`${field.path.join(".")}=${JSON.stringify(wrong).slice(0, 20)}`, {
            body: JSON.stringify(withField(body, field.path, wrong)),
            headers: { "content-type": "application/json" }
          }))
        }
      }
      probes.push(at("over the relay's limit", {
        body: JSON.stringify(withField(body, ["pad"], "x".repeat(MAX_RELAY_BODY_BYTES))),
        headers: { "content-type": "application/json" }
      }))
    }
    if (key === "POST files/write?file=%2Ffuzz.txt") {
      for (const text of ["", "\u0000\u0001\u001b raw bytes are a file's business", rng.junk()]) {
        probes.push(at(`text ${JSON.stringify(text.slice(0, 10))}`, { body: text, headers: { "content-type": "text/plain" } }))
      }
      probes.push(at("not UTF-8", { body: Uint8Array.from([0xff, 0xfe, 0x00, 0x80]), headers: { "content-type": "application/octet-stream" } }))
      probes.push(at("over the relay's limit, chunked", {
        body: { chunks: Array.from({ length: 5 }, () => Buffer.alloc(MAX_RELAY_BODY_BYTES / 4, 0x61)) },
        headers: { "content-type": "text/plain", "transfer-encoding": "chunked" }
      }))
    }
    if (sub.startsWith("files/upload/stream")) {
      probes.push(at("not multipart", { body: "hello", headers: { "content-type": "text/plain" } }))
      probes.push(at("multipart junk", { body: "garbage without parts", headers: { "content-type": "multipart/form-data; boundary=zz" } }))
    }
    probes.push(at("unknown method", { method: "PATCH" }))
  }
  probes.push({ method: "GET", path: url(mine.identifier, "files/../../startup"), headers, label: `${who} relay traversal` })
  probes.push({ method: "GET", path: url(mine.identifier, "nothing/here"), headers, label: `${who} relay unknown sub-path` })
  return probes
}

/**
 * The console routes refuse anything but a proper WebSocket upgrade, from our Origin, by the owner: every refusal (a
 * plain GET, another protocol, a broken handshake, a bad id, a foreign Origin, no session) is the JSON envelope. A
 * proper upgrade is not sent here: it would open a console (the console tests cover those).
 */
const consoleProbes = (who: string, headers: Readonly<Record<string, string>>): ReadonlyArray<Probe> => {
  const routes = [(id: string) => `/api/vps/${id}/console`, (id: string) => `/api/client/servers/${id}/ws`]
  const own = [mine.vpsId, mine.identifier]
  const upgrades: ReadonlyArray<readonly [string, Readonly<Record<string, string>>]> = [
    ["plain GET", {}],
    ["Upgrade: h2c", { connection: "Upgrade", upgrade: "h2c" }],
    ["Upgrade: foo", { connection: "Upgrade", upgrade: "foo" }],
    ["no key", { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13" }],
    ["bad key", { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "short" }],
    ["bad version", { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "7", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" }],
    ["foreign Origin", { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "short", origin: "http://evil.test" }]
  ]
  return routes.flatMap((route, i) =>
    [own[i]!, ...BAD_IDS, ...MALFORMED_ESCAPES].flatMap((id) =>
      upgrades.map(([label, extra]) => ({
        method: "GET",
        path: route(id),
        headers: { ...headers, ...extra },
        label: `${who} console ${route("{id}")} id=${id.slice(0, 40)} [${label}]`
      }))
    ).concat([{ method: "POST", path: route(own[i]!), headers, label: `${who} console ${route("{id}")} [POST]` }])
  )
}

// --- answers compared ---------------------------------------------------------------------------------------------

/** What a client can see of a reply, minus what changes with every answer (its date, a cookie's value and expiry). */
const visible = (reply: RawReply) => ({
  status: reply.status,
  body: reply.text,
  headers: Object.entries(reply.headers)
    .filter(([name]) => name !== "date")
    .map(([name, value]) => {
      const text = Array.isArray(value) ? value.join("\n") : String(value)
      return `${name}: ${name === "set-cookie" ? text.replace(/=[^;\n]*/, "=…").replace(/; (Expires|Max-Age)=[^;\n]*/gi, "") : text}`
    })
    .sort()
})

/** The details of an INVALID_REQUEST refusal: which fields, with which problem. */
const refusedFields = (reply: RawReply): ReadonlyArray<string> => {
  const body: unknown = JSON.parse(reply.text)
  const error = typeof body === "object" && body !== null && "error" in body ? body.error : undefined
  const details = typeof error === "object" && error !== null && "details" in error && Array.isArray(error.details) ? error.details : []
  return details.flatMap((d: unknown) =>
    typeof d === "object" && d !== null && "path" in d && "message" in d ? [`${String(d.path)}: ${String(d.message)}`] : [])
}

/** Ends the caller's session (or may): sent after everything else. */
const endsSession = (op: Operation) => op.path.startsWith("/api/auth/logout")

describe("every bad input gets a 4xx, never a 5xx", () => {
  it("answers several thousand malformed requests to every operation, the relay and the consoles without one 5xx, every refusal in the JSON envelope", async ({ annotate }) => {
    const started = Date.now()
    const first = operations.filter((op) => !endsSession(op))
    const last = operations.filter(endsSession)
    const batches = [
      [
        ...first.flatMap((op) => variantsOf(op, "anonymous", anonymous)),
        ...relayProbes("anonymous", anonymous, false),
        ...consoleProbes("anonymous", anonymous)
      ],
      [...first.flatMap((op) => variantsOf(op, "owner", owner)), ...relayProbes("owner", owner, true), ...consoleProbes("owner", owner)],
      [...last.flatMap((op) => variantsOf(op, "anonymous", anonymous)), ...last.flatMap((op) => variantsOf(op, "owner", owner))]
    ]
    let sent = 0
    const problems: Array<string> = []
    for (const batch of batches) {
      const result = await probeAll(batch)
      sent += result.sent
      problems.push(...result.problems)
    }
    await annotate(`${sent} malformed requests, ${problems.length} unacceptable answers, in ${Date.now() - started} ms`)
    expect(problems, problems.slice(0, 40).join("\n")).toEqual([])
    expect(sent).toBeGreaterThan(3000)
  }, 400_000)

  it("answers a path id that is not an id exactly as an id that names nothing: status, body and headers", async () => {
    const owner = await signIn()
    const differences: Array<string> = []
    let compared = 0
    const compare = async (label: string, missing: RawRequest, malformed: ReadonlyArray<RawRequest>) => {
      const expected = visible(await send(server.url, missing))
      for (const request of malformed) {
        compared++
        const got = visible(await send(server.url, request))
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          differences.push(`${label} ${request.path}: ${JSON.stringify(got)} instead of ${JSON.stringify(expected)}`)
        }
      }
    }
    for (const [who, headers] of [["owner", owner], ["anonymous", anonymous]] as const) {
      for (const op of operations.filter((o) => o.pathParams.length > 0 && !endsSession(o))) {
        const real = realPathValues(op.path)
        for (const param of op.pathParams) {
          // With a body the route accepts: only the id differs.
          const body = op.payload === undefined ? {} : { body: JSON.stringify(sample(op.payload)) }
          const request = (value: string): RawRequest => ({
            method: op.method,
            path: fillPath(op.path, { ...real, [param]: value }),
            headers: { ...headers, "content-type": "application/json" },
            ...body
          })
          await compare(`${who} ${op.method} ${op.path} {${param}}`, request(missingPathValue(op.path, param)), BAD_IDS.map(request))
        }
      }
      for (const sub of ["files/list?directory=%2F", "files/upload", "backups", "files/write?file=%2Fx"]) {
        const request = (identifier: string): RawRequest => ({
          method: sub.startsWith("files/write") ? "POST" : "GET",
          path: `/api/client/servers/${identifier}/${sub}`,
          headers
        })
        await compare(`${who} relay ${sub}`, request("0badc0de"), BAD_IDS.map(request))
      }
    }
    expect(differences, differences.slice(0, 10).join("\n")).toEqual([])
    expect(compared).toBeGreaterThan(700)
  }, 120_000)

  it("refuses a control character in every text field of every request body: 400 INVALID_REQUEST naming the field", async () => {
    const owner = await signIn()
    // The back-office's bodies are read only for staff (anyone else is refused first, whatever they send).
    const admin = await person(server, { role: "admin" })
    const staff = { origin: PANEL_ORIGIN, cookie: [...admin.browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ") }
    const misses: Array<string> = []
    let checked = 0
    for (const op of operations.filter((o) => o.payload !== undefined && !endsSession(o))) {
      const payload = op.payload!
      const base = sample(payload)
      for (const field of fieldsOf(payload).filter((f) => isTextField(f) || f.path.at(-1) === "fuzz")) {
        for (const control of ["\u0000", "\u0007", "\u001b", "\u007f"]) {
          checked++
          const reply = await send(server.url, {
            method: op.method,
            path: fillPath(op.path, realPathValues(op.path)),
            headers: { ...(op.path.startsWith("/api/admin/") ? staff : owner), "content-type": "application/json" },
            body: JSON.stringify(withField(base, field.path, `a${control}b`))
          })
          const name = field.path.join(".")
          const named = reply.status === 400 && errorOf(reply)?.code === "INVALID_REQUEST" &&
            refusedFields(reply).some((f) => f.startsWith(`${name}: `) && f.includes("control characters"))
          if (!named) misses.push(`${op.method} ${op.path} ${name} with ${JSON.stringify(control)}: ${reply.status} ${reply.text.slice(0, 200)}`)
        }
      }
    }
    expect(misses, misses.join("\n")).toEqual([])
    expect(checked).toBeGreaterThan(40)
  })
})
