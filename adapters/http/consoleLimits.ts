// What bounds a console WebSocket before and while it runs: the frame size the WebSocket server refuses before
// buffering (1009), the handshake checks that answer anything but a valid WebSocket upgrade with our JSON envelope
// (never the `ws` library's text/html, never a raw TCP stream), and the token buckets that rate-limit a socket's input frames.
import { Cause, Data, Effect, Exit } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Socket } from "effect/socket"
import { errorResponse } from "./errorMapping.ts"

/** The largest frame a browser may send a console: typed input is small, a paste is bounded. */
export const CONSOLE_MAX_FRAME_BYTES = 64 * 1024

/**
 * The WebSocket server's own options (NodeHttpServer's `websocket`): a frame over the limit is refused from its
 * header, before its payload is buffered, and the socket closed with 1009. The console routes are the only WebSocket
 * routes, so the server's limit is theirs; a route asking for less closes with 1009 itself.
 */
export const webSocketServerOptions = { maxPayload: CONSOLE_MAX_FRAME_BYTES } as const

/** A browser's input that ends its console: a frame over the route's limit (1009), or frames too fast (4429). */
export class InputRefused extends Data.TaggedError("InputRefused")<{ readonly code: 1009 | 4429; readonly reason: string }> {}

export const frameTooLarge = new InputRefused({ code: 1009, reason: "frame too large" })
export const inputTooFast = new InputRefused({ code: 4429, reason: "input too fast" })

const encoder = new TextEncoder()
export const frameBytes = (frame: string | Uint8Array) => (typeof frame === "string" ? encoder.encode(frame).byteLength : frame.byteLength)

/**
 * A console interrupted (the server stopping, its scope closed) tells the browser 1001 "going away": come back later,
 * the console itself did not fail. Added to the console's scope once its socket is open.
 */
export const closeWithGoingAwayOnInterrupt = (write: (event: Socket.CloseEvent) => Effect.Effect<void, unknown>) =>
  Effect.addFinalizer((exit) =>
    Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause)
      ? Effect.ignore(write(new Socket.CloseEvent(1001, "server shutting down")))
      : Effect.void
  )

// --- the handshake ---------------------------------------------------------------------------------------------

/** RFC 6455 §4.1: the base64 of 16 bytes. */
const KEY = /^[+/0-9A-Za-z]{22}==$/
/** RFC 6455 §11.3.4: a list of RFC 7230 tokens, none twice. */
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+"
const PROTOCOLS = new RegExp(`^${TOKEN}(?:[ \\t]*,[ \\t]*${TOKEN})*$`)

const header = (request: HttpServerRequest.HttpServerRequest, name: string) => request.headers[name]

/**
 * Why this request cannot become a console WebSocket, as our JSON answer; undefined for a valid upgrade. Checked before
 * anything else on a console route: the WebSocket server would otherwise refuse a bad handshake with its own text/html
 * page, and the HTTP server hand any other `Upgrade` a raw TCP stream.
 */
export const upgradeRefusal = (request: HttpServerRequest.HttpServerRequest): HttpServerResponse.HttpServerResponse | undefined => {
  if ((header(request, "upgrade") ?? "").toLowerCase() !== "websocket") {
    return errorResponse(426, "UPGRADE_REQUIRED", "This is a WebSocket endpoint: open it with a WebSocket client.").pipe(
      HttpServerResponse.setHeader("upgrade", "websocket")
    )
  }
  const version = header(request, "sec-websocket-version")
  if (version !== "13" && version !== "8") {
    return errorResponse(426, "UPGRADE_REQUIRED", "Use WebSocket protocol version 13.").pipe(
      HttpServerResponse.setHeader("sec-websocket-version", "13")
    )
  }
  if (!KEY.test(header(request, "sec-websocket-key") ?? "")) {
    return errorResponse(400, "INVALID_WEBSOCKET_HANDSHAKE", "The Sec-WebSocket-Key header is missing or malformed.")
  }
  const protocols = header(request, "sec-websocket-protocol")
  if (protocols !== undefined) {
    const names = protocols.split(",").map((p) => p.trim())
    if (!PROTOCOLS.test(protocols) || new Set(names).size !== names.length) {
      return errorResponse(400, "INVALID_WEBSOCKET_HANDSHAKE", "The Sec-WebSocket-Protocol header is malformed.")
    }
  }
  return undefined
}

