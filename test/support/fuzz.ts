// The request fuzzer's parts: a seeded generator, a raw HTTP client that sends exactly the bytes it is given (paths
// not normalised, any header, any body), and malformed variants built from the OpenAPI document's own schemas.
import { Agent, request as httpRequest } from "node:http"

// --- a seeded generator ------------------------------------------------------------------------------------------

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export const seeded = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (below: number) => Math.floor(next() * below)
  const pick = <A>(items: ReadonlyArray<A>): A => items[int(items.length)]!
  /** A short string of awkward code points: controls, surrogate halves, bidi marks, quotes, path and SQL syntax. */
  const junk = () => {
    const pieces = ["\u0000", "\u0001", "\u0008", "\u001b[2J", "\u007f", "\u0085", "\u2028", "\u202e", "\ud800", "\udfff", "\ufeff",
      "\uffff", "😀", "'", "\"", "\\", "/", "../", "%00", "%", "{", "}", " ", "\t", "\r\n", "é", "ß", "' OR '1'='1", "$(id)", "${x}"]
    let out = ""
    for (let i = 0, n = 1 + int(6); i < n; i++) out += pick(pieces)
    return out
  }
  return { next, int, pick, junk }
}
export type Seeded = ReturnType<typeof seeded>

// --- a raw HTTP client -------------------------------------------------------------------------------------------

export interface RawRequest {
  readonly method: string
  /** Sent as it is: `..`, `%00` and the like reach the server unchanged. */
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  /** A string or bytes (with a Content-Length), or chunks sent without one (chunked). */
  readonly body?: string | Uint8Array | { readonly chunks: ReadonlyArray<Uint8Array> }
  /** No answer by then: the reply has status 0. */
  readonly timeoutMs?: number
  /** The client's own address (any of 127.0.0.0/8): the server counts throttles per client address. */
  readonly localAddress?: string
}

export interface RawReply {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly text: string
}

/** A fresh connection per request: a server closing one after an oversize body never fails the next request. */
const agent = new Agent({ keepAlive: false, maxSockets: 8 })

/** Sends one request; a connection the server closes early (after answering an oversize body) still gives its answer. */
export const send = (baseUrl: string, req: RawRequest): Promise<RawReply> =>
  new Promise((resolve) => {
    const url = new URL(baseUrl)
    const body = req.body
    const timeoutMs = req.timeoutMs ?? 10_000
    const headers: Record<string, string> = { ...req.headers }
    if (typeof body === "string" || body instanceof Uint8Array) headers["content-length"] ??= String(Buffer.byteLength(body))
    let settled = false
    const settle = (reply: RawReply) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(reply)
    }
    const outgoing = httpRequest(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers,
        ...(req.localAddress === undefined ? {} : { localAddress: req.localAddress })
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () =>
          settle({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString("utf8") }))
        response.on("error", (e) => settle({ status: 0, headers: {}, text: `the answer was cut: ${e.message}` }))
      }
    )
    // A request left hanging, or a connection closed with no answer, is a finding: status 0. (The server may also
    // answer an oversize body early and close while it is still being written: then its answer is what counts.)
    const timer = setTimeout(() => {
      settle({ status: 0, headers: {}, text: `no answer within ${timeoutMs} ms` })
      outgoing.destroy()
    }, timeoutMs)
    outgoing.on("error", (e) => setTimeout(() => settle({ status: 0, headers: {}, text: `no answer: ${e.message}` }), 100))
    if (body === undefined) outgoing.end()
    else if (typeof body === "string" || body instanceof Uint8Array) outgoing.end(body)
    else {
      for (const chunk of body.chunks) outgoing.write(chunk)
      outgoing.end()
    }
  })

/** The error envelope of a reply, when it is one: `{ error: { code, message } }` with both strings. */
export const errorOf = (reply: RawReply): { readonly code: string; readonly message: string } | undefined => {
  let body: unknown
  try {
    body = JSON.parse(reply.text)
  } catch {
    return undefined
  }
  const error = typeof body === "object" && body !== null && "error" in body ? body.error : undefined
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" &&
      "message" in error && typeof error.message === "string"
    ? { code: error.code, message: error.message }
    : undefined
}

/** Runs `tasks` with at most `width` in flight, keeping their order in the results. */
export const inParallel = async <A>(tasks: ReadonlyArray<() => Promise<A>>, width: number): Promise<Array<A>> => {
  const results: Array<A> = new Array(tasks.length)
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++
      results[i] = await tasks[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker))
  return results
}

