// Files and backups streamed between the caller and a node through fresh single-use signed URLs
// (reference/pterodactyl.md §4.1, §4.2): the panel hands out the URL, the adapter uses it at once and server-side,
// and neither the URL, its token nor the node's address leaves this module. Bytes are streamed, never buffered.
import type { Readable } from "node:stream"
import { type Dispatcher, request as undiciRequest } from "undici"
import { type Duration, Effect, type Scope, Stream } from "effect"
import { Headers, type HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { type ClientCallError, type Download, type DownloadTarget, UploadAborted } from "../../ports/GamePanel.ts"
import { type Calls, decodeAs, redactedHeaderNames, timedOut, transportFailure } from "./calls.ts"
import { type CallFailed, failure, fromErrorAnswer, portError } from "./failures.ts"
import { SignedUrl } from "./responses.ts"

export interface TransferOptions {
  /** Until the node's answer head arrives (download), or the whole upload. */
  readonly requestTimeout: Duration.Input
  readonly uploadTimeout: Duration.Input
  /** Carries downloads (NodeConnections); undefined: undici's global dispatcher. */
  readonly dispatcher?: Dispatcher | undefined
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

/** The start of a refusal's body (Wings answers a short `{error}`). */
const refusalText = (body: Readable & { text(): Promise<string> }) =>
  Effect.tryPromise(() => body.text()).pipe(Effect.map((text) => text.slice(0, 4096)), Effect.orElseSucceed(() => ""))

const ignoreError = () => {}

/** The node's answer head, its body not yet read. */
interface NodeAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: Readable & { text(): Promise<string> }
}

/**
 * GETs a signed URL with undici's own `request`: its body is a Node stream, handed to the HTTP edge as it is
 * (measured: less CPU per relayed MiB than node:http's answers, or than an Effect Stream over undici). Interrupted before
 * the head, the request is aborted.
 */
const getNode = (url: URL, operation: string, dispatcher: Dispatcher | undefined) =>
  Effect.tryPromise({
    try: (signal): Promise<NodeAnswer> =>
      undiciRequest(url, { method: "GET", headers: { accept: "*/*" }, signal, bodyTimeout: 0, ...(dispatcher === undefined ? {} : { dispatcher }) }).then((answer) => {
        // Dropping an unread body (the scope's end) makes undici emit an abort error; readers (pipeline, for await)
        // watch for errors themselves, so this listener only keeps an unobserved one from crashing the process.
        answer.body.on("error", ignoreError)
        return { status: answer.statusCode, headers: answer.headers, body: answer.body }
      }),
    catch: (error) => {
      const code = typeof error === "object" && error !== null ? Reflect.get(error, "code") : undefined
      return failure(operation, null, "TransportError", typeof code === "string" ? code : "no answer")
    }
  })

const headerOf = (answer: NodeAnswer, name: string): string | null => {
  const value = answer.headers[name]
  return typeof value === "string" ? value : null
}

/**
 * Opens the download within the caller's scope and returns as soon as the node's head arrived; the body is read by
 * the caller. No key is sent to the node: the signed URL's token is the only authority it needs. The body is the
 * node's answer itself (a Node stream), so the HTTP edge pipes it without a copy or a step per chunk; the scope's
 * end drops it if it was not read to the end.
 */
export const download = (
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
    // Interruptible until the head arrives (the timeout drops the request); from then on the scope owns the answer.
    const response = yield* Effect.uninterruptibleMask((restore) =>
      restore(getNode(url, operation, options.dispatcher).pipe(
        Effect.timeoutOrElse({
          duration: options.requestTimeout,
          orElse: () => Effect.fail(timedOut(operation, options.requestTimeout))
        })
      )).pipe(
        Effect.tap((answer) => Effect.addFinalizer(() => Effect.sync(() => {
          if (!answer.body.readableEnded) answer.body.destroy()
        })))
      )
    )
    const status = response.status
    if (status < 200 || status >= 300) {
      const text = yield* refusalText(response.body).pipe(
        Effect.timeoutOrElse({ duration: options.requestTimeout, orElse: () => Effect.succeed("") })
      )
      return yield* fromErrorAnswer(operation, status, text, undefined, Date.now())
    }
    const length = headerOf(response, "content-length")
    return {
      contentLength: length !== null && /^\d+$/.test(length) ? Number(length) : null,
      filename: filenameOf(headerOf(response, "content-disposition")),
      contentType: headerOf(response, "content-type"),
      body: response.body
    } satisfies Download
  }).pipe(
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
