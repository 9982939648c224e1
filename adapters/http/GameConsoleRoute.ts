// The game console relay: `GET /api/client/servers/:id/ws` upgrades to a WebSocket speaking the Wings event
// protocol (`{event, args}` text frames). The browser authenticates with OUR token (`auth`), re-authenticates on
// our `token expiring`, and may only send `send command`, `set state`, `send logs` and `send stats`. The backend
// holds the Wings connection and token (whose claims name the panel and the node) and relays events both ways.
// Events go to the browser a batch at a time (whatever the upstream queued since the last write), each one as the
// text Wings sent when it is forwarded unchanged. Input is rate-limited as newer Wings do (excess frames dropped with
// a `throttled` event); an oversized frame closes with 1009, a server stopping with 1001.
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Array as Arr, Clock, Deferred, Effect, Option, Schema, Stream } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Socket } from "effect/socket"
import type { Session } from "../../domain/account/Sessions.ts"
import { admitConsole, type ConsoleSlots } from "../../domain/consoles/ConsoleAdmission.ts"
import { watchConsole } from "../../domain/consoles/watchConsole.ts"
import { checkConsoleToken } from "../../domain/game/GameActions.ts"
import { allowedConsoleRequest, gameConsoleUsable, gameServerForConsole } from "../../domain/game/GameConsole.ts"
import type { GameServer } from "../../domain/game/GameServer.ts"
import { ConsoleTokens } from "../../ports/ConsoleTokens.ts"
import { type ConsoleEvent, type ConsoleRequest, type GameConsole, GamePanel, type PowerSignal } from "../../ports/GamePanel.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import type { AuditLog } from "../../ports/AuditLog.ts"
import type { SessionRecords } from "../../ports/SessionRecords.ts"
import { requireSession, type SessionGuard } from "./Authentication.ts"
import {
  closeWithGoingAwayOnInterrupt,
  consoleHandshake,
  frameBytes,
  frameTooLarge,
  gameInputLimits,
  InputRefused
} from "./consoleLimits.ts"
import { makeOwnAction } from "./audited.ts"
import { CustomerBudgets } from "./customerBudget.ts"
import type { HttpSettings } from "./HttpSettings.ts"
import { SESSION_ENDED } from "./ConsoleRoute.ts"
import { refusal } from "./errorMapping.ts"
import { countConsoleBytes, countOpenConsole } from "../../domain/ops/metrics.ts"

export interface GameConsoleOptions {
  readonly allowedOrigin: string
  readonly maxInputFrameBytes: number
  /** Multiplies the Wings-like input rate limits (consoleLimits.ts): 1 in production. */
  readonly inputRateScale: number
}

export type GameConsoleServices =
  | SessionGuard
  | SessionRecords
  | GamePanel
  | GameServerRecords
  | ConsoleTokens
  | ConsoleSlots
  | CustomerBudgets
  | AuditLog
  | HttpSettings

const Frame = Schema.Struct({ event: Schema.String, args: Schema.optionalKey(Schema.Array(Schema.String)) })
const decodeFrame = Schema.decodeUnknownOption(Schema.fromJsonString(Frame))

const encode = (event: ConsoleEvent) =>
  JSON.stringify(event.args.length === 0 ? { event: event.event } : { event: event.event, args: event.args })

const NOT_AUTHENTICATED: ConsoleEvent = { event: "jwt error", args: ["jwt: no valid token: authenticate first"] }
const DAEMON_ERROR = encode({ event: "daemon error", args: ["The server reported an error."] })

/**
 * The frame the customer sees for an event from Wings: none for the admin-only streams (install and transfer
 * output); a generic line for daemon errors, whose admin-token text can name the node; any other as Wings sent it.
 */
export const outbound = (event: ConsoleEvent): string | undefined => {
  if (event.event === "install output" || event.event === "transfer logs" || event.event === "transfer status") return undefined
  if (event.event === "daemon error") return DAEMON_ERROR
  return event.raw ?? encode(event)
}

const POWER_SIGNALS: ReadonlyArray<PowerSignal> = ["start", "stop", "restart", "kill"]
const isPowerSignal = (text: string): text is PowerSignal => (POWER_SIGNALS as ReadonlyArray<string>).includes(text)

/**
 * What a customer's frame asks of the console, in the panel's own console protocol (which ours keeps): a command,
 * a power state, logs or stats; none for anything else (`auth` is ours to answer).
 */
