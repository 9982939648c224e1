// The HTTP wire as pveproxy speaks it: form/JSON bodies decoded like `extract_params` (query overrides body, repeated
// keys become arrays), `{ "data": … }` envelopes, and errors with the message's first line as the reason phrase.
import { Effect, Stream } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { PveError } from "./PveError.ts"

const MAX_POST_BYTES = 512 * 1024

/** pve-http-server's `decode_urlencoded`: `&` or `;` separated, `+` is a space, a second `=` cuts the value. */
export const decodeUrlencoded = (data: string): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  if (data === "") return out
  const unescape = (s: string) => {
    const bytes = Buffer.from(s.replace(/\+/g, " ").replace(/%([0-9a-fA-F]{2})/g, (_, h: string) =>
      String.fromCharCode(parseInt(h, 16))), "latin1")
    return bytes.toString("utf8")
  }
  for (const kv of data.split(/[&;]/)) {
    const [rawKey = "", rawValue] = kv.split("=")
    const key = unescape(rawKey)
    if (rawValue === undefined) {
      out[key] = undefined
      continue
    }
    const value = unescape(rawValue)
    const old = out[key]
    if (Array.isArray(old)) old.push(value)
    else if (typeof old === "string") out[key] = [old, value]
    else out[key] = value
  }
  return out
}

/** The URI-unescaped path of a request URL (pveproxy unescapes before routing); malformed escapes stay as sent. */
export const decodePath = (url: string | undefined): string => {
  const pathname = new URL(url ?? "/", "http://sandbox").pathname
  try {
    return decodeURIComponent(pathname.replace(/%(?![0-9a-fA-F]{2})/g, "%25"))
  } catch {
    return pathname
  }
}

/** The decoded query string of a request URL (`_dc`, the cache buster, included). */
export const decodeQuery = (url: string | undefined): Record<string, unknown> =>
  decodeUrlencoded(new URL(url ?? "/", "http://sandbox").search.replace(/^\?/, ""))

export interface ParsedRequest {
  readonly method: string
  /** The URI-unescaped path, e.g. `/api2/json/nodes/pve1/qemu/100/config`. */
  readonly path: string
  readonly query: Record<string, unknown>
  readonly body: Record<string, unknown>
}

/** The whole body, keeping at most one byte past the limit (enough to know it was exceeded). */
const readBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Buffer, PveError> =>
  request.stream.pipe(
    Stream.runFold(() => ({ size: 0, chunks: [] as Array<Uint8Array> }), (acc, chunk: Uint8Array) => {
      if (acc.size <= MAX_POST_BYTES) acc.chunks.push(chunk)
      acc.size += chunk.length
      return acc
    }),
    Effect.map(({ chunks }) => Buffer.concat(chunks)),
    Effect.mapError((e) => new PveError(500, `${e.message}\n`))
  )

const decodeBody = (method: string, contentType: string | undefined, raw: Buffer): Record<string, unknown> => {
  if (method !== "PUT" && method !== "POST") return {}
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase()
  if (type !== "application/json") return decodeUrlencoded(raw.toString("latin1"))
  let parsed: unknown
  try {
    parsed = JSON.parse(raw.toString("utf8"))
  } catch {
    throw new PveError(500, "malformed JSON string, neither tag, array, object, number, string or atom\n", undefined, true)
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new PveError(500, "Not a HASH reference\n", undefined, true)
  }
  return { ...parsed }
}

/** Reads and decodes a request the way `extract_params` does; fails with the answer PVE gives bodies it rejects. */
export const readRequest = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<ParsedRequest, PveError> =>
  Effect.flatMap(readBody(request), (raw) =>
    Effect.try({
      try: () => {
        const method = request.method.toUpperCase()
        const length = Number(request.headers["content-length"] ?? "0")
        if (length > 0 && method !== "PUT" && method !== "POST") {
          throw new PveError(501, `Unexpected content for method '${method}'`, undefined, true)
        }
        if (length > MAX_POST_BYTES || raw.length > MAX_POST_BYTES) {
          throw new PveError(501, "for data too large", undefined, true)
        }
        const body = decodeBody(method, request.headers["content-type"], raw)
        const query = decodeQuery(request.url)
        delete query["_dc"]
        return { method, path: decodePath(request.url), query, body }
      },
      catch: asPveError
    }))

/** Anything thrown on the way to an answer, as the error PVE would report (an unexpected one is a 500). */
export const asPveError = (e: unknown): PveError =>
  e instanceof PveError ? e : new PveError(500, `${e instanceof Error ? e.message : String(e)}\n`)

const reasonOf = (message: string) => message.split("\n")[0]?.replace(/[\r\n]/g, "") ?? ""

const headersFor = (status: number) => ({
  "cache-control": "max-age=0",
  pragma: "no-cache",
  expires: new Date().toUTCString(),
  server: "pve-api-daemon/3.0",
  // pveproxy ends the connection after any error (keep_alive = 0 for code >= 400).
  ...(status >= 400 ? { connection: "close" } : {})
})

export const jsonResponse = (status: number, reason: string, payload: unknown): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.uint8Array(Buffer.from(JSON.stringify(payload), "utf8"), {
    status,
    statusText: reasonOf(reason),
    headers: headersFor(status),
    contentType: "application/json;charset=UTF-8"
  })

/** An error as the JSON formatter writes it, or a bare status line for auth-path and transport errors. */
export const errorResponse = (error: PveError): HttpServerResponse.HttpServerResponse => {
  if (error.bare) {
    const body = Buffer.from(error.status === 401 ? "" : error.message, "utf8")
    return HttpServerResponse.raw(body, {
      status: error.status,
      statusText: reasonOf(error.message),
      headers: { ...headersFor(error.status), "content-length": String(body.length) }
    })
  }
  const payload: Record<string, unknown> = { data: null }
  if (error.errors !== undefined) payload["errors"] = error.errors
  payload["message"] = error.message
  return jsonResponse(error.status, error.message, payload)
}
