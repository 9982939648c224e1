// The HTTP edge around every route: body size limit, and the error envelope for whatever the router or the
// framework answers on its own (unknown route, unsupported media type, oversize body, unexpected defect).
import { ByteSize, Cause, Effect } from "effect"
import { type Headers, HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { errorBody } from "./ApiErrors.ts"
import type { HttpSettings } from "./HttpSettings.ts"

const CODES: Record<number, readonly [code: string, message: string]> = {
  400: ["BAD_REQUEST", "The request is not valid."],
  404: ["NOT_FOUND", "Nothing is here."],
  405: ["METHOD_NOT_ALLOWED", "This method is not allowed here."],
  413: ["PAYLOAD_TOO_LARGE", "The request body is too large."],
  415: ["UNSUPPORTED_MEDIA_TYPE", "Send the request body as application/json."],
  500: ["INTERNAL_ERROR", "Something went wrong on our side; it has been logged."]
}

export const errorResponse = (status: number, code?: string, message?: string) => {
  const [defaultCode, defaultMessage] = CODES[status] ?? ["ERROR", "The request failed."]
  return HttpServerResponse.jsonUnsafe({ error: errorBody(code ?? defaultCode, message ?? defaultMessage) }, { status })
}

/** The unread rest of an oversize body is never consumed: the connection cannot be reused. */
const tooLarge = errorResponse(413).pipe(HttpServerResponse.setHeader("connection", "close"))

const isBodyTooLarge = (u: unknown): boolean =>
  HttpServerError.isHttpServerError(u) && u.reason._tag === "RequestParseError" && u.reason.reason === "BodyTooLarge"

/** Responses the framework produced with no JSON body get the envelope, so clients see one error shape. */
const isJson = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag !== "Empty" && (response.body.contentType ?? "").includes("json")

const envelope = (response: HttpServerResponse.HttpServerResponse) =>
  response.status >= 400 && !isJson(response) && CODES[response.status] !== undefined
    ? errorResponse(response.status).pipe(HttpServerResponse.setHeaders(withoutBodyHeaders(response.headers)))
    : response

/** The replaced body's own headers must not describe the new one. */
const withoutBodyHeaders = (headers: Headers.Headers) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name !== "content-type" && name !== "content-length"))

const isRelayed = (url: string) => /^\/api\/client\/servers\/[^/]+\/(files|backups)(\/|\?|$)/.test(url)

export const edgeMiddleware = (settings: HttpSettings["Service"]) =>
  HttpRouter.middleware(
    (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const declared = Number(request.headers["content-length"] ?? "0")
        // The game relay streams uploads and enforces its own limits (GameRelayRoutes).
        if (declared > settings.maxBodyBytes && !isRelayed(request.url)) return tooLarge
        return yield* httpEffect.pipe(
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(settings.maxBodyBytes))
        )
      }).pipe(
        Effect.catchCause((cause) => {
          if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
          const error = Cause.squash(cause)
          if (isBodyTooLarge(error)) return Effect.succeed(tooLarge)
          if (HttpServerError.isHttpServerError(error)) {
            if (error.reason._tag === "RouteNotFound") return Effect.succeed(errorResponse(404))
            if (error.reason._tag === "RequestParseError") return Effect.succeed(errorResponse(400))
          }
          return Effect.as(Effect.logError("unhandled error while serving a request", cause), errorResponse(500))
        }),
        Effect.map(envelope)
      ),
    { global: true }
  )
