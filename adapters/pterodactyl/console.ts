// A server's live console on Wings (reference/pterodactyl.md §3.1–§3.3): the token and socket address fetched from
// the panel stay here; the socket is opened with the panel's Origin, authenticated, re-authenticated on the same
// socket before the token expires (or when Wings says it did), and its frames exposed without the token lifecycle.
import { Buffer } from "node:buffer"
import { Clock, Duration, Effect, Queue, Schema, type Scope, Stream } from "effect"
import { type RawData, WebSocket } from "ws"
import {
  type ClientCallError,
  ConsoleEnded,
  type ConsoleEvent,
  type GameConsole,
  GamePanelUnavailable
} from "../../ports/GamePanel.ts"
import { sanitize } from "./failures.ts"
import { WingsFrame } from "./responses.ts"

export interface ConsoleOptions {
  /** Opening the socket and receiving `auth success`. */
  readonly openTimeout: Duration.Input
  /** Re-authenticate this long before the token's `exp` (Wings warns only 60 s ahead, checked every 30 s: §3.3). */
  readonly tokenRefreshMargin: Duration.Input
  /** Events kept for a slow reader; the oldest are dropped past it (stats arrive every second). */
  readonly bufferedEvents: number
}

export interface ConsoleCredentials {
  readonly token: string
  readonly socket: string
}

type Incoming =
  | { readonly _tag: "Frame"; readonly text: string }
  | { readonly _tag: "Closed"; readonly code: number; readonly reason: string }

const operation = "open console"

const decodeFrame = Schema.decodeUnknownOption(Schema.fromJsonString(WingsFrame))

const eventOf = (text: string): ConsoleEvent | undefined => {
  const frame = decodeFrame(text)
  if (frame._tag === "None") return undefined
  return { event: frame.value.event, args: (frame.value.args ?? []).map((a) => (typeof a === "string" ? a : JSON.stringify(a))) }
}

const textOf = (data: RawData): string =>
  Buffer.isBuffer(data)
    ? data.toString("utf8")
    : Array.isArray(data)
    ? Buffer.concat(data).toString("utf8")
    : Buffer.from(data).toString("utf8")

/** `jwt: exp claim is invalid`, `jwt: created too far in past (denylist)`: a fresh token fixes them (§3.3). */
export const isRecoverableJwtError = (event: ConsoleEvent) =>
  event.event === "jwt error" && /exp claim|denylist|expired/i.test(event.args[0] ?? "")

/** The token's `exp` in epoch ms, read without verifying (Wings verifies it); undefined when absent. */
export const expiryOf = (token: string): number | undefined => {
  const payload = token.split(".")[1]
  if (payload === undefined) return undefined
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
    const exp = typeof claims === "object" && claims !== null ? Reflect.get(claims, "exp") : undefined
    return typeof exp === "number" ? exp * 1000 : undefined
  } catch {
    return undefined
  }
}

/**
 * `margin` before expiry, but never sooner than half the remaining lifetime: a token shorter than the margin would
 * otherwise be renewed in a tight loop.
 */
export const renewalDelay = (remaining: number, margin: number) => Math.max(0, remaining - margin, remaining / 2)

const closedReason = (code: number, reason: string) => {
  if (code === 4409) return "the server is suspended"
  if (code === 1001 && /deleted/i.test(reason)) return "the server was deleted"
  const text = sanitize(reason)
  return `the node closed the console (${code}${text === "" ? "" : `: ${text}`})`
}

const authFrame = (token: string) => JSON.stringify({ event: "auth", args: [token] })

/** Opens the socket and waits for it to be open; any refusal is reported without the address. */
const connect = (credentials: ConsoleCredentials, origin: string, frames: Queue.Queue<Incoming>, timeout: Duration.Input) =>
  Effect.acquireRelease(
    Effect.callback<WebSocket, GamePanelUnavailable>((resume) => {
      // Wings accepts the upgrade only with Origin equal to the panel URL it was configured with (§3.2).
      const ws = new WebSocket(credentials.socket, {
        headers: { origin },
        handshakeTimeout: Duration.toMillis(Duration.fromInputUnsafe(timeout))
      })
      let settled = false
      const refuse = (detail: string) => {
        if (settled) return
        settled = true
        resume(Effect.fail(new GamePanelUnavailable({ operation, detail })))
      }
      ws.on("message", (data) => Queue.offerUnsafe(frames, { _tag: "Frame", text: textOf(data) }))
      ws.on("close", (code, reason) => {
        Queue.offerUnsafe(frames, { _tag: "Closed", code, reason: reason.toString("utf8") })
        refuse(`the node closed the socket (${code})`)
      })
      ws.on("error", (error) => {
        const status = /\b(\d{3})\b/.exec(error.message)?.[1]
        refuse(status === undefined ? "the node could not be reached" : `the node refused the socket (HTTP ${status})`)
      })
      ws.on("open", () => {
        if (settled) return
        settled = true
        resume(Effect.succeed(ws))
      })
      return Effect.sync(() => ws.terminate())
    }),
    (ws) => Effect.sync(() => ws.close(1000))
  )

