// The VM's serial console: `termproxy` with a ticket session, then at once the `vncwebsocket` on the same host with the
// same ticket, the auth line, and termproxy's framing for input, resize and keep-alive (reference/proxmox.md §4).
import { Duration, Effect, Schedule, type Scope, Stream } from "effect"
import { Socket } from "effect/socket"
import { WebSocket } from "ws"
import { ConsoleClosed, type SerialConsole } from "../../ports/Virtualization.ts"
import { apiPrefix, toWire } from "./encoding.ts"
import type { CallFailed } from "./failures.ts"
import type { ProxmoxSession, TicketCredentials } from "./ProxmoxSession.ts"
import { requests, type VmAddress } from "./requests.ts"
import { dataAs, TermProxy } from "./responses.ts"

export interface ConsoleOptions {
  /** The official client sends `2` every 30 s so proxies keep an idle console open (§4.4). */
  readonly keepAliveInterval: Duration.Input
  /** Opening the WebSocket and receiving `OK`; termproxy itself gives up after 10 s (§4.2). */
  readonly openTimeout: Duration.Input
}

const encoder = new TextEncoder()

const toBytes = (frame: Uint8Array | string): Uint8Array => (typeof frame === "string" ? encoder.encode(frame) : frame)

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(a.byteLength + b.byteLength)
  out.set(a, 0)
  out.set(b, a.byteLength)
  return out
}

/** `0:<byte length>:<data>`: termproxy forwards exactly that many bytes to the pty (§4.4). */
export const inputFrame = (data: Uint8Array): Uint8Array<ArrayBuffer> =>
  concat(encoder.encode(`0:${data.byteLength}:`), data)

/** `1:<cols>:<rows>:`, columns first, trailing colon included (§4.4). */
export const resizeFrame = (columns: number, rows: number) => `1:${columns}:${rows}:`

export const keepAliveFrame = "2"

const closed = (reason: string) => new ConsoleClosed({ reason })

/** `https://pve:8006` → `wss://pve:8006`. */
const webSocketOrigin = (origin: string) => origin.replace(/^http/i, "ws")

/** Reads until termproxy's `OK` (which may come split or followed by output); returns what came after it (§4.4). */
const awaitOk = (pull: Effect.Effect<ReadonlyArray<Uint8Array>, ConsoleClosed>) =>
  Effect.gen(function*() {
    let received: Uint8Array = new Uint8Array(0)
    while (received.byteLength < 2) {
      for (const frame of yield* pull) received = concat(received, frame)
    }
    if (received[0] !== 0x4f || received[1] !== 0x4b) {
      return yield* closed("the console refused the session (no OK after the ticket)")
    }
    return received.subarray(2)
  })

/** Opens the console of `vm` through `session`, which must be a ticket session; closed with the scope. */
export const openSerialConsole = (
  session: ProxmoxSession,
  ticket: TicketCredentials,
  vm: VmAddress,
  options: ConsoleOptions
): Effect.Effect<SerialConsole, CallFailed | ConsoleClosed, Scope.Scope> =>
  Effect.gen(function*() {
    const operation = "openConsole"
    const proxy = yield* Effect.flatMap(session.send(operation, requests.termproxy(vm)), dataAs(TermProxy, operation))
    // The VNC ticket lives about 40 s and termproxy waits 10 s for us: no delay between the two steps (§4.2).
    const url = `${webSocketOrigin(session.origin)}${apiPrefix}${
      toWire(requests.vncWebSocket(vm, proxy.port, proxy.ticket)).target
    }`
    const secure = url.startsWith("wss:")
    let upstreamClosed = false
    const acquire = Effect.acquireRelease(
      Effect.sync(() => {
        const ws = new WebSocket(url, "binary", {
          headers: { cookie: `PVEAuthCookie=${encodeURIComponent(ticket.ticket)}` },
          // The cluster's own agent: the WebSocket trusts its certificate exactly as the API calls do.
          agent: secure ? session.agents.https : session.agents.http
        })
        ws.addEventListener("close", () => {
          upstreamClosed = true
        })
        return ws
      }),
      (ws) => Effect.sync(() => ws.close())
    )
    const socket = yield* Socket.fromWebSocket(acquire, { openTimeout: options.openTimeout })
    const reader = yield* socket.reader.pipe(
      Effect.mapError(() => closed("the console WebSocket could not be opened"))
    )
    const writer = yield* socket.writer
    const pull = reader.pull.pipe(
      Effect.map((frames) => frames.map(toBytes)),
      Effect.mapError(() => closed("the console connection was closed"))
    )

    yield* writer.write(`${proxy.user}:${proxy.ticket}\n`).pipe(
      Effect.mapError(() => closed("the console connection was closed"))
    )
    const afterOk = yield* awaitOk(pull).pipe(
      Effect.timeoutOrElse({
        duration: options.openTimeout,
        orElse: () => Effect.fail(closed("the console did not answer the ticket in time"))
      })
    )

    // Writes after the upstream went away would otherwise wait for a socket that never reopens.
    const send = (frame: string | Uint8Array<ArrayBuffer>) =>
      upstreamClosed
        ? Effect.fail(closed("the console connection was closed"))
        : writer.write(frame).pipe(Effect.mapError(() => closed("the console connection was closed")))

    yield* send(keepAliveFrame).pipe(
      Effect.delay(Duration.fromInputUnsafe(options.keepAliveInterval)),
      Effect.repeat(Schedule.forever),
      Effect.ignore,
      Effect.forkScoped
    )

    const output: Stream.Stream<Uint8Array, ConsoleClosed> = Stream.concat(
      afterOk.byteLength > 0 ? Stream.succeed(afterOk) : Stream.empty,
      Stream.fromEffectRepeat(pull).pipe(Stream.flattenIterable)
    )
    return {
      output,
      write: (data) => send(inputFrame(data)),
      resize: (columns, rows) => send(resizeFrame(columns, rows))
    } satisfies SerialConsole
  })