// --- the OpenAPI document ----------------------------------------------------------------------------------------

export interface JsonSchema {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: boolean | JsonSchema
  readonly items?: JsonSchema
  readonly enum?: ReadonlyArray<unknown>
  readonly const?: unknown
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly oneOf?: ReadonlyArray<JsonSchema>
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly minLength?: number
  readonly maxLength?: number
  readonly minimum?: number
  readonly maximum?: number
  readonly pattern?: string
}

export interface Operation {
  readonly method: string
  /** OpenAPI form: `/api/vps/{id}`. */
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly payload: JsonSchema | undefined
}

interface OpenApiDocument {
  readonly paths: Readonly<Record<string, Readonly<Record<string, {
    readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string }>
    readonly requestBody?: { readonly content?: Readonly<Record<string, { readonly schema?: JsonSchema }>> }
  }>>>>
  readonly components?: { readonly schemas?: Readonly<Record<string, JsonSchema>> }
}

const isDocument = (u: unknown): u is OpenApiDocument =>
  typeof u === "object" && u !== null && "paths" in u && typeof u.paths === "object" && u.paths !== null

/** Every operation of the document, with its path parameters and its JSON payload schema ($refs resolved). */
export const operationsOf = (document: unknown): ReadonlyArray<Operation> => {
  if (!isDocument(document)) throw new Error("not an OpenAPI document")
  const components = document.components?.schemas ?? {}
  const resolve = (schema: JsonSchema, depth = 0): JsonSchema => {
    if (depth > 20) return schema
    if (schema.$ref !== undefined) {
      const target = components[schema.$ref.replace("#/components/schemas/", "")]
      if (target === undefined) throw new Error(`unresolved ${schema.$ref}`)
      return resolve(target, depth + 1)
    }
    const deep = (s: JsonSchema) => resolve(s, depth + 1)
    return {
      ...schema,
      ...(schema.properties === undefined ? {} : {
        properties: Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, deep(v)]))
      }),
      ...(schema.items === undefined ? {} : { items: deep(schema.items) }),
      ...(schema.anyOf === undefined ? {} : { anyOf: schema.anyOf.map(deep) }),
      ...(schema.oneOf === undefined ? {} : { oneOf: schema.oneOf.map(deep) })
    }
  }
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const schema = op.requestBody?.content?.["application/json"]?.schema
      return {
        method: method.toUpperCase(),
        path,
        pathParams: (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name),
        payload: schema === undefined ? undefined : resolve(schema)
      }
    }))
}

/** `/api/vps/{id}` with `values` put in (already encoded for a path). */
export const fillPath = (path: string, values: Readonly<Record<string, string>>) =>
  path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name]
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`)
    return value
  })

// --- payloads ----------------------------------------------------------------------------------------------------

const typeOf = (schema: JsonSchema) => (Array.isArray(schema.type) ? schema.type[0] : schema.type)

/** Whether the schema is an object with no declared properties: free-form (orders' `options`). */
const isFreeForm = (schema: JsonSchema) => typeOf(schema) === "object" && schema.properties === undefined

/** A value the schema accepts, as far as its JSON Schema says (the domain may still refuse it). */
export const sample = (schema: JsonSchema): unknown => {
  if (schema.const !== undefined) return schema.const
  if (schema.enum !== undefined) return schema.enum[0]
  const union = schema.anyOf ?? schema.oneOf
  if (union !== undefined && union.length > 0) return sample(union[0]!)
  switch (typeOf(schema)) {
    case "string":
      return "fuzz".padEnd(schema.minLength ?? 0, "z")
    case "integer":
    case "number":
      return Math.min(Math.max(1, schema.minimum ?? 1), schema.maximum ?? Number.MAX_SAFE_INTEGER)
    case "boolean":
      return true
    case "array":
      return schema.items === undefined ? [] : [sample(schema.items)]
    case "object":
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sample(v)]))
    default:
      return "fuzz"
  }
}

export type FieldPath = ReadonlyArray<string>

export interface Field {
  readonly path: FieldPath
  readonly schema: JsonSchema
  readonly required: boolean
}

/** Every property of the payload, at any depth; a free-form object gets a made-up `fuzz` key. */
export const fieldsOf = (schema: JsonSchema, at: FieldPath = []): ReadonlyArray<Field> => {
  if (isFreeForm(schema)) return [{ path: [...at, "fuzz"], schema: { type: "string" }, required: false }]
  if (typeOf(schema) !== "object" || schema.properties === undefined) return []
  return Object.entries(schema.properties).flatMap(([name, inner]) => [
    { path: [...at, name], schema: inner, required: schema.required?.includes(name) ?? false },
    ...fieldsOf(inner, [...at, name])
  ])
}

/** A text field: a string without a fixed set of values. */
export const isTextField = (field: Field) =>
  typeOf(field.schema) === "string" && field.schema.enum === undefined && field.schema.const === undefined

/** A copy of `value` with the field at `path` set (or removed when `to` is `REMOVE`). */
export const REMOVE = Symbol("remove")
export const withField = (value: unknown, path: FieldPath, to: unknown): unknown => {
  const [head, ...rest] = path
  if (head === undefined) return to
  const object: Record<string, unknown> = typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : {}
  if (rest.length === 0 && to === REMOVE) {
    delete object[head]
    return object
  }
  return { ...object, [head]: withField(object[head], rest, to) }
}

/** JSON nested `depth` deep: a parser that recurses would overflow its stack. */
export const deeplyNested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`

