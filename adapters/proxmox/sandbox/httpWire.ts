// The HTTP wire as pveproxy speaks it: form/JSON bodies decoded like `extract_params` (query overrides body, repeated
// keys become arrays), `{ "data": … }` envelopes, and errors with the message's first line as the reason phrase.
import type { IncomingMessage, ServerResponse } from "node:http"
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

export interface ParsedRequest {
  readonly method: string
  /** The URI-unescaped path, e.g. `/api2/json/nodes/pve1/qemu/100/config`. */
  readonly path: string
  readonly query: Record<string, unknown>
  readonly body: Record<string, unknown>
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_POST_BYTES) chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

/** Reads and decodes a request the way `extract_params` does; rejects bodies PVE rejects. */
export const parseRequest = async (req: IncomingMessage): Promise<ParsedRequest> => {
  const method = (req.method ?? "GET").toUpperCase()
  const url = new URL(req.url ?? "/", "http://sandbox")
  const path = decodePath(req.url)
  const query = decodeUrlencoded(url.search.replace(/^\?/, ""))
  const length = Number(req.headers["content-length"] ?? "0")
  const raw = await readBody(req)
  if (length > 0 && method !== "PUT" && method !== "POST") {
    throw new PveError(501, `Unexpected content for method '${method}'`, undefined, true)
  }
  if (length > MAX_POST_BYTES || raw.length > MAX_POST_BYTES) throw new PveError(501, "for data too large", undefined, true)
  let body: Record<string, unknown> = {}
  if (method === "PUT" || method === "POST") {
    const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase()
    if (type === "application/json") {
      let parsed: unknown
      try {
        parsed = JSON.parse(raw.toString("utf8"))
      } catch {
        throw new PveError(500, "malformed JSON string, neither tag, array, object, number, string or atom\n", undefined, true)
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw new PveError(500, "Not a HASH reference\n", undefined, true)
      }
      body = { ...parsed }
    } else {
      body = decodeUrlencoded(raw.toString("latin1"))
    }
  }
  delete query["_dc"]
  return { method, path, query, body }
}

const writeHead = (res: ServerResponse, status: number, reason: string, headers: Record<string, string | number>) => {
  res.statusCode = status
  res.statusMessage = reason.split("\n")[0]?.replace(/[\r\n]/g, "") ?? ""
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v)
  // pveproxy ends the connection after any error (keep_alive = 0 for code >= 400).
  if (status >= 400) res.setHeader("Connection", "close")
}

const baseHeaders = () => ({
  "Cache-Control": "max-age=0",
  Pragma: "no-cache",
  Expires: new Date().toUTCString(),
  Server: "pve-api-daemon/3.0"
})

export const sendJson = (res: ServerResponse, status: number, reason: string, payload: unknown) => {
  const body = Buffer.from(JSON.stringify(payload), "utf8")
  writeHead(res, status, reason, {
    ...baseHeaders(),
    "Content-Type": "application/json;charset=UTF-8",
    "Content-Length": body.length
  })
  res.end(body)
}

/** An error as the JSON formatter writes it, or a bare status line for auth-path and transport errors. */
export const sendError = (res: ServerResponse, error: PveError) => {
  if (error.bare) {
    const body = Buffer.from(error.status === 401 ? "" : error.message, "utf8")
    writeHead(res, error.status, error.message, { ...baseHeaders(), "Content-Length": body.length })
    res.end(body)
    return
  }
  const payload: Record<string, unknown> = { data: null }
  if (error.errors !== undefined) payload["errors"] = error.errors
  payload["message"] = error.message
  sendJson(res, error.status, error.message, payload)
}
