// The listener around the application, in-process on a real loopback socket with a few routes of its own: what a
// client sees while the routes are not attached yet, and what a stop does to requests under way, to kept-alive
// connections, to new connections and to WebSockets.
import { Duration, Effect, Exit, Layer, References, Scope, Stream } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Agent, get, type IncomingMessage } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { webSocketServerOptions } from "../../adapters/http/consoleLimits.ts"
import { createHttpServer } from "../../adapters/http/edge.ts"
import { makeListener } from "../../app/HttpListener.ts"

/** A promise with its resolver, for a route the test lets finish. */
const gate = () => {
  let open = () => {}
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { open, opened }
}

interface Answer {
  readonly status: number
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

/** One GET; fails with the transport error (ECONNREFUSED, ECONNRESET…) when there is no answer. */
const fetchRaw = (url: string, agent: Agent | false = false) =>
  new Promise<Answer>((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = ""
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      res.on("error", reject)
    }).on("error", reject)
  })

const errorCode = (promise: Promise<unknown>) =>
  promise.then(() => "answered", (e: unknown) => (e instanceof Error && "code" in e ? String(e.code) : String(e)))

const scopes: Array<Scope.Closeable> = []
afterEach(async () => {
  await Promise.all(scopes.splice(0).map((scope) => Effect.runPromise(Scope.close(scope, Exit.void))))
})

/** What the routes tell the test: when each began, and the gate the slow one waits on. */
const signals = () => {
  const slow = gate()
  const forever = gate()
  const upgraded = gate()
  const release = gate()
  return { slow, forever, upgraded, release }
}

/** The routes a stop is tried on: one the test holds open, one that never ends, and a WebSocket that stays open. */
const routes = (s: ReturnType<typeof signals>) =>
  Layer.mergeAll(
    HttpRouter.add("GET", "/slow", Effect.gen(function*() {
      s.slow.open()
      yield* Effect.promise(() => s.release.opened)
      return HttpServerResponse.text("done")
    })),
    // Its headers and first bytes leave before the test opens the gate: Connection can no longer be changed.
    HttpRouter.add("GET", "/stream", Effect.sync(() =>
      HttpServerResponse.stream(Stream.concat(
        Stream.make(new TextEncoder().encode("first ")),
        Stream.fromEffect(Effect.as(Effect.promise(() => s.release.opened), new TextEncoder().encode("last")))
      ))
    )),
    HttpRouter.add("GET", "/forever", Effect.andThen(Effect.sync(s.forever.open), Effect.never)),
    HttpRouter.add("GET", "/ws", Effect.scoped(Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const reader = yield* Effect.flatMap(request.upgrade, (socket) => socket.reader)
      s.upgraded.open()
      return yield* Effect.forever(reader.pull)
    })))
  )

/** The Node server and WebSocket options of the server process. */
const asTheServer = { createServer: createHttpServer, websocket: webSocketServerOptions }

/** The listener serving `routes`, wired as the server process wires it; `stop()` closes it as a SIGTERM does. */
const serving = async (shutdownTimeout: Duration.Duration) => {
  const s = signals()
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const listener = await Effect.runPromise(makeListener({ host: "127.0.0.1", port: 0, shutdownTimeout, ...asTheServer }))
  const app = HttpRouter.serve(routes(s), { disableLogger: true, disableListenLog: true, middleware: listener.endsAtStop })
  const layer = listener.ready.pipe(Layer.provideMerge(app), Layer.provide(listener.layer))
  // The stop's own log lines are the server's business, not this test's output.
  await Effect.runPromise(Layer.buildWithScope(layer.pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))), scope))
  const address = listener.server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    slowStarted: s.slow.opened,
    foreverStarted: s.forever.opened,
    upgraded: s.upgraded.opened,
    release: s.release.open,
    /** Closes the scope as a SIGTERM does; resolves with how long it took, in ms. */
    stop: () => {
      const started = Date.now()
      return Effect.runPromise(Scope.close(scope, Exit.void)).then(() => Date.now() - started)
    }
  }
}

