// A scripted Pterodactyl panel and Wings node on loopback for the adapter's specifications: real HTTP and WebSocket,
// per-route replies scripted by each test, and every request recorded as it arrived on the wire (method, path, query,
// headers, body). Unscripted routes answer 501 so a test notices a call it did not expect.
// Kept beside the simulator (adapters/pterodactyl/sandbox, which the GamePanel contract and the domain tests run on)
// for what a faithful panel never does on request: an answer lost after the work was done, a connection dropped or a
// panel silent mid-call, a Retry-After as an HTTP date, a pre-1.8 panel ignoring a filter, a debug-mode error that
// carries the node's address, the exact bytes of a request body, frames and closes scripted one by one.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Logger, Redacted } from "effect"
import { type WebSocket, WebSocketServer } from "ws"
import { layerWith, type PterodactylOptions } from "../../../adapters/pterodactyl/PterodactylGamePanel.ts"
import { GamePanel, GamePanels, type PanelConnection, PanelUnknown } from "../../../ports/GamePanel.ts"

export const applicationKey = "ptla_AbCdEfGhIjK0123456789abcdefghij0123456789ab"
export const clientKey = "ptlc_ZyXwVuTsRqP9876543210zyxwvutsrqp9876543210"

export interface Seen {
  readonly method: string
  /** Decoded path, query excluded. */
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

export type Reply =
  | {
    readonly status?: number
    readonly json?: unknown
    readonly text?: string
    readonly bytes?: Uint8Array
    readonly headers?: Record<string, string>
  }
  | "hang"
  | "reset"
  /** The test writes the answer itself (a body sent slowly, cut part-way, watched for its close). */
  | { readonly respond: (res: ServerResponse, req: IncomingMessage) => void }

export type JsonReply = Exclude<Reply, "hang" | "reset" | { readonly respond: unknown }>

/** `attempt` counts the requests for this route from 0. */
export type Route = (request: Seen, attempt: number) => Reply

export interface WingsHandshake {
  readonly socket: WebSocket
  readonly request: IncomingMessage
  /** Frames received so far, parsed. */
  readonly received: Array<{ readonly event: string; readonly args?: ReadonlyArray<string> }>
}

export interface Stub {
  /** The panel's URL (and the node's: one listener serves both). */
  readonly url: string
  readonly seen: ReadonlyArray<Seen>
  /** Recorded requests whose `METHOD /path` starts with `prefix`. */
  calls(prefix?: string): ReadonlyArray<Seen>
  route(key: string, handler: Route): void
  onWings(handler: (handshake: WingsHandshake) => void): void
  readonly upgrades: ReadonlyArray<IncomingHttpHeaders>
}

/** The panel's error envelope (reference/pterodactyl.md §1.3). */
export const errors = (status: number, code: string, detail: string, meta?: Record<string, string>): Reply => ({
  status,
  json: { errors: [{ code, status: String(status), detail, ...(meta === undefined ? {} : { meta }) }] }
})

export const makeStub = Effect.gen(function*() {
  const seen: Array<Seen> = []
  const upgrades: Array<IncomingHttpHeaders> = []
  const routes = new Map<string, Route>()
  const attempts = new Map<string, number>()
  let wings: ((handshake: WingsHandshake) => void) | undefined

  const answer = (reply: Reply, req: IncomingMessage, res: ServerResponse) => {
    if (reply === "hang") return
    if (reply === "reset") return req.socket.destroy()
    if ("respond" in reply) return reply.respond(res, req)
    const status = reply.status ?? 200
    if (reply.json !== undefined) {
      res.writeHead(status, { "content-type": "application/json", ...reply.headers })
      return res.end(JSON.stringify(reply.json))
    }
    res.writeHead(status, { ...reply.headers })
    res.end(reply.bytes ?? reply.text ?? "")
  }

  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://stub")
      const request: Seen = {
        method: req.method ?? "GET",
        path: decodeURIComponent(url.pathname),
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks)
      }
      seen.push(request)
      const key = `${request.method} ${request.path}`
      const route = routes.get(key)
      if (route === undefined) return answer({ status: 501, json: { errors: [{ code: "Unscripted", status: "501", detail: key }] } }, req, res)
      const attempt = attempts.get(key) ?? 0
      attempts.set(key, attempt + 1)
      answer(route(request, attempt), req, res)
    })
  })

  const wss = new WebSocketServer({ noServer: true })
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrades.push(req.headers)
    const handler = wings
    if (handler === undefined) {
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n")
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const received: WingsHandshake["received"] = []
      ws.on("message", (data) => received.push(JSON.parse(String(data))))
      handler({ socket: ws, request: req, received })
    })
  })

  const port = yield* Effect.acquireRelease(
    Effect.callback<number>((resume) => {
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resume(typeof address === "object" && address !== null ? Effect.succeed(address.port) : Effect.die("no port"))
      })
    }),
    () =>
      Effect.callback<void>((resume) => {
        for (const client of wss.clients) client.terminate()
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

  const stub: Stub = {
    url: `http://127.0.0.1:${port}`,
    seen,
    calls: (prefix = "") => seen.filter((s) => `${s.method} ${s.path}`.startsWith(prefix)),
    route: (key, handler) => void routes.set(key, handler),
    onWings: (handler) => {
      wings = handler
    },
    upgrades
  }
  return stub
})

