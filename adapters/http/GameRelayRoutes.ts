// The files and backups relay (DESIGN §3 "Client-API relay"): under /api/client/servers/:id/files/… and
// /api/client/servers/:id/backups/…, each allowed call is relayed as its operation with its query and body
// unchanged after the session, ownership and state checks, and the panel's status and body come back — except
// that nothing reaching the customer may hold the panel's or a node's address: signed URLs are replaced by our own
// streaming routes, pagination links and resource URLs are stripped, and errors are ours, never the panel's text.
import { finished, Readable } from "node:stream"
import { Effect, Exit, Option, Scope, Stream } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { Session } from "../../domain/account/Sessions.ts"
import { ownedByIdentifier, usableGameServer } from "../../domain/game/GameActions.ts"
import { GameServerNotFound } from "../../domain/game/GameErrors.ts"
import type { GameServer } from "../../domain/game/GameServer.ts"
import { type FileAction, fileAction } from "../../domain/game/fileActions.ts"
import { type DownloadTarget, type FileCall, GamePanel, UploadAborted } from "../../ports/GamePanel.ts"
import type { AuditLog } from "../../ports/AuditLog.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { requireSession, type SessionGuard } from "./Authentication.ts"
import { makeOwnAction } from "./audited.ts"
import { CustomerBudgets } from "./customerBudget.ts"
import type { HttpSettings } from "./HttpSettings.ts"
import { errorResponse, refusal } from "./errorMapping.ts"
import { CONTROL_MESSAGE, firstControl, isServerIdentifier } from "./inputs.ts"

export interface GameRelayOptions {
  /** Our public origin: the signed URLs we hand out point here. */
  readonly publicUrl: string
  /** Largest JSON or text body relayed (the panel's editor reads files up to 4 MiB). */
  readonly maxRelayBodyBytes: number
  /** Largest upload streamed to a node. */
  readonly maxUploadBytes: number
}

export type GameRelayServices = SessionGuard | GamePanel | GameServerRecords | CustomerBudgets | AuditLog | HttpSettings

/** Operations that only read: everything else the relay passes changes the server's files or backups. */
const READS: ReadonlySet<string> = new Set(["ListFiles", "ReadFile", "ListBackups", "ReadBackup"])

/** What a change touched, in a line: the operation and the path or folder its query names (bounded), never content. */
const changeSummary = (operation: string, query: URLSearchParams) => {
  const where = query.get("file") ?? query.get("directory") ?? query.get("root")
  return { operation, ...(where === null ? {} : { path: where.slice(0, 256) }) }
}

/**
 * Removes what names the panel: pagination `links` (absolute panel URLs) and `meta.resource`, wherever they sit
 * (lists, and lists included in items).
 */
export const sanitize = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sanitize)
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (key === "links" || key === "resource") continue
    out[key] = sanitize(inner)
  }
  return out
}

/** The whole body, or none when it is over `limit`: refused whole (by its declared length when it has one), never cut. */
const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
  Effect.gen(function*() {
    const declared = request.headers["content-length"]
    if (declared !== undefined && Number(declared) > limit) return Option.none<Uint8Array>()
    const chunks: Array<Uint8Array> = []
    let size = 0
    yield* request.stream.pipe(
      Stream.runForEachWhile((chunk) => {
        size += chunk.byteLength
        if (size > limit) return Effect.succeed(false)
        chunks.push(chunk)
        return Effect.succeed(true)
      })
    )
    if (size > limit) return Option.none<Uint8Array>()
    const out = new Uint8Array(size)
    let at = 0
    for (const c of chunks) {
      out.set(c, at)
      at += c.byteLength
    }
    return Option.some(out)
  })

/** A relayed field holding a control character, named: the same answer as our own routes give. */
const invalidText = (where: string) =>
  errorResponse(400, "INVALID_REQUEST", `The request is not valid: ${where} ${CONTROL_MESSAGE}.`)

const decoder = new TextDecoder()
const encoder = new TextEncoder()