export const inbound = (frame: { readonly event: string; readonly args: ReadonlyArray<string> }): ConsoleRequest | undefined => {
  const [only] = frame.args
  switch (frame.event) {
    case "send command":
      return frame.args.length === 1 && only !== undefined ? { _tag: "Command", line: only } : undefined
    case "set state":
      return frame.args.length === 1 && only !== undefined && isPowerSignal(only) ? { _tag: "Power", signal: only } : undefined
    case "send logs":
      return { _tag: "SendLogs" }
    case "send stats":
      return { _tag: "SendStats" }
    default:
      return undefined
  }
}

/** Like Wings: `token expiring` when a minute or less is left. */
const EXPIRING_MS = 60_000

export const gameConsoleRoute = (options: GameConsoleOptions) =>
  HttpRouter.add("GET", "/api/client/servers/:id/ws", (request) =>
    consoleHandshake(options.allowedOrigin, requireSession((request, session) =>
      Effect.gen(function*() {
        const identifier = (yield* HttpRouter.RouteContext).params["id"] ?? ""
        // The console's first `auth` opens it on the panel: the customer's share of its budget is spent first.
        yield* (yield* CustomerBudgets).spend(session.user.id, "game-panel")
        const server = yield* gameServerForConsole(session.user.id, identifier)
        // Held for the console's life (this handler's scope), VPS and game consoles together.
        yield* admitConsole(session.user.id)
        return server
      }).pipe(Effect.matchEffect({
        // Refused before the upgrade: the browser gets the error table's answer.
        onFailure: (e) => Effect.succeed(refusal(e)),
        onSuccess: (server) => Effect.as(relay(session, server, request, options), HttpServerResponse.empty())
      }))))(request).pipe(
        Effect.scoped,
        Effect.catchCause((cause) => Effect.as(Effect.logWarning("game console relay ended with an error", cause), HttpServerResponse.empty()))
      ))

