// The listening socket's life around the application. Whenever the routes are not attached (bound but not yet
// serving, or after a stop outlived its bound) it answers 503 STARTING / STOPPING itself (JSON, Retry-After), so no
// request waits unanswered. At a stop: no new connection, the requests under way finish within a bound, open
// consoles are interrupted at once (a WebSocket never ends by itself).
import { NodeHttpServer } from "@effect/platform-node"
import { Deferred, Duration, Effect, Layer } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { ServerOptions as WebSocketServerOptions } from "ws"

export interface ListenerOptions {
  readonly host: string
  readonly port: number
  /** How long the requests under way may take to finish once a stop begins. */
  readonly shutdownTimeout: Duration.Duration
  /** The Node server to listen with (ours answers unparsable requests in the JSON envelope). */
  readonly createServer: () => Server
  /** The WebSocket server's options (the consoles' frame limit). */
  readonly websocket: WebSocketServerOptions
}

/** Wraps the whole handling of each request (HttpRouter.serve's `middleware`). */
export type ServeMiddleware = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>

/** Our own answer while the application's handler is not attached: the same `{ code, message }` envelope. */
const unavailable = (res: ServerResponse, code: "STARTING" | "STOPPING") => {
  const body = JSON.stringify({
    error: {
      code,
      message: code === "STARTING" ? "The server is starting; try again in a moment." : "The server is stopping; try again in a moment."
    }
  })
  res.writeHead(503, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "retry-after": "1",
    ...(code === "STOPPING" ? { connection: "close" } : {})
  })
  res.end(body)
}

/**
 * The Node server, the HttpServer layer on it, a middleware ending WebSocket sessions when the stop begins, and
 * `ready`: a layer to build after the application, whose finalizer (the first to run at a stop) drains.
 */
export const makeListener = (options: ListenerOptions) =>
  Effect.gen(function*() {
    const stopping = yield* Deferred.make<void>()
    let phase: "starting" | "serving" | "stopping" = "starting"
    const server: Server = options.createServer()
    // The answers not yet sent, so that a stop can mark them `Connection: close`.
    const pending = new Set<ServerResponse>()
    // Attached before the application's handler: it alone answers while that one is not attached (bound but not yet
    // serving, or after a stop outlived its bound). During a stop every answer closes its connection, so a client
    // that kept it alive reconnects elsewhere instead of holding this process.
    server.on("request", (_req: IncomingMessage, res: ServerResponse) => {
      if (server.listenerCount("request") === 1) return unavailable(res, phase === "starting" ? "STARTING" : "STOPPING")
      if (phase === "stopping") {
        res.setHeader("connection", "close")
        return
      }
      pending.add(res)
      res.once("close", () => pending.delete(res))
    })

    const layer = NodeHttpServer.layer(() => server, {
      port: options.port,
      host: options.host,
      gracefulShutdownTimeout: options.shutdownTimeout,
      websocket: options.websocket
    })

    /** For HttpRouter.serve: an upgraded request (a console) is interrupted as soon as the stop begins. */
    const endsAtStop: ServeMiddleware = (app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (request.headers["upgrade"] === undefined) return yield* app
        return yield* Effect.raceFirst(app, Effect.andThen(Deferred.await(stopping), Effect.interrupt))
      })

    /** Stops accepting, interrupts consoles, and waits (bounded) for the connections under way to end. */
    const drain = Effect.gen(function*() {
      phase = "stopping"
      yield* Effect.logInfo("stopping: new connections refused, requests under way finishing")
      for (const res of pending) if (!res.headersSent) res.setHeader("connection", "close")
      yield* Deferred.succeed(stopping, undefined)
      const closed = Effect.callback<void>((resume) => {
        // `close` only drops the connections idle right now; one whose answer began before the stop, kept alive, is
        // closed as soon as that answer is sent.
        const sweep = setInterval(() => server.closeIdleConnections(), 50)
        server.close(() => {
          clearInterval(sweep)
          resume(Effect.void)
        })
        return Effect.sync(() => clearInterval(sweep))
      })
      const finished = yield* Effect.timeoutOption(closed, options.shutdownTimeout)
      if (finished._tag === "None") {
        yield* Effect.logWarning(`stopping: requests still under way after ${Duration.format(options.shutdownTimeout)} are cut`)
        server.closeAllConnections()
      }
    })

    const ready = Layer.effectDiscard(Effect.gen(function*() {
      phase = "serving"
      yield* Effect.addFinalizer(() => drain)
    }))

    return { server, layer, endsAtStop, ready }
  })
