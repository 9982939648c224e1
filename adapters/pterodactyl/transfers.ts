// Files and backups streamed between the caller and a node through fresh single-use signed URLs
// (reference/pterodactyl.md §4.1, §4.2): the panel hands out the URL, the adapter uses it at once and server-side,
// and neither the URL, its token nor the node's address leaves this module. Bytes are streamed, never buffered.
import { type Duration, Effect, Option, type Scope, Stream } from "effect"
import { Headers, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import {
  type ClientCallError,
  type Download,
  type DownloadTarget,
  GamePanelUnavailable,
  UploadAborted
} from "../../ports/GamePanel.ts"
import { type Calls, decodeAs, redactedHeaderNames, timedOut, transportFailure } from "./calls.ts"
import { failure, fromErrorAnswer, portError } from "./failures.ts"
import { SignedUrl } from "./responses.ts"

export interface TransferOptions {
  /** Until the node's answer head arrives (download), or the whole upload. */
  readonly requestTimeout: Duration.Input
  readonly uploadTimeout: Duration.Input
}

const serverPath = (server: string) => `/servers/${encodeURIComponent(server)}`

/** `attachment; filename="a.txt"` or RFC 5987 `filename*=UTF-8''a%20b.txt` (preferred when both are present). */
export const filenameOf = (disposition: string | null): string | null => {
  if (disposition === null) return null
  const extended = /filename\*\s*=\s*[^']*'[^']*'([^;]+)/i.exec(disposition)
  if (extended?.[1] !== undefined) {
    try {
      return decodeURIComponent(extended[1].trim())
    } catch {
      return null
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(disposition)
  const name = plain?.[1]?.replace(/\\(.)/g, "$1") ?? plain?.[2]
  return name === undefined || name === "" ? null : name
}

const header = (response: HttpClientResponse.HttpClientResponse, name: string) =>
  Option.getOrNull(Headers.get(response.headers, name))

/** A signed URL from the panel; its shape is checked, its text never reported. */
const signedUrl = (calls: Calls, panel: string, operation: string, path: string) =>
  calls.client(panel, operation, { method: "GET", path }).pipe(
    Effect.flatMap(decodeAs(SignedUrl, operation)),
    Effect.flatMap((signed) =>
      Effect.try({
        try: () => new URL(signed.attributes.url),
        catch: () => failure(operation, 200, "UnexpectedAnswer", "the signed URL is not a URL")
      })
    )
  )

/** A node's refusal (Wings answers `{error}`; 404 for a used or unknown token), read bounded, as a CallFailed. */
const nodeRefusal = (operation: string, response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function*() {
    const text = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
    return yield* fromErrorAnswer(operation, response.status, text.slice(0, 4096), undefined, Date.now())
  })

/**
 * Opens the download within the caller's scope and returns as soon as the node's head arrived; the body is pulled
 * by the caller. No key is sent to the node: the signed URL's token is the only authority it needs.
 */
export const download = (
  http: HttpClient.HttpClient,
  calls: Calls,
  options: TransferOptions,
  panel: string,
  server: string,
  target: DownloadTarget
): Effect.Effect<Download, ClientCallError, Scope.Scope> => {
  const operation = target._tag === "File" ? "download file" : "download backup"
  const path = target._tag === "File"
    ? `${serverPath(server)}/files/download?file=${encodeURIComponent(target.path)}`
    : `${serverPath(server)}/backups/${encodeURIComponent(target.uuid)}/download`
  return Effect.gen(function*() {
    const url = yield* signedUrl(calls, panel, operation, path)
    const response = yield* HttpClient.withScope(http).execute(HttpClientRequest.get(url)).pipe(
      Effect.catchTag("HttpClientError", (e) => Effect.fail(transportFailure(operation, e))),
      Effect.timeoutOrElse({
        duration: options.requestTimeout,
        orElse: () => Effect.fail(timedOut(operation, options.requestTimeout))
      })
    )
    if (response.status < 200 || response.status >= 300) return yield* nodeRefusal(operation, response)
    const length = header(response, "content-length")
    const contentLength = length !== null && /^\d+$/.test(length) ? Number(length) : null
    const stream: Stream.Stream<Uint8Array, GamePanelUnavailable> = response.stream.pipe(
      Stream.mapError(() => new GamePanelUnavailable({ operation, detail: "the node stopped sending" }))
    )
    return {
      contentLength,
      filename: filenameOf(header(response, "content-disposition")),
      contentType: header(response, "content-type"),
      stream
    } satisfies Download
  }).pipe(
    Effect.provideService(Headers.CurrentRedactedNames, redactedHeaderNames),
    Effect.mapError((e) => (e._tag === "CallFailed" ? portError(e) : e))
  )
}

/**
 * Streams the caller's multipart body (parts named `files`) to the node through a fresh upload URL with
 * `directory` added to its query (§4.1). A body that stops with UploadAborted fails with it, whatever the node said.
 */
export const upload = (
  http: HttpClient.HttpClient,
  calls: Calls,
  options: TransferOptions,
  panel: string,
  server: string,
  body: {
    readonly directory: string
    readonly contentType: string
    readonly contentLength: number | null
    readonly body: Stream.Stream<Uint8Array, UploadAborted>
  }
): Effect.Effect<void, ClientCallError | UploadAborted> => {
  const operation = "upload files"
  return Effect.gen(function*() {
    const url = yield* signedUrl(calls, panel, operation, `${serverPath(server)}/files/upload`)
    url.searchParams.set("directory", body.directory)
    let aborted: UploadAborted | undefined
    const source = body.body.pipe(Stream.tapError((e) => Effect.sync(() => (aborted = e))))
    const request = HttpClientRequest.post(url).pipe(
      HttpClientRequest.bodyStream(source, {
        contentType: body.contentType,
        ...(body.contentLength === null ? {} : { contentLength: body.contentLength })
      })
    )
    const result = yield* Effect.result(
      Effect.gen(function*() {
        const response = yield* http.execute(request)
        if (response.status >= 200 && response.status < 300) return
        return yield* nodeRefusal(operation, response)
      }).pipe(
        Effect.scoped,
        Effect.catchTag("HttpClientError", (e) => Effect.fail(transportFailure(operation, e))),
        Effect.timeoutOrElse({
          duration: options.uploadTimeout,
          orElse: () => Effect.fail(timedOut(operation, options.uploadTimeout))
        })
      )
    )
    if (aborted !== undefined) return yield* aborted
    if (result._tag === "Failure") return yield* result.failure
  }).pipe(
    Effect.provideService(Headers.CurrentRedactedNames, redactedHeaderNames),
    Effect.mapError((e): ClientCallError | UploadAborted => (e._tag === "CallFailed" ? portError(e) : e))
  )
}
