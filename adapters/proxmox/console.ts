// The VM's serial console: `termproxy` with a ticket session, then at once the `vncwebsocket` on the same host with the
// same ticket, the auth line, and termproxy's framing for input, resize and keep-alive (reference/proxmox.md §4).
// Frames are handled in the socket's own callbacks: output is buffered there and taken as one chunk per read (a burst
// of short lines costs one fiber wake-up, not one per frame), and input is sent at once, frames written in the same
// tick leaving in one TCP write.
import { Buffer } from "node:buffer"
import type { Socket as TcpSocket } from "node:net"
import { Deferred, Duration, Effect, Schedule, type Scope, Stream } from "effect"
import { type RawData, WebSocket } from "ws"
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

/**
 * Output not yet read beyond which the socket stops reading: a slow reader slows the guest, not our memory. Above the
 * size of a burst's frames (large output comes in frames of tens of KiB), so a fast reader never pauses the socket.
 */
const HIGH_WATER_MARK = 256 * 1024

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

const bytesOf = (data: RawData): Uint8Array =>
  Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data

/** `0:<byte length>:<data>`: termproxy forwards exactly that many bytes to the pty (§4.4). */
export const inputFrame = (data: Uint8Array): Uint8Array<ArrayBuffer> => {
  const header = encoder.encode(`0:${data.byteLength}:`)
  const out = new Uint8Array(header.byteLength + data.byteLength)
  out.set(header, 0)
  out.set(data, header.byteLength)
  return out
}

/** `1:<cols>:<rows>:`, columns first, trailing colon included (§4.4). */
export const resizeFrame = (columns: number, rows: number) => `1:${columns}:${rows}:`

export const keepAliveFrame = "2"

const closed = (reason: string) => new ConsoleClosed({ reason })

/** `https://pve:8006` → `wss://pve:8006`. */
const webSocketOrigin = (origin: string) => origin.replace(/^http/i, "ws")

/**
 * The socket's side of a console: termproxy's `OK` (which may come split or followed by output, §4.4) settles
 * `greeted`; later bytes are buffered until read, the socket paused while too many wait.
 */
const makeTerminal = (greeted: Deferred.Deferred<void, ConsoleClosed>) => {
  let greeting: Uint8Array | undefined = new Uint8Array(0)
  let buffered: Array<Uint8Array> = []
  let bufferedBytes = 0
  let ended: ConsoleClosed | undefined
  let reader: ((effect: Effect.Effect<Uint8Array, ConsoleClosed>) => void) | undefined
  let ws: WebSocket | undefined
  let paused = false

  const take = (): Uint8Array => {
    const chunk = concat(buffered)
    buffered = []
    bufferedBytes = 0
    if (paused && ended === undefined) {
      paused = false
      ws?.resume()
    }
    return chunk
  }
  const push = (bytes: Uint8Array) => {
    if (bytes.byteLength === 0) return
    buffered.push(bytes)
    bufferedBytes += bytes.byteLength
    if (reader !== undefined) {
      const resume = reader
      reader = undefined
      // Taken when the reader runs: whatever arrives meanwhile joins the same chunk.
      resume(Effect.sync(take))
    }
    if (!paused && bufferedBytes >= HIGH_WATER_MARK) {
      paused = true
      ws?.pause()
    }
  }
  return {
    attach: (socket: WebSocket) => {
      ws = socket
    },
    received: (data: RawData) => {
      if (greeting === undefined) return push(bytesOf(data))
      greeting = concat([greeting, bytesOf(data)])
      if (greeting.byteLength < 2) return
      const ok = greeting[0] === 0x4f && greeting[1] === 0x4b
      const rest = greeting.subarray(2)
      greeting = undefined
      if (!ok) return void Deferred.doneUnsafe(greeted, Effect.fail(closed("the console refused the session (no OK after the ticket)")))
      push(rest)
      Deferred.doneUnsafe(greeted, Effect.void)
    },
    ended: () => {
      ended ??= closed("the console connection was closed")
      Deferred.doneUnsafe(greeted, Effect.fail(ended))
      if (reader !== undefined) {
        const resume = reader
        reader = undefined
        resume(Effect.fail(ended))
      }
    },
    isEnded: () => ended !== undefined,
    /** The output received since the last read, waiting for some if there is none; after the close, ConsoleClosed. */
    read: Effect.callback<Uint8Array, ConsoleClosed>((resume) => {
      if (buffered.length > 0) return resume(Effect.succeed(take()))
      if (ended !== undefined) return resume(Effect.fail(ended))
      reader = resume
      return Effect.sync(() => {
        if (reader === resume) reader = undefined
      })
    })
  }
}

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
    const greeted = Deferred.makeUnsafe<void, ConsoleClosed>()
    const terminal = makeTerminal(greeted)
    let tcp: TcpSocket | undefined

    const ws = yield* Effect.acquireRelease(
      Effect.callback<WebSocket, ConsoleClosed>((resume) => {
        const ws = new WebSocket(url, "binary", {
          headers: { cookie: `PVEAuthCookie=${encodeURIComponent(ticket.ticket)}` },
          // The cluster's own agent: the WebSocket trusts its certificate exactly as the API calls do.
          agent: secure ? session.agents.https : session.agents.http
        })
        terminal.attach(ws)
        let opened = false
        const refuse = () => {
          if (opened) return
          opened = true
          resume(Effect.fail(closed("the console WebSocket could not be opened")))
        }
        ws.on("upgrade", (response) => {
          tcp = response.socket
        })
        ws.on("message", terminal.received)
        ws.on("close", () => {
          terminal.ended()
          refuse()
        })
        ws.on("error", refuse)
        ws.on("open", () => {
          if (opened) return
          opened = true
          resume(Effect.succeed(ws))
        })
        return Effect.sync(() => ws.terminate())
      }).pipe(
        Effect.timeoutOrElse({
          duration: options.openTimeout,
          orElse: () => Effect.fail(closed("the console WebSocket could not be opened"))
        })
      ),
      (ws) => Effect.sync(() => ws.close())
    )

    let corked = false
    const uncork = () => {
      corked = false
      tcp?.uncork()
    }
    // Writes after the upstream went away would otherwise wait for a socket that never reopens. Not waiting for the
    // write's callback: a failed socket closes, and the close ends the console.
    const send = (frame: string | Uint8Array) =>
      Effect.suspend(() => {
        if (terminal.isEnded() || ws.readyState !== WebSocket.OPEN) return Effect.fail(closed("the console connection was closed"))
        if (!corked && tcp !== undefined) {
          corked = true
          tcp.cork()
          process.nextTick(uncork)
        }
        ws.send(frame)
        return Effect.void
      })

    yield* send(`${proxy.user}:${proxy.ticket}\n`)
    yield* Deferred.await(greeted).pipe(
      Effect.timeoutOrElse({
        duration: options.openTimeout,
        orElse: () => Effect.fail(closed("the console did not answer the ticket in time"))
      })
    )

    yield* send(keepAliveFrame).pipe(
      Effect.delay(Duration.fromInputUnsafe(options.keepAliveInterval)),
      Effect.repeat(Schedule.forever),
      Effect.ignore,
      Effect.forkScoped
    )

    return {
      output: Stream.fromEffectRepeat(terminal.read),
      write: (data) => send(inputFrame(data)),
      resize: (columns, rows) => send(resizeFrame(columns, rows))
    } satisfies SerialConsole
  })