/**
 * Opens the console; `credentials` asks the panel for a token and socket (the first time and at every renewal).
 * Closed with the scope.
 */
export const openGameConsole = (
  credentials: Effect.Effect<ConsoleCredentials, ClientCallError>,
  origin: string,
  options: ConsoleOptions
): Effect.Effect<GameConsole, ClientCallError | ConsoleEnded, Scope.Scope> =>
  Effect.gen(function*() {
    const first = yield* credentials
    const frames = yield* Queue.unbounded<Incoming>()
    const events = yield* Queue.sliding<ConsoleEvent, ConsoleEnded>(options.bufferedEvents)
    const refreshes = yield* Queue.unbounded<void>()
    let closed: ConsoleEnded | undefined

    const ws = yield* connect(first, origin, frames, options.openTimeout)
    const write = (text: string) =>
      Effect.callback<void, ConsoleEnded>((resume) => {
        if (closed !== undefined || ws.readyState !== WebSocket.OPEN) {
          return resume(Effect.fail(closed ?? new ConsoleEnded({ reason: "the console is closed" })))
        }
        ws.send(text, (error) =>
          resume(error === undefined || error === null ? Effect.void : Effect.fail(new ConsoleEnded({ reason: "the console is closed" }))))
      })
    const end = (reason: ConsoleEnded) =>
      Effect.suspend(() => {
        if (closed !== undefined) return Effect.void
        closed = reason
        return Effect.andThen(Queue.fail(events, reason), Effect.sync(() => ws.close(1000)))
      })
    yield* Effect.addFinalizer(() => end(new ConsoleEnded({ reason: "the console was closed" })))

    // Authenticate: everything before `auth success` is the handshake (§3.3).
    yield* write(authFrame(first.token))
    yield* Effect.gen(function*() {
      while (true) {
        const next = yield* Queue.take(frames)
        if (next._tag === "Closed") return yield* new ConsoleEnded({ reason: closedReason(next.code, next.reason) })
        const event = eventOf(next.text)
        if (event?.event === "auth success") return
        if (event?.event === "jwt error") return yield* new ConsoleEnded({ reason: "the node refused the console token" })
      }
    }).pipe(
      Effect.timeoutOrElse({
        duration: options.openTimeout,
        orElse: () => Effect.fail(new GamePanelUnavailable({ operation, detail: "the node did not accept the token in time" }))
      })
    )

    // Renewal: on the token's schedule, or at once when Wings asks; one at a time, on the same socket.
    const margin = Duration.toMillis(Duration.fromInputUnsafe(options.tokenRefreshMargin))
    const renewLoop = (token: string): Effect.Effect<void, ConsoleEnded> =>
      Effect.gen(function*() {
        const exp = expiryOf(token)
        const due = exp === undefined
          ? Effect.never
          : Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(Duration.millis(renewalDelay(exp - now, margin))))
        yield* Effect.raceFirst(Queue.take(refreshes), due)
        yield* Queue.clear(refreshes)
        const fresh = yield* credentials.pipe(
          Effect.mapError(() => new ConsoleEnded({ reason: "the console token could not be renewed" }))
        )
        yield* write(authFrame(fresh.token))
        return yield* renewLoop(fresh.token)
      })
    yield* renewLoop(first.token).pipe(
      Effect.catch((e) => end(e)),
      Effect.forkScoped
    )

    // Relay: every frame but the token lifecycle; a close ends the stream.
    const relay: Effect.Effect<void> = Effect.gen(function*() {
      while (true) {
        const next = yield* Queue.take(frames)
        if (next._tag === "Closed") return yield* end(new ConsoleEnded({ reason: closedReason(next.code, next.reason) }))
        const event = eventOf(next.text)
        if (event === undefined || event.event === "auth success") continue
        if (event.event === "token expiring" || event.event === "token expired" || isRecoverableJwtError(event)) {
          yield* Queue.offer(refreshes, undefined)
          continue
        }
        yield* Queue.offer(events, event)
      }
    })
    yield* Effect.forkScoped(relay)

    return {
      events: Stream.fromQueue(events),
      // The adapter owns authentication: a caller's `auth` frame would replace its token.
      send: (event) => (event.event === "auth" ? Effect.void : write(JSON.stringify({ event: event.event, args: event.args })))
    } satisfies GameConsole
  })