const relayed = (server: GameServer, request: HttpServerRequest.HttpServerRequest, target: Extract<FileAction, { _tag: "Relay" }>, query: string, options: GameRelayOptions) =>
  Effect.gen(function*() {
    let body: FileCall["body"] = null
    if (target.body !== "none") {
      const bytes = yield* readBody(request, options.maxRelayBodyBytes)
      if (Option.isNone(bytes)) {
        return errorResponse(413, "PAYLOAD_TOO_LARGE", `The request body is over its limit of ${options.maxRelayBodyBytes} bytes; nothing was written.`)
          .pipe(HttpServerResponse.setHeader("connection", "close"))
      }
      if (target.body === "json") {
        // Forwarded unchanged, but only if it is JSON (the panel's parse error would echo it back otherwise) and its
        // text follows our rule (file names and backup names are one line: no control character reaches the panel).
        let parsed: unknown
        try {
          parsed = JSON.parse(bytes.value.byteLength === 0 ? "{}" : decoder.decode(bytes.value))
        } catch {
          return errorResponse(400, "INVALID_JSON", "The request body is not valid JSON.")
        }
        const bad = firstControl(parsed)
        if (bad !== undefined) return invalidText(`body field ${JSON.stringify(bad.map(String).join("."))}`)
      }
      body = { contentType: target.body === "json" ? "application/json" : "text/plain", bytes: bytes.value.byteLength === 0 && target.body === "json" ? encoder.encode("{}") : bytes.value }
    }
    const response = yield* (yield* GamePanel).relayFileCall(server.panel, server.uuid, { operation: target.operation, query, body })
    if (response.status === 204 || response.body.byteLength === 0) return HttpServerResponse.empty({ status: response.status })
    if ((response.contentType ?? "").includes("json")) {
      const parsed = yield* Effect.try(() => JSON.parse(decoder.decode(response.body)) as unknown).pipe(Effect.option)
      if (Option.isNone(parsed)) return errorResponse(503, "GAME_PANEL_UNAVAILABLE", "The game panel answered something unreadable.")
      return HttpServerResponse.jsonUnsafe(sanitize(parsed.value), { status: response.status })
    }
    // File contents: text as the panel gave it.
    return HttpServerResponse.uint8Array(response.body, { status: response.status, contentType: "text/plain; charset=utf-8" })
  })

/**
 * `attachment` naming the file for every browser: an ASCII fallback, and the exact name in RFC 6266's `filename*`
 * (a header holds Latin-1 at most: a raw emoji in it would fail the answer).
 */
