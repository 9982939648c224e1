// The VPS serial console relay: `GET /api/vps/:id/console` upgrades to a WebSocket after checking the handshake,
// Origin, session, ownership, state and the user's open consoles; the backend opens the upstream console itself and
// relays bytes both ways, closing with 1009 on an oversized frame, 4429 on input too fast and 1001 when the server
// stops. The browser never sees a hypervisor address, ticket or port.
import { Clock, Effect, Option, Schema, Stream } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Socket } from "effect/socket"
import type { Session } from "../../domain/account/Sessions.ts"
import { admitConsole, type ConsoleSlots } from "../../domain/consoles/ConsoleAdmission.ts"
import { watchConsole } from "../../domain/consoles/watchConsole.ts"
import { vmRefOf } from "../../domain/vps/Lifecycle.ts"
import { vpsConsoleUsable, vpsForConsole } from "../../domain/vps/VpsConsole.ts"
import { type ConsoleClosed, Virtualization } from "../../ports/Virtualization.ts"
import type { AuditLog } from "../../ports/AuditLog.ts"
import type { SessionRecords } from "../../ports/SessionRecords.ts"
import type { VpsRecords } from "../../ports/VpsRecords.ts"
import { requireSession, type SessionGuard } from "./Authentication.ts"
import {
  closeWithGoingAwayOnInterrupt,
  frameBytes,
  frameTooLarge,
  consoleHandshake,
  InputRefused,
  inputTooFast,
  vpsInputBucket
} from "./consoleLimits.ts"
import { makeOwnAction } from "./audited.ts"
import { CustomerBudgets } from "./customerBudget.ts"
import type { HttpSettings } from "./HttpSettings.ts"
import { refusal } from "./errorMapping.ts"
import { countConsoleBytes, countOpenConsole } from "../../domain/ops/metrics.ts"

/** A text frame the browser sends to resize the terminal; any other text frame is typed input. */
const Resize = Schema.Struct({
  type: Schema.Literal("resize"),
  cols: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })),
  rows: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))
})
const decodeResize = Schema.decodeUnknownOption(Resize)
const isResizeMessage = Schema.is(Schema.Struct({ type: Schema.Literal("resize") }))

/** A resize message, a malformed one (dropped: it must never reach the terminal as typing), or plain input. */
const classify = (frame: string): { readonly _tag: "Resize"; readonly cols: number; readonly rows: number } | { readonly _tag: "Drop" } | { readonly _tag: "Input" } => {
  if (!frame.startsWith("{")) return { _tag: "Input" }
  let parsed: unknown
  try {
    parsed = JSON.parse(frame)
  } catch {
    return { _tag: "Input" }
  }
  if (!isResizeMessage(parsed)) return { _tag: "Input" }
  const resize = decodeResize(parsed)
  return Option.isSome(resize) ? { _tag: "Resize", cols: resize.value.cols, rows: resize.value.rows } : { _tag: "Drop" }
}

const encoder = new TextEncoder()

const concat = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0))
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

/** What a batch of browser frames asks of the terminal, in order. */
export type ConsoleInput =
  | { readonly _tag: "Type"; readonly data: Uint8Array }
  | { readonly _tag: "Resize"; readonly cols: number; readonly rows: number }

/**
 * Typed input is joined up to this size: enough for hundreds of keys or short lines in one upstream frame; a large
 * paste keeps its own frames, which the terminal echoes while the next ones arrive instead of all at once.
 */
const JOIN_LIMIT = 16 * 1024

/**
 * The browser's frames, read together, as terminal steps: consecutive typed input joined into writes of up to
 * JOIN_LIMIT bytes (a burst of keys or lines costs one upstream frame, not one each), a resize kept in its place;
 * oversized frames and malformed resize messages dropped.
 */
export const consoleInput = (frames: ReadonlyArray<string | Uint8Array>, maxFrameBytes: number): Array<ConsoleInput> => {
  const steps: Array<ConsoleInput> = []
  let typed: Array<Uint8Array> = []
  let typedBytes = 0
  const flush = () => {
    if (typed.length === 0) return
    steps.push({ _tag: "Type", data: concat(typed) })
    typed = []
    typedBytes = 0
  }
  const type = (data: Uint8Array) => {
    if (typedBytes + data.byteLength > JOIN_LIMIT) flush()
    typed.push(data)
    typedBytes += data.byteLength
  }
  for (const frame of frames) {
    if (typeof frame === "string") {
      const kind = classify(frame)
      if (kind._tag === "Resize") {
        flush()
        steps.push(kind)
      } else if (kind._tag === "Input" && frame.length <= maxFrameBytes) type(encoder.encode(frame))
    } else if (frame.byteLength <= maxFrameBytes) type(frame)
  }
  flush()
  return steps
}

/** The close code of a console whose session ended (4000–4999 are the application's, RFC 6455 §7.4.2). */
export const SESSION_ENDED = 4401