const relay = (session: Session, server: GameServer, request: HttpServerRequest.HttpServerRequest, options: GameConsoleOptions) =>
  Effect.gen(function*() {
    const userId = session.user.id
    const downstream = yield* request.upgrade
    yield* (yield* makeOwnAction).own(session, request, "game.console_opened", { type: "game_server", id: server.id })
    yield* countOpenConsole("game")
    const reader = yield* downstream.reader
    const writer = yield* downstream.writer
    yield* closeWithGoingAwayOnInterrupt(writer.write)
    const send = (event: ConsoleEvent) => writer.write(encode(event))
    // The upgraded TCP socket, corked while a batch is written: one write for the batch, not one per frame.
    const tcp = NodeHttpServerRequest.toIncomingMessage(request)?.socket
    const sendAll = (frames: Arr.NonEmptyReadonlyArray<string>) =>
      tcp === undefined
        ? writer.writeAll(frames)
        : Effect.suspend(() => {
          tcp.cork()
          return writer.writeAll(frames).pipe(Effect.ensuring(Effect.sync(() => tcp.uncork())))
        })
    const panel = yield* GamePanel
    const clock = yield* Clock.Clock
    /** When our token runs out (0 before the first `auth`), and whether `token expiring` was said for it. */
    let expiry = { at: 0, warned: false }
    let upstream: GameConsole | undefined
    const upstreamEnded = yield* Deferred.make<void>()
    // Read synchronously: it is asked once per batch of events and once per frame from the browser.
    const authenticated = () => expiry.at > clock.currentTimeMillisUnsafe()

    const onAuth = (token: string) =>
      Effect.gen(function*() {
        const grant = yield* Effect.result(checkConsoleToken({ userId, sessionId: session.id }, server.identifier, token))
        if (grant._tag === "Failure") return yield* send({ event: "jwt error", args: ["jwt: token is not valid for this server"] })
        expiry = { at: grant.success.expiresAt.getTime(), warned: false }
        if (upstream === undefined) {
          // Opened on the first good `auth`; it lives as long as this socket (the scope of the upgrade).
          const opened = yield* Effect.result(panel.openConsole(server.panel, server.uuid))
          if (opened._tag === "Failure") {
            yield* Effect.logWarning("game console: upstream refused", opened.failure.message)
            yield* send({ event: "daemon error", args: ["The console of this server cannot be reached right now."] })
            return yield* Effect.fail("upstream")
          }
          upstream = opened.success
          yield* send({ event: "auth success", args: [] })
          yield* Effect.forkScoped(toBrowser(opened.success))
          return
        }
        yield* send({ event: "auth success", args: [] })
      })

    const toBrowser = (console: GameConsole) =>
      console.events.pipe(
        Stream.runForEachArray((events) => {
          // Without a live token of ours the customer gets nothing (as Wings drops events for an expired token).
          if (!authenticated()) return Effect.void
          const frames: Array<string> = []
          for (const event of events) {
            const out = outbound(event)
            if (out !== undefined) frames.push(out)
          }
          return Arr.isReadonlyArrayNonEmpty(frames)
            ? Effect.andThen(countConsoleBytes("game", "to_browser", frames.reduce((n, f) => n + frameBytes(f), 0)), sendAll(frames))
            : Effect.void
        }),
        Effect.ignore,
        Effect.ensuring(Deferred.succeed(upstreamEnded, undefined))
      )

    const limits = gameInputLimits(options.inputRateScale, clock.currentTimeMillisUnsafe())
    /** When `throttled` was last said for a bucket: once a second at most, so a flood gets no flood back. */
    const toldThrottled = new Map<string, number>()
    const throttled = (bucket: string, event: string, now: number) => {
      if (now - (toldThrottled.get(bucket) ?? -Infinity) < 1000) return Effect.void
      toldThrottled.set(bucket, now)
      return send({ event: "throttled", args: [event] })
    }

    const fromBrowser = Effect.forever(Effect.flatMap(reader.pull, (frames) =>
      Effect.gen(function*() {
        yield* countConsoleBytes("game", "to_upstream", frames.reduce((n, f) => n + frameBytes(f), 0))
        for (const raw of frames) {
          // Like Wings: only text frames are read.
          if (typeof raw !== "string") continue
          if (frameBytes(raw) > options.maxInputFrameBytes) return yield* frameTooLarge
          const now = clock.currentTimeMillisUnsafe()
          if (!limits.global(now)) {
            yield* throttled("global", "global", now)
            continue
          }
          const decoded = decodeFrame(raw)
          if (Option.isNone(decoded)) continue
          if (!limits.event(decoded.value.event, now)) {
            yield* throttled(limits.bucketOf(decoded.value.event), decoded.value.event, now)
            continue
          }
          const frame: ConsoleEvent = { event: decoded.value.event, args: decoded.value.args ?? [] }
          if (frame.event === "auth") yield* onAuth(frame.args[0] ?? "")
          else if (!authenticated() || upstream === undefined) yield* send(NOT_AUTHENTICATED)
          else {
            const request = inbound(frame)
            if (request !== undefined && allowedConsoleRequest(request)) yield* upstream.send(request)
          }
        }
      })))

    const tokenClock = Effect.forever(Effect.gen(function*() {
      yield* Effect.sleep("1 second")
      const state = expiry
      if (state.at === 0) return
      const now = clock.currentTimeMillisUnsafe()
      if (now >= state.at) {
        expiry = { at: 0, warned: false }
        yield* send({ event: "token expired", args: [] })
      } else if (!state.warned && state.at - now <= EXPIRING_MS) {
        expiry = { ...state, warned: true }
        yield* send({ event: "token expiring", args: [] })
      }
    }))

    const watchState = watchConsole(session.id, gameConsoleUsable(server.id, userId))

    const ended = yield* Effect.raceAll([
      fromBrowser.pipe(
        Effect.as("browser" as const),
        Effect.catch((e) => Effect.succeed(e instanceof InputRefused ? e : "browser" as const))
      ),
      Effect.as(tokenClock, "browser" as const),
      watchState,
      Effect.as(Deferred.await(upstreamEnded), "upstream" as const)
    ]).pipe(Effect.catch(() => Effect.succeed("browser" as const)))
    // The upstream may close first when the server is suspended (Wings closes its sockets): say why, as newer
    // Wings do with 4409, which the panel's console understands.
    const current = yield* (yield* GameServerRecords).get(server.id)
    const suspended = ended !== "browser" && (Option.isNone(current) || current.value.status !== "active")
    yield* writer.write(
      ended instanceof InputRefused
        ? new Socket.CloseEvent(ended.code, ended.reason)
        : ended === "session ended"
        ? new Socket.CloseEvent(SESSION_ENDED, "session ended")
        : suspended
        ? new Socket.CloseEvent(4409, "server is suspended")
        : ended === "upstream"
        ? new Socket.CloseEvent(1011, "console upstream closed")
        : new Socket.CloseEvent(1000, "console closed")
    ).pipe(Effect.ignore)
  }).pipe(Effect.scoped)
