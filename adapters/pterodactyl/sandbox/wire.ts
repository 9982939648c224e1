// The panel's HTTP wire (reference/pterodactyl.md §1.2–1.3): Fractal item/list envelopes with `meta.pagination`
// (absolute `links`), the `{"errors":[{code,status,detail,meta?}]}` error envelope, and Laravel's redirects for
// clients that do not send `Accept: application/json`.
import { Effect, Stream } from "effect"
import { type HttpServerError, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { randomUUID } from "node:crypto"

export interface ErrorItem {
  readonly code: string
  readonly status: string
  readonly detail: string
  readonly meta?: Readonly<Record<string, string>>
}

/** A panel error: thrown by handlers, rendered once by the front. */
export class PanelError extends Error {
  readonly status: number
  readonly errors: ReadonlyArray<ErrorItem>
  readonly headers: Readonly<Record<string, string>>

  constructor(status: number, errors: ReadonlyArray<ErrorItem>, headers: Readonly<Record<string, string>> = {}) {
    super(errors[0]?.detail ?? `error ${status}`)
    this.status = status
    this.errors = errors
    this.headers = headers
  }
}

export const panelError = (status: number, code: string, detail: string, headers: Readonly<Record<string, string>> = {}) =>
  new PanelError(status, [{ code, status: String(status), detail }], headers)

export const notFound = () =>
  panelError(404, "NotFoundHttpException", "The requested resource could not be found on the server.")

export const conflict = (detail: string) => panelError(409, "ConflictHttpException", detail)

/** A Wings answer passed through the panel as a DaemonConnectionException (§1.4). */
export const daemonError = (status: number, wingsError: string) =>
  panelError(status, "DaemonConnectionException", `An error occurred on the remote host: ${wingsError}. (request id: ${randomUUID()})`)

export const defaultCode = (status: number): string =>
  ({
    400: "BadRequestHttpException",
    401: "AuthenticationException",
    403: "AccessDeniedHttpException",
    404: "NotFoundHttpException",
    409: "ConflictHttpException",
    422: "ValidationException",
    429: "ThrottleRequestsException",
    500: "HttpException",
    502: "DaemonConnectionException",
    503: "HttpException",
    504: "DaemonConnectionException"
  } as Record<number, string>)[status] ?? "HttpException"

export const defaultDetail = (status: number): string =>
  status === 504
    ? "Could not establish a connection to the machine running this server. Please try again."
    : status >= 500
    ? "An unexpected error was encountered while processing this request, please try again."
    : "The request could not be processed."

export interface Reply {
  readonly status: number
  readonly json?: unknown
  readonly text?: string
  /** A raw body as `text/plain`: file contents are the file's bytes, whatever their encoding (as Wings sends them). */
  readonly bytes?: Uint8Array
  readonly headers?: Readonly<Record<string, string>>
}

export const ok = (json: unknown, status = 200): Reply => ({ status, json })
export const noContent = (): Reply => ({ status: 204 })

export const item = (object: string, attributes: unknown, meta?: unknown) =>
  meta === undefined ? { object, attributes } : { object, attributes, meta }

export interface Page<T> {
  readonly rows: ReadonlyArray<T>
  readonly pagination: Record<string, unknown>
}

/** Laravel's paginator: `?page` and `?per_page`, `links.next`/`previous` absolute URLs only when they exist. */
export const paginate = <T>(rows: ReadonlyArray<T>, query: URLSearchParams, absolute: (page: number) => string, defaultPerPage: number, maxPerPage = Infinity): Page<T> => {
  const perRaw = Number(query.get("per_page") ?? defaultPerPage)
  const perPage = Math.min(maxPerPage, Number.isInteger(perRaw) && perRaw > 0 ? perRaw : defaultPerPage)
  const pageRaw = Number(query.get("page") ?? 1)
  const page = Number.isInteger(pageRaw) && pageRaw > 0 ? pageRaw : 1
  const totalPages = Math.max(1, Math.ceil(rows.length / perPage))
  const slice = rows.slice((page - 1) * perPage, page * perPage)
  const links: Record<string, string> = {}
  if (page > 1) links["previous"] = absolute(page - 1)
  if (page < totalPages) links["next"] = absolute(page + 1)
  return {
    rows: slice,
    pagination: { total: rows.length, count: slice.length, per_page: perPage, current_page: page, total_pages: totalPages, links }
  }
}

export const list = (object: string, rows: ReadonlyArray<unknown>, meta?: Record<string, unknown>) => ({
  object: "list",
  data: rows.map((attributes) => ({ object, attributes })),
  ...(meta === undefined ? {} : { meta })
})

/** Laravel's `expectsJson`: any JSON media type, including `+json` vendor types. */
export const expectsJson = (accept: string | undefined): boolean => /(^|[\s,/+])json\b/i.test(accept ?? "")

export const replyResponse = (reply: Reply, extraHeaders: Readonly<Record<string, string>> = {}): HttpServerResponse.HttpServerResponse => {
  const headers = { ...extraHeaders, ...reply.headers }
  if (reply.status === 204) return HttpServerResponse.empty({ status: 204, headers })
  if (reply.text !== undefined || reply.bytes !== undefined) {
    const contentType = Object.entries(headers).find(([k]) => k.toLowerCase() === "content-type")?.[1] ?? "text/plain; charset=utf-8"
    return reply.bytes !== undefined
      ? HttpServerResponse.uint8Array(reply.bytes, { status: reply.status, headers, contentType })
      : HttpServerResponse.text(reply.text ?? "", { status: reply.status, headers, contentType })
  }
  return HttpServerResponse.text(JSON.stringify(reply.json ?? {}), { status: reply.status, headers, contentType: "application/json" })
}

/** An error as Laravel renders it: JSON when the client expects it, else a redirect (401, 422) or an HTML page. */
export const panelErrorResponse = (
  error: PanelError,
  accept: string | undefined,
  panelUrl: string,
  extraHeaders: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse => {
  if (expectsJson(accept)) return replyResponse({ status: error.status, json: { errors: error.errors }, headers: error.headers }, extraHeaders)
  const headers = { ...extraHeaders, ...error.headers }
  if (error.status === 401 || error.status === 422) {
    return HttpServerResponse.empty({ status: 302, headers: { ...headers, Location: error.status === 401 ? `${panelUrl}/auth/login` : `${panelUrl}/` } })
  }
  return HttpServerResponse.text(`<!DOCTYPE html><html><body><h1>${error.status}</h1></body></html>`, {
    status: error.status,
    headers,
    contentType: "text/html; charset=UTF-8"
  })
}

/**
 * A request body, read whole up to `limit` bytes; past it the rest is read and dropped ("too large"), as a client
 * still sending would otherwise see its connection reset before the answer.
 */
export const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<Buffer | "too large", HttpServerError.HttpServerError> =>
  Stream.runFold(
    request.stream,
    (): { chunks: Array<Uint8Array>; size: number } => ({ chunks: [], size: 0 }),
    (acc, chunk) => {
      acc.size += chunk.length
      if (acc.size <= limit) acc.chunks.push(chunk)
      return acc
    }
  ).pipe(Effect.map((acc) => (acc.size > limit ? "too large" : Buffer.concat(acc.chunks))))