describe("before the routes are attached", () => {
  it("every request, a WebSocket upgrade too, is answered 503 STARTING with Retry-After in the JSON envelope", async () => {
    const scope = Effect.runSync(Scope.make())
    scopes.push(scope)
    const listener = await Effect.runPromise(makeListener({ host: "127.0.0.1", port: 0, shutdownTimeout: Duration.seconds(5), ...asTheServer }))
    await Effect.runPromise(Layer.buildWithScope(listener.layer, scope))
    const address = listener.server.address()
    const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`

    for (const path of ["/healthz", "/api/auth/me", "/"]) {
      const answer = await fetchRaw(`${url}${path}`)
      expect(answer.status).toBe(503)
      expect(answer.headers["retry-after"]).toBe("1")
      expect(answer.headers["content-type"]).toBe("application/json")
      expect(JSON.parse(answer.body)).toEqual({ error: { code: "STARTING", message: "The server is starting; try again in a moment." } })
    }
    const refused = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${url.replace("http", "ws")}/api/vps/x/console`)
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0))
      ws.on("open", () => reject(new Error("upgraded before the routes were attached")))
      ws.on("error", () => undefined)
    })
    expect(refused).toBe(503)
  })
})

describe("a stop", () => {
  it("lets the request under way finish, refuses new connections at once, and closes the kept-alive connection after its answer", async () => {
    const server = await serving(Duration.seconds(30))
    const agent = new Agent({ keepAlive: true })
    const idle = await fetchRaw(`${server.url}/nowhere`, agent)
    expect(idle.status).toBe(404)
    const underWay = fetchRaw(`${server.url}/slow`, agent)
    await server.slowStarted
    const stopped = server.stop()

    expect(await errorCode(fetchRaw(`${server.url}/slow`))).toBe("ECONNREFUSED")
    server.release()
    const answer = await underWay
    expect([answer.status, answer.body, answer.headers["connection"]]).toEqual([200, "done", "close"])
    // Without the kept-alive connection closed, the stop would wait for Node's 5 s keep-alive timeout.
    expect(await stopped).toBeLessThan(3_000)
    agent.destroy()
  })

  it("closes a kept-alive connection whose answer began before the stop as soon as that answer ends", async () => {
    const server = await serving(Duration.seconds(30))
    const agent = new Agent({ keepAlive: true })
    const headersSent = new Promise<IncomingMessage>((resolve, reject) => get(`${server.url}/stream`, { agent }, resolve).on("error", reject))
    const response = await headersSent
    expect(response.headers["connection"]).toBe("keep-alive")
    const stopped = server.stop()
    let body = ""
    response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
    const ended = new Promise((resolve) => response.on("end", resolve))
    server.release()
    await ended
    expect(body).toBe("first last")
    expect(await stopped).toBeLessThan(3_000)
    agent.destroy()
  })

  it("interrupts an open WebSocket at once (1001, going away) while a request under way still runs", async () => {
    const server = await serving(Duration.seconds(30))
    const ws = new WebSocket(`${server.url.replace("http", "ws")}/ws`)
    const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)))
    await server.upgraded
    const underWay = fetchRaw(`${server.url}/slow`)
    await server.slowStarted
    const stopped = server.stop()

    expect(await closed).toBe(1001)
    server.release()
    expect((await underWay).body).toBe("done")
    expect(await stopped).toBeLessThan(3_000)
  })

  it("cuts a request still under way when the bound passes, and completes then", async () => {
    const server = await serving(Duration.seconds(1))
    const underWay = errorCode(fetchRaw(`${server.url}/forever`))
    await server.foreverStarted
    const took = await server.stop()
    expect(await underWay).toBe("ECONNRESET")
    expect(took).toBeGreaterThanOrEqual(900)
    expect(took).toBeLessThan(5_000)
  })
})