// --- malformed values ---------------------------------------------------------------------------------------------

/** Path parameters that are not ids, already encoded for a path. */
export const BAD_IDS = [
  "not-an-id", "0", "-1", "..", "%2e%2e", "%00", "%01", "%20", "%0A", "null", "undefined", "'%20OR%20'1'='1",
  "1b4e28ba-2fa1-11d2-883f-0016d3cca42", "1b4e28ba2fa111d2883f0016d3cca427", "%7B1b4e28ba-2fa1-11d2-883f-0016d3cca427%7D",
  "%E2%80%AE", "%F0%9F%98%80", "a".repeat(2000), "0BADC0DE", "0badc0d", "0badc0de0"
]
/** Escapes that are not UTF-8: the URL itself is malformed (the router answers its generic 404). */
export const MALFORMED_ESCAPES = ["%ZZ", "%C0%AF", "%E2%80", "%"]

/** Values of the wrong type for a field of `schema`. */
export const wrongTypes = (schema: JsonSchema): ReadonlyArray<unknown> => {
  const all: ReadonlyArray<unknown> = [null, 42, -1.5, true, [], {}, "text", [["nested"]], { a: { b: null } }]
  return schema.type === "string" ? all.filter((v) => typeof v !== "string") : all.filter((v) => typeof v !== typeof sample(schema))
}

/** What a text field may be sent holding. */
export const badTexts = (rng: Seeded, maxBodyBytes: number, schema: JsonSchema): ReadonlyArray<string> => [
  "\u0000", "a\u0000b", "\u0001", "\u001b[31m", "\u007f", "line\nbreak", "tab\there", "\ud800", "\udfff\ud800", "",
  " ", "x".repeat((schema.maxLength ?? 256) + 1), "x".repeat(maxBodyBytes + 1), "é".repeat(schema.maxLength ?? 256),
  rng.junk(), rng.junk(), rng.junk()
]

/** Whole bodies that are not the payload: invalid JSON, other JSON values, other encodings. */
export const junkBodies = (maxBodyBytes: number): ReadonlyArray<{ readonly label: string; readonly body: string | Uint8Array; readonly type?: string }> => [
  { label: "empty body", body: "", type: "application/json" },
  { label: "invalid JSON", body: "{", type: "application/json" },
  { label: "truncated JSON", body: "{\"a\":", type: "application/json" },
  { label: "JSON null", body: "null", type: "application/json" },
  { label: "JSON array", body: "[]", type: "application/json" },
  { label: "JSON number", body: "42", type: "application/json" },
  { label: "JSON string", body: "\"x\"", type: "application/json" },
  { label: "deeply nested JSON", body: deeplyNested(30_000), type: "application/json" },
  { label: "NUL body", body: "\u0000", type: "application/json" },
  { label: "not UTF-8", body: Uint8Array.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), type: "application/json" },
  { label: "BOM then JSON", body: "\ufeff{}", type: "application/json" },
  { label: "text/plain", body: "{}", type: "text/plain" },
  { label: "form encoded", body: "a=b&c=%00", type: "application/x-www-form-urlencoded" },
  { label: "multipart junk", body: "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nb\r\n--x--\r\n", type: "multipart/form-data; boundary=x" },
  { label: "multipart without boundary", body: "junk", type: "multipart/form-data" },
  { label: "no content type", body: "{}" },
  { label: "latin1 charset", body: "{}", type: "application/json; charset=latin1" },
  { label: "oversize declared", body: `{"a":"${"x".repeat(maxBodyBytes)}"}`, type: "application/json" }
]