export interface ConsoleRouteOptions {
  /** The only Origin a browser may open the console from (the panel's public origin). */
  readonly allowedOrigin: string
  /** Largest frame the browser may send (typed input is small; a paste is bounded). */
  readonly maxInputFrameBytes: number
  /** Multiplies the input rate limits (consoleLimits.ts): 1 in production. */
  readonly inputRateScale: number
}

export const consoleRoute = (options: ConsoleRouteOptions) =>
  HttpRouter.add("GET", "/api/vps/:id/console", (request) =>
    consoleHandshake(options.allowedOrigin, requireSession((request, session) =>
      Effect.gen(function*() {
        const vpsId = (yield* HttpRouter.RouteContext).params["id"] ?? ""
        // Opening it reaches Proxmox (termproxy): the customer's share of the cluster's API is spent first.
        yield* (yield* CustomerBudgets).spend(session.user.id, "proxmox")
        const vps = yield* vpsForConsole(session.user.id, vpsId)
        // Held for the console's life (this handler's scope), VPS and game consoles together.
        yield* admitConsole(session.user.id)
        return { vpsId, vm: vmRefOf(vps) }
      }).pipe(Effect.matchEffect({
        // Refused before the upgrade: the browser gets the error table's answer.
        onFailure: (e) => Effect.succeed(refusal(e)),
        onSuccess: ({ vm, vpsId }) => Effect.as(relay(session, vpsId, vm, request, options), HttpServerResponse.empty())
      }))))(request).pipe(
        Effect.scoped,
        Effect.catchCause((cause) =>
          Effect.as(Effect.logWarning("console relay ended with an error", cause), HttpServerResponse.empty())
        )
      ))

const relay = (
  session: Session,
  vpsId: string,
  vm: Parameters<Virtualization["Service"]["openConsole"]>[0],
  request: HttpServerRequest.HttpServerRequest,
  options: ConsoleRouteOptions
) =>
  Effect.gen(function*() {
    // Open upstream first: if the hypervisor refuses, the browser gets an HTTP error, not a dead socket.
    const upstream = yield* (yield* Virtualization).openConsole(vm)
    const downstream = yield* request.upgrade
    yield* (yield* makeOwnAction).own(session, request, "vps.console_opened", { type: "vps", id: vpsId })
    yield* countOpenConsole("vps")
    const reader = yield* downstream.reader
    const writer = yield* downstream.writer
    yield* closeWithGoingAwayOnInterrupt(writer.write)
    const clock = yield* Clock.Clock
    const rate = vpsInputBucket(options.inputRateScale, clock.currentTimeMillisUnsafe())
    /**
     * Every frame is counted; one over the size limit or past the rate ends the console: a terminal cannot be told to
     * slow down, and dropping keys would type something else.
     */
    const refusal = (frames: ReadonlyArray<string | Uint8Array>): InputRefused | undefined => {
      const now = clock.currentTimeMillisUnsafe()
      for (const frame of frames) {
        if (frameBytes(frame) > options.maxInputFrameBytes) return frameTooLarge
        if (!rate.take(now)) return inputTooFast
      }
      return undefined
    }

    // Whatever output arrived together leaves as one frame, and typed input read together goes upstream as one: a
    // burst of short lines costs one write each way, not hundreds.
    const toBrowser = upstream.output.pipe(Stream.runForEachArray((chunks) => {
      const bytes = concat(chunks)
      return Effect.andThen(countConsoleBytes("vps", "to_browser", bytes.byteLength), writer.write(bytes))
    }))
    type Input = Effect.Effect<void, ConsoleClosed | InputRefused>
    const fromBrowser = Effect.forever(Effect.flatMap(reader.pull, (frames): Input => {
      const refused = refusal(frames)
      if (refused !== undefined) return Effect.fail(refused)
      return Effect.forEach(consoleInput(frames, options.maxInputFrameBytes), (step) =>
        step._tag === "Type"
          ? Effect.andThen(countConsoleBytes("vps", "to_upstream", step.data.byteLength), upstream.write(step.data))
          : upstream.resize(step.cols, step.rows), { discard: true })
    }))
    const watchState = watchConsole(session.id, vpsConsoleUsable(vpsId, session.user.id))
    // Whichever ends first (browser, hypervisor, suspension, end of session, refused input) ends the others; the scope
    // closes both sockets.
    const ended = yield* Effect.raceFirst(Effect.as(Effect.raceFirst(toBrowser, fromBrowser), undefined), watchState).pipe(
      Effect.catch((e) => Effect.succeed(e instanceof InputRefused ? e : undefined))
    )
    yield* writer.write(
      ended instanceof InputRefused
        ? new Socket.CloseEvent(ended.code, ended.reason)
        : ended === "session ended"
        ? new Socket.CloseEvent(SESSION_ENDED, "session ended")
        : new Socket.CloseEvent(1000, "console closed")
    ).pipe(Effect.ignore)
  }).pipe(Effect.scoped)

export type ConsoleRouteServices =
  | SessionGuard
  | SessionRecords
  | Virtualization
  | VpsRecords
  | ConsoleSlots
  | CustomerBudgets
  | AuditLog
  | HttpSettings
