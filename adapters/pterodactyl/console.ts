// A server's live console on Wings (reference/pterodactyl.md §3.1–§3.3): the token and socket address fetched from
// the panel stay here; the socket is opened with the panel's Origin, authenticated, re-authenticated on the same
// socket before the token expires (or when Wings says it did), and its frames exposed without the token lifecycle.
// Once authenticated, frames are decoded and queued in the socket's own `message` callback: a burst of output costs
// one fiber wake-up per socket read, not an Effect round per frame (the relay's throughput depends on it).
import { Buffer } from "node:buffer"
import type { createConnection, Socket } from "node:net"
import type { Duplex } from "node:stream"
import { Cause, Clock, Duration, Effect, Queue, Schema, type Scope, Stream } from "effect"
import { type RawData, WebSocket } from "ws"
import {
  type ClientCallError,
  ConsoleEnded,
  type ConsoleEvent,
  type ConsoleRequest,
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
  /** The byte stream under the socket (an in-memory node's); undefined: a TCP connection. */
  readonly connection?: (() => Duplex) | undefined
}

export interface ConsoleCredentials {
  readonly token: string
  readonly socket: string
}

type Incoming =
  | { readonly _tag: "Frame"; readonly text: string }
  | { readonly _tag: "Closed"; readonly code: number; readonly reason: string }

/** Where the socket's frames and its close go: the handshake's queue first, then the relay (see `openGameConsole`). */
interface Sink {
  frame(text: string): void
  closed(code: number, reason: string): void
  /** The TCP socket under the WebSocket, once upgraded. */
  upgraded(socket: Socket): void
}

const operation = "open console"

const decodeFrame = Schema.decodeUnknownOption(WingsFrame)

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The frame as an event; `raw` keeps its text when that text says exactly this event (only `event` and string
 * `args`), so that a relay can forward it without encoding it again.
 */
export const eventOf = (text: string): ConsoleEvent | undefined => {
  const json = parsed(text)
  const frame = decodeFrame(json)
  if (frame._tag === "None") return undefined
  const args = frame.value.args ?? []
  const canonical = typeof json === "object" && json !== null && Object.keys(json).length <= 2 &&
    args.every((a) => typeof a === "string")
  const event = { event: frame.value.event, args: args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))) }
  return canonical ? { ...event, raw: text } : event
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
const connect = (credentials: ConsoleCredentials, origin: string, sink: Sink, options: ConsoleOptions) =>
  Effect.acquireRelease(
    Effect.callback<WebSocket, GamePanelUnavailable>((resume) => {
      // Wings accepts the upgrade only with Origin equal to the panel URL it was configured with (§3.2).
      const ws = new WebSocket(credentials.socket, {
        headers: { origin },
        handshakeTimeout: Duration.toMillis(Duration.fromInputUnsafe(options.openTimeout)),
        // ws types the connection as net's createConnection; it only reads and writes the stream it returns.
        ...(options.connection === undefined ? {} : { createConnection: options.connection as unknown as typeof createConnection })
      })
      let settled = false
      const refuse = (detail: string) => {
        if (settled) return
        settled = true
        resume(Effect.fail(new GamePanelUnavailable({ operation, detail })))
      }
      ws.on("upgrade", (response) => sink.upgraded(response.socket))
      ws.on("message", (data) => sink.frame(textOf(data)))
      ws.on("close", (code, reason) => {
        sink.closed(code, reason.toString("utf8"))
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
    let relaying = false
    let socket: Socket | undefined
    let corked = false
    // ws writes every frame on its own; frames sent in one tick (a batch of commands) leave in one write.
    const uncork = () => {
      corked = false
      socket?.uncork()
    }

    /** Synchronous, so that the socket's callbacks can end the console themselves. */
    const endNow = (reason: ConsoleEnded) => {
      if (closed !== undefined) return
      closed = reason
      // Events already queued are still read before the stream fails.
      Queue.failCauseUnsafe(events, Cause.fail(reason))
      ws.close(1000)
    }
    /** Every frame but the token lifecycle goes to `events`. */
    const relay = (text: string) => {
      const event = eventOf(text)
      if (event === undefined || event.event === "auth success") return
      if (event.event === "token expiring" || event.event === "token expired" || isRecoverableJwtError(event)) {
        Queue.offerUnsafe(refreshes, undefined)
        return
      }
      Queue.offerUnsafe(events, event)
    }
    const sink: Sink = {
      frame: (text) => (relaying ? relay(text) : void Queue.offerUnsafe(frames, { _tag: "Frame", text })),
      closed: (code, reason) =>
        relaying
          ? endNow(new ConsoleEnded({ reason: closedReason(code, reason) }))
          : void Queue.offerUnsafe(frames, { _tag: "Closed", code, reason }),
      upgraded: (upgradedSocket) => {
        socket = upgradedSocket
      }
    }

    const ws = yield* connect(first, origin, sink, options)
    const write = (text: string) =>
      Effect.suspend(() => {
        if (closed !== undefined || ws.readyState !== WebSocket.OPEN) {
          return Effect.fail(closed ?? new ConsoleEnded({ reason: "the console is closed" }))
        }
        if (!corked && socket !== undefined) {
          corked = true
          socket.cork()
          process.nextTick(uncork)
        }
        // Not waiting for the write's callback: a failed socket closes, and the close ends the console.
        ws.send(text)
        return Effect.void
      })
    yield* Effect.addFinalizer(() => Effect.sync(() => endNow(new ConsoleEnded({ reason: "the console was closed" }))))

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
    // From here the socket's callbacks relay; what arrived after `auth success` goes first, in one synchronous step
    // so that no callback can overtake it.
    yield* Effect.sync(() => {
      for (let next = Queue.takeUnsafe(frames); next?._tag === "Success"; next = Queue.takeUnsafe(frames)) {
        if (next.value._tag === "Frame") relay(next.value.text)
        else endNow(new ConsoleEnded({ reason: closedReason(next.value.code, next.value.reason) }))
      }
      relaying = true
    })

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
      Effect.catch((e) => Effect.sync(() => endNow(e))),
      Effect.forkScoped
    )

    return {
      events: Stream.fromQueue(events),
      send: (request) => write(JSON.stringify(wingsFrame(request)))
    } satisfies GameConsole
  })

/** A console request as the Wings frame that asks for it (§3.3). */
const wingsFrame = (request: ConsoleRequest): { readonly event: string; readonly args: ReadonlyArray<string> } => {
  switch (request._tag) {
    case "Command":
      return { event: "send command", args: [request.line] }
    case "Power":
      return { event: "set state", args: [request.signal] }
    case "SendLogs":
      return { event: "send logs", args: [] }
    case "SendStats":
      return { event: "send stats", args: [] }
  }
}