// --- the adapter under test ------------------------------------------------------------------------------------

export const connectionTo = (url: string): PanelConnection => ({
  name: "p1",
  url,
  applicationKey: Redacted.make(applicationKey),
  clientKey: Redacted.make(clientKey)
})

export const panelsLayer = (...connections: ReadonlyArray<PanelConnection>) =>
  Layer.succeed(GamePanels, {
    get: (name) => {
      const found = connections.find((c) => c.name === name)
      return found === undefined ? Effect.fail(new PanelUnknown({ panel: name })) : Effect.succeed(found)
    }
  })

/** Fast enough for a suite: 2 retries, short back-off, short deadlines. */
export const testOptions: Partial<PterodactylOptions> = {
  requestTimeout: "2 seconds",
  retries: 2,
  retryBaseDelay: "10 millis",
  maxRetryAfter: "2 seconds",
  consoleOpenTimeout: "3 seconds",
  uploadTimeout: "5 seconds"
}

/** Silent by default: a test that specifies a log line provides its own logger. */
export const adapterLayer = (connection: PanelConnection, options: Partial<PterodactylOptions> = {}) =>
  Layer.mergeAll(
    layerWith({ ...testOptions, ...options }).pipe(
      Layer.provide(panelsLayer(connection)),
      Layer.provide(NodeHttpClient.layerUndici)
    ),
    Logger.layer([])
  )

/** A fresh stub scripted by `script`, and the adapter under test pointed at it (panel "p1"). */
export const scenario = <A, E>(
  script: (stub: Stub) => void,
  f: (panel: GamePanel["Service"], stub: Stub) => Effect.Effect<A, E>,
  options: Partial<PterodactylOptions> = {}
) =>
  Effect.gen(function*() {
    const stub = yield* makeStub
    script(stub)
    return yield* Effect.flatMap(GamePanel, (p) => f(p, stub)).pipe(
      Effect.provide(adapterLayer(connectionTo(stub.url), options))
    )
  }).pipe(Effect.scoped)

// --- answers ------------------------------------------------------------------------------------------------------

export const serverAttributes = (overrides: Record<string, unknown> = {}) => ({
  id: 12,
  external_id: "gs_42",
  uuid: "4600605e-6e5a-4f29-b3c4-fc01b7aa1192",
  identifier: "4600605e",
  name: "survival",
  description: "",
  status: "installing",
  suspended: false,
  limits: { memory: 1024, swap: 0, disk: 3072, io: 500, cpu: 100, threads: null, oom_disabled: true },
  feature_limits: { databases: 0, allocations: 1, backups: 2 },
  user: 3,
  node: 1,
  allocation: 401,
  nest: 1,
  egg: 5,
  container: { startup_command: "java", image: "ghcr.io/pterodactyl/yolks:java_17", installed: 0, environment: {} },
  ...overrides
})

export const serverItem = (overrides: Record<string, unknown> = {}): JsonReply => ({
  json: { object: "server", attributes: serverAttributes(overrides) }
})

export const userItem = (overrides: Record<string, unknown> = {}): JsonReply => ({
  json: {
    object: "user",
    attributes: {
      id: 3,
      external_id: "u_7",
      uuid: "c4022c6c-9bf1-4a23-bff9-519cef6b7a3a",
      username: "zh_u7",
      email: "u7@users.zh.invalid",
      first_name: "Ann",
      last_name: "Lee",
      language: "en",
      root_admin: false,
      "2fa": false,
      ...overrides
    }
  }
})

export const list = (items: ReadonlyArray<unknown>, object: string, page = 1, totalPages = 1): JsonReply => ({
  json: {
    object: "list",
    data: items.map((attributes) => ({ object, attributes })),
    meta: { pagination: { total: items.length, count: items.length, per_page: 50, current_page: page, total_pages: totalPages, links: {} } }
  }
})

/** An unsigned JWT-shaped token whose payload names the panel and node (as Wings tokens do, §3.1). */
export const jwtFor = (url: string, claims: Record<string, unknown> = {}) => {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
  return `${part({ alg: "HS256", typ: "JWT" })}.${part({ iss: url, aud: url, ...claims })}.c2lnbmF0dXJl`
}
