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
      { agent, host: url.hostname, port: url.port, method: req.method, path: req.path, headers },
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
      return 1
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
  const object = typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : {}
  const inner = (object as Record<string, unknown>)[head]
  if (rest.length === 0 && to === REMOVE) {
    delete (object as Record<string, unknown>)[head]
    return object
  }
  return { ...object, [head]: withField(inner, rest, to) }
}

/** JSON nested `depth` deep: a parser that recurses would overflow its stack. */
export const deeplyNested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
