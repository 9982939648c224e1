// The two ways a front (the panel's or Wings' effect/http app) is reached, one code path: NodeHttpServer's request
// and upgrade handlers on a node `http.Server`, which either listens on a loopback port or is handed in-memory
// connections (one end of a stream pair) as if it had accepted them.
import { NodeHttpServer, NodeWS } from "@effect/platform-node"
import { Effect, Scope } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import { type Duplex, duplexPair } from "node:stream"

export type Front = Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>

/** Console frames are small JSON; Wings refuses bigger ones (§3.3). */
const websocket = { maxPayload: 32 * 1024 }

/** Every connection the server gets, destroyed when the front stops (downloads and console sockets included). */
const trackConnections = (server: { on(event: "connection", f: (socket: Duplex) => void): unknown }) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const connections = new Set<Duplex>()
      server.on("connection", (socket) => {
        connections.add(socket)
        socket.on("close", () => connections.delete(socket))
      })
      return connections
    }),
    (connections) =>
      Effect.sync(() => {
        for (const socket of connections) socket.destroy()
      })
  )

/** Serves `front` on an ephemeral port of `host` until the scope closes; the port. */
export const serveOnPort = (front: Front, host: string): Effect.Effect<number, never, Scope.Scope> =>
  Effect.gen(function*() {
    const server = createServer()
    // The listener lives in a scope of its own (its WebSocket server is added to it lazily, at the first upgrade, and
    // waits for its clients to go), closed after every connection is destroyed.
    const listening = yield* Scope.fork(yield* Effect.scope)
    const address = yield* Effect.gen(function*() {
      const http = yield* NodeHttpServer.make(() => server, { port: 0, host, websocket, gracefulShutdownTimeout: "100 millis" })
      yield* http.serve(front)
      return http.address
    }).pipe(Scope.provide(listening))
    yield* trackConnections(server)
    return address._tag === "UnixPathAddress" ? 0 : address.port
  }).pipe(Effect.orDie)

/** Serves `front` without a listener until the scope closes; a new connection to it for each call. */
export const serveInMemory = (front: Front): Effect.Effect<() => Duplex, never, Scope.Scope> =>
  Effect.gen(function*() {
    const server = createServer()
    const requests = yield* Scope.fork(yield* Effect.scope, "parallel")
    const wss = yield* Effect.acquireRelease(
      Effect.sync(() => new NodeWS.WebSocketServer({ ...websocket, noServer: true })),
      (wss) => Effect.callback<void>((resume) => wss.close(() => resume(Effect.void)))
    )
    server.on("request", yield* NodeHttpServer.makeHandler(front, { scope: requests }))
    server.on("upgrade", yield* NodeHttpServer.makeUpgradeHandler(Effect.succeed(wss), front, { scope: requests }))
    yield* trackConnections(server)
    return () => {
      const [client, served] = duplexPair()
      server.emit("connection", served)
      return client
    }
  })
