// The HTTP edge around every route: body size limit, and the error envelope for whatever the router or the
// framework answers on its own (unknown route, unsupported media type, oversize body, unexpected defect) — including
// a database that does not answer (503, try again) and a unique constraint lost to a concurrent request (409); and
// `Connection: close` on a refused protocol switch, whose connection the server closes.
import { ByteSize, Cause, Effect } from "effect"
import { type Headers, HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SqlError } from "effect/sql"
import { createServer, type Server, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import { errorBody } from "./ApiErrors.ts"
import { databaseUnreachable, errorResponse, statusAnswer, toResponse } from "./errorMapping.ts"
import type { HttpSettings } from "./HttpSettings.ts"

/** The unread rest of an oversize body is never consumed: the connection cannot be reused. */
const tooLarge = errorResponse(413).pipe(HttpServerResponse.setHeader("connection", "close"))

const isBodyTooLarge = (u: unknown): boolean =>
  HttpServerError.isHttpServerError(u) && u.reason._tag === "RequestParseError" && u.reason.reason === "BodyTooLarge"

const contentTypeOf = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Empty" ? "" : response.body.contentType ?? ""

/**
 * Errors answered with no JSON body (by the framework, or as bare text) get the envelope, so clients see one error
 * shape; a page meant for a browser (the panel's "not built yet" page) is left as it is.
 */
const envelope = (response: HttpServerResponse.HttpServerResponse) =>
  response.status >= 400 && !contentTypeOf(response).includes("json") && !contentTypeOf(response).includes("text/html")
    ? errorResponse(response.status).pipe(HttpServerResponse.setHeaders(withoutBodyHeaders(response.headers)))
    : response

/** The replaced body's own headers must not describe the new one. */
const withoutBodyHeaders = (headers: Headers.Headers) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name !== "content-type" && name !== "content-length"))

/**
 * A request asking to switch protocols (`Connection: upgrade` with an `Upgrade` header, RFC 9110 §7.8) leaves Node's
 * HTTP parser on its `upgrade` event, and the server closes its connection after any answer but a switch. An answer
 * that refuses the switch says so (RFC 9112 §9.6): otherwise it reads as kept alive, and a client that reuses
 * connections (Node's agent with queued requests, a reverse proxy's upstream pool) sends its next request on one
 * already closing and gets no answer at all ("socket hang up").
 */
const lastOnItsConnection = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  response.status !== 101 && request.headers["upgrade"] !== undefined &&
    (request.headers["connection"] ?? "").split(",").some((token) => token.trim().toLowerCase() === "upgrade")
    ? HttpServerResponse.setHeader(response, "connection", "close")
    : response

const isRelayed = (url: string) => /^\/api\/client\/servers\/[^/]+\/(files|backups)(\/|\?|$)/.test(url)

/** The SqlError behind a defect (repositories die on theirs), however deeply it is wrapped. */
const sqlErrorIn = (u: unknown, depth = 0): SqlError.SqlError | undefined => {
  if (SqlError.isSqlError(u)) return u
  if (depth >= 8 || typeof u !== "object" || u === null || !("cause" in u)) return undefined
  return sqlErrorIn(u.cause, depth + 1)
}

/**
 * One line for an unexpected failure: the chain of error names and messages and the first frames of the stack —
 * enough to find it, never the request's body nor the pretty-printed cause (dozens of lines each: a flooding lever).
 */
export const describeDefect = (u: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = u
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const name = "_tag" in current && typeof current._tag === "string"
      ? current._tag
      : "name" in current && typeof current.name === "string" ? current.name : "Error"
    parts.push("message" in current ? `${name}: ${String(current.message)}` : name)
    current = "cause" in current ? current.cause : undefined
  }
  if (parts.length === 0) parts.push(String(u))
  const stack = u instanceof Error && typeof u.stack === "string"
    ? u.stack.split("\n").filter((l) => l.trimStart().startsWith("at ")).slice(0, 3).map((l) => l.trim())
    : []
  return [...parts, ...stack].join(" | ").replace(/\s+/g, " ").slice(0, 1000)
}

/** What the edge answers for a failure no route handled. */
const unhandled = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  if (isBodyTooLarge(error)) return Effect.succeed(tooLarge)
  if (HttpServerError.isHttpServerError(error)) {
    if (error.reason._tag === "RouteNotFound") return Effect.succeed(errorResponse(404))
    if (error.reason._tag === "RequestParseError") return Effect.succeed(errorResponse(400))
  }
  const where = `${request.method} ${request.url.split("?")[0] ?? ""}`
  const sql = sqlErrorIn(error)
  if (sql?.reason._tag === "ConnectionError") {
    return Effect.as(Effect.logWarning(`database unreachable while serving ${where}: ${describeDefect(sql)}`), toResponse(databaseUnreachable))
  }
  if (sql?.reason._tag === "UniqueViolation") {
    return Effect.as(Effect.logWarning(`a concurrent change won a unique constraint in ${where}: ${describeDefect(sql)}`), errorResponse(409))
  }
  return Effect.as(Effect.logError(`unexpected error while serving ${where}: ${describeDefect(error)}`), errorResponse(500))
}

export const edgeMiddleware = (settings: HttpSettings["Service"]) =>
  HttpRouter.middleware(
    (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const declared = Number(request.headers["content-length"] ?? "0")
        // The game relay streams uploads and enforces its own limits (GameRelayRoutes).
        const response = declared > settings.maxBodyBytes && !isRelayed(request.url) ? tooLarge : yield* httpEffect.pipe(
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(settings.maxBodyBytes)),
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : unhandled(request, cause))
        )
        return lastOnItsConnection(request, envelope(response))
      }),
    { global: true }
  )

/**
 * The router's settings: a path parameter of any length reaches its route (the request line is bounded by Node's
 * header limit anyway), where a long id is answered like any id that names nothing — not by the router's own 404.
 */
export const routerConfig = { maxParamLength: 16 * 1024 } as const

/** Node's statuses for requests it cannot parse (its own default `clientError` answers, with our body). */
const clientErrorStatus = (code: string | undefined) =>
  code === "HPE_HEADER_OVERFLOW" ? 431 : code === "HPE_CHUNK_EXTENSIONS_OVERFLOW" ? 413 : code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400

/**
 * A node:http server whose answer to a request too malformed to reach any route (a broken request line, headers over
 * the limit, a body without framing) is our JSON envelope too, not Node's bare `400 Bad Request`.
 */
export const createHttpServer = (): Server => {
  const server = createServer()
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy()
    const status = clientErrorStatus(error.code)
    const { code, message } = statusAnswer(status)
    const body = JSON.stringify({ error: errorBody(code, message) })
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`
    )
  })
  return server
}