/**
 * A console route's door, before anything else: a valid WebSocket handshake (see `upgradeRefusal`), from the panel's
 * own origin — a page elsewhere could ride the cookie (cross-site WebSocket hijacking).
 */
export const consoleHandshake = <E, R>(
  allowedOrigin: string,
  handler: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
(request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
  const refused = upgradeRefusal(request)
  if (refused !== undefined) return Effect.succeed(refused)
  if (request.headers["origin"] !== allowedOrigin) {
    return Effect.succeed(errorResponse(403, "ORIGIN_REFUSED", "This console can only be opened from the panel."))
  }
  return handler(request)
}

// --- input rate ------------------------------------------------------------------------------------------------

/**
 * A token bucket for one socket's frames: `capacity` at once, refilled at `perSecond`. Hand-written rather than the
 * keyed RateLimiter: it lives and dies with its socket (a keyed store would keep one entry per socket ever opened) and
 * is asked synchronously for every frame.
 */
export class FrameBucket {
  private tokens: number
  private last: number
  readonly capacity: number
  readonly perSecond: number

  constructor(capacity: number, perSecond: number, now: number) {
    this.capacity = capacity
    this.perSecond = perSecond
    this.tokens = capacity
    this.last = now
  }

  /** Takes one token at `now` (ms); false when none is left. */
  take(now: number): boolean {
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.perSecond)
    this.last = now
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }
}

/**
 * The VPS console: a burst of 100 frames, 50 a second sustained (Wings' global inbound rate); beyond, 4429. Every
 * console limit is multiplied by CONSOLE_INPUT_RATE_SCALE (1 in production; load tests raise it).
 */
export const VPS_INPUT_RATE = { capacity: 100, perSecond: 50 } as const

export const vpsInputBucket = (scale: number, now: number) =>
  new FrameBucket(VPS_INPUT_RATE.capacity * scale, VPS_INPUT_RATE.perSecond * scale, now)

/**
 * The game console, as newer Wings limit theirs (reference/pterodactyl.md §3.2): 10 frames per 200 ms in all, and per
 * event `auth` and `send logs` 2 per 5 s, `send command` 10 a second, anything else 4 a second. Excess frames are
 * dropped and the browser told with a `throttled` event, as Wings does.
 */
export const GAME_INPUT_RATES = {
  global: { capacity: 10, perSecond: 50 },
  auth: { capacity: 2, perSecond: 0.4 },
  "send logs": { capacity: 2, perSecond: 0.4 },
  "send command": { capacity: 10, perSecond: 10 },
  other: { capacity: 4, perSecond: 4 }
} as const

/** One game console's buckets, scaled by `scale`: the global one and one per event name, made when first used. */
export const gameInputLimits = (scale: number, now: number) => {
  const global = new FrameBucket(GAME_INPUT_RATES.global.capacity * scale, GAME_INPUT_RATES.global.perSecond * scale, now)
  const perEvent = new Map<string, FrameBucket>()
  // Every other event shares one bucket: a client cannot mint buckets by inventing names.
  const bucketOf = (event: string) => (event === "auth" || event === "send logs" || event === "send command" ? event : "other")
  return {
    bucketOf,
    global: (at: number) => global.take(at),
    event: (event: string, at: number) => {
      const key = bucketOf(event)
      let bucket = perEvent.get(key)
      if (bucket === undefined) {
        const rate = GAME_INPUT_RATES[key]
        bucket = new FrameBucket(rate.capacity * scale, rate.perSecond * scale, at)
        perEvent.set(key, bucket)
      }
      return bucket.take(at)
    }
  }
}