const attachment = (name: string) => {
  const exact = encodeURIComponent(name.toWellFormed()).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${exact}`
}

/**
 * The bytes flow from the node to the customer, never held whole: a Node stream is piped as it is (backpressure,
 * no step per chunk), any other body through `Readable.from`. However the body ends (sent, cut by the node, or the
 * customer gone, which destroys it), the download's scope closes and the upstream is released.
 */
const downloaded = (server: GameServer, target: DownloadTarget) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const download = yield* (yield* GamePanel).download(server.panel, server.uuid, target).pipe(
      Scope.provide(scope),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
    const body = download.body instanceof Readable ? download.body : Readable.from(download.body, { objectMode: false })
    finished(body, () => void Effect.runFork(Scope.close(scope, Exit.void)))
    const name = download.filename ?? (target._tag === "File" ? target.path.split("/").pop() ?? "download" : `${target.uuid}.tar.gz`)
    return HttpServerResponse.raw(
      body,
      {
        contentType: "application/octet-stream",
        ...(download.contentLength === null ? {} : { contentLength: download.contentLength }),
        headers: { "content-disposition": attachment(name), "cache-control": "no-store" }
      }
    )
  })

/** The customer's multipart body streams to the node as it arrives; past the limit it is cut and nothing is kept. */
const uploaded = (server: GameServer, request: HttpServerRequest.HttpServerRequest, query: URLSearchParams, options: GameRelayOptions) =>
  Effect.gen(function*() {
    const contentType = request.headers["content-type"] ?? ""
    if (!contentType.startsWith("multipart/form-data") || !contentType.includes("boundary=")) {
      return errorResponse(415, "UNSUPPORTED_MEDIA_TYPE", "Send the files as multipart/form-data, in parts named \"files\".")
    }
    const declared = request.headers["content-length"] === undefined ? null : Number(request.headers["content-length"])
    if (declared !== null && declared > options.maxUploadBytes) {
      return errorResponse(413, "UPLOAD_TOO_LARGE", `Uploads are limited to ${Math.floor(options.maxUploadBytes / 1024 / 1024)} MiB.`)
        .pipe(HttpServerResponse.setHeader("connection", "close"))
    }
    let size = 0
    const body = request.stream.pipe(
      Stream.mapError(() => new UploadAborted({ reason: "the connection dropped" })),
      Stream.mapEffect((chunk) => {
        size += chunk.byteLength
        return size > options.maxUploadBytes ? Effect.fail(new UploadAborted({ reason: "too large" })) : Effect.succeed(chunk)
      })
    )
    const directory = query.get("directory") ?? "/"
    return yield* (yield* GamePanel).upload(server.panel, server.uuid, { directory, contentType, contentLength: declared, body }).pipe(
      Effect.as(HttpServerResponse.empty({ status: 204 })),
      Effect.catchTag("UploadAborted", (e) =>
        Effect.succeed(
          e.reason === "too large"
            ? errorResponse(413, "UPLOAD_TOO_LARGE", `Uploads are limited to ${Math.floor(options.maxUploadBytes / 1024 / 1024)} MiB.`).pipe(HttpServerResponse.setHeader("connection", "close"))
            : errorResponse(400, "UPLOAD_ABORTED", "The upload did not arrive whole; nothing was written.")
        ))
    )
  })

/** The allowed calls only (anything else is a 404, signed in or not), for signed-in customers only. */
const handle = (options: GameRelayOptions) => (request: HttpServerRequest.HttpServerRequest) => {
  // From the path as sent: URL parsing would resolve `..` and `%2e%2e` in the id's place into another path.
  const path = (request.url.split("?")[0] ?? "").replace(/^\/api\/client\/servers\/[^/]+\//, "")
  const target = fileAction(request.method, path)
  if (target === undefined) return Effect.succeed(errorResponse(404))
  return requireSession((request, session) => relayAs(session, target, path, request, options))(request)
}

const relayAs = (session: Session, target: FileAction, path: string, request: HttpServerRequest.HttpServerRequest, options: GameRelayOptions) =>
  Effect.gen(function*() {
    // Every relayed call spends the customer's share of the panel's budget first (429 RATE_LIMITED past it).
    const spent = yield* Effect.result((yield* CustomerBudgets).spend(session.user.id, "game-panel"))
    if (spent._tag === "Failure") return refusal(spent.failure)
    const identifier = (yield* HttpRouter.RouteContext).params["id"] ?? ""
    const url = new URL(request.url, "http://relay")
    // Not an identifier: answered as no such server, without asking the database.
    if (!isServerIdentifier(identifier)) return refusal(new GameServerNotFound())
    const owned = yield* Effect.result(Effect.flatMap(ownedByIdentifier(session.user.id, identifier), usableGameServer))
    if (owned._tag === "Failure") return refusal(owned.failure)
    const server = owned.success
    const query = url.search.replace(/^\?/, "")
    const badParameter = [...url.searchParams].find((pair) => firstControl(pair) !== undefined)
    if (badParameter !== undefined) return invalidText(`query parameter ${JSON.stringify(badParameter[0])}`)
    switch (target._tag) {
      case "Refused":
        return errorResponse(403, target.code, target.message)
      case "SignedUrl": {
        const signed = new URL(`/api/client/servers/${encodeURIComponent(server.identifier)}/${target.to}`, options.publicUrl)
        if (target.to === "files/download/stream") {
          const file = url.searchParams.get("file")
          if (file === null || file === "") return errorResponse(422, "INVALID_REQUEST", "Say which file: ?file=/path.")
          signed.searchParams.set("file", file)
        }
        return HttpServerResponse.jsonUnsafe({ object: "signed_url", attributes: { url: signed.href } })
      }
      case "Download": {
        const what = target.target(url.searchParams)
        if (what === undefined) return errorResponse(422, "INVALID_REQUEST", "Say which file: ?file=/path.")
        return yield* downloaded(server, what)
      }
      case "Upload":
        return yield* audited(uploaded(server, request, url.searchParams, options), "UploadFiles")
      case "Relay":
        return yield* READS.has(target.operation._tag)
          ? relayed(server, request, target, query, options)
          : audited(relayed(server, request, target, query, options), target.operation._tag)
    }
    /** A change that went through is summarised in the audit log (the files' content never is). */
    function audited<E, R>(response: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>, operation: string) {
      return Effect.tap(response, (done) =>
        done.status < 300
          ? Effect.flatMap(makeOwnAction, (audit) =>
            audit.own(session, request, "game.files_changed", { type: "game_server", id: server.id }, changeSummary(operation, url.searchParams)))
          : Effect.void)
    }
  }).pipe(
    Effect.catchTags({
      GamePanelUnavailable: (e) => Effect.as(Effect.logWarning("game panel relay failed", e.message), refusal(e)),
      GamePanelThrottled: (e) => Effect.succeed(refusal(e)),
      PanelUnknown: (e) => Effect.as(Effect.logError("a game server names a panel the catalog does not have", e.panel), refusal(e)),
      PanelValidationFailed: (e) => Effect.succeed(refusal(e)),
      ServerStateConflict: (e) => Effect.succeed(refusal(e)),
      PanelResourceNotFound: (e) => Effect.succeed(refusal(e)),
      BackupLimitReached: (e) => Effect.succeed(refusal(e)),
      BackupLocked: (e) => Effect.succeed(refusal(e)),
      FileTooLarge: (e) => Effect.succeed(refusal(e)),
      FileAlreadyExists: (e) => Effect.succeed(refusal(e)),
      PanelRefused: (e) => Effect.as(Effect.logInfo("game panel refused a relayed call", e.message), refusal(e))
    })
  )

export const gameRelayRoutes = (options: GameRelayOptions) => {
  const relay = handle(options)
  return HttpRouter.addAll([
    HttpRouter.route("*", "/api/client/servers/:id/files/*", relay),
    HttpRouter.route("*", "/api/client/servers/:id/backups/*", relay)
  ])
}
