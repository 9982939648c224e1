// A scripted Proxmox VE on loopback for the wrapper's specifications: real HTTP(S) and WebSocket, PVE's ticket and
// token authentication with CSRF checks (reference/proxmox.md §1), tasks with UPIDs (§2.3), and per-route replies
// scripted by each test. Every request is recorded as it arrived on the wire.
import { readFileSync } from "node:fs"
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { Duplex } from "node:stream"
import { Effect, Layer, Logger, Redacted } from "effect"
import { type WebSocket, WebSocketServer } from "ws"
import * as MemoryProxmoxVmids from "../../../adapters/fake/MemoryProxmoxVmids.ts"
import { layerWith, type ProxmoxOptions } from "../../../adapters/proxmox/ProxmoxVirtualization.ts"
import { Virtualization } from "../../../ports/Virtualization.ts"
import { type ProxmoxCluster, ProxmoxClusters, type ProxmoxTls } from "../../../ports/ProxmoxClusters.ts"
import { ClusterUnknown } from "../../../ports/Virtualization.ts"
import { cloudInit as aCloudInit } from "../../support/virtualizationMother.ts"

export const fixtureCert = readFileSync(new URL("../../fixtures/tls/sandbox-cert.pem", import.meta.url), "utf8")
const fixtureKey = readFileSync(new URL("../../fixtures/tls/sandbox-key.pem", import.meta.url), "utf8")

export const users: Record<string, string> = { "root@pam": "root-password-9f2c", "console@pve": "console-password-51ab" }
export const tokenId = "svc@pve!prov"
export const tokenSecret = "6f1d2c3b-token-secret-8a7e"

export interface Seen {
  readonly method: string
  /** Decoded, without `/api2/json`. */
  readonly path: string
  readonly query: URLSearchParams
  readonly rawBody: string
  readonly form: URLSearchParams
  readonly headers: IncomingHttpHeaders
  /** Milliseconds since the stub started. */
  readonly at: number
}

export type Reply =
  | {
    readonly status?: number
    readonly data?: unknown
    readonly total?: number
    /** In the body (PVE ≥ 8.3) … */
    readonly message?: string
    /** … and/or only as the reason phrase (older releases). */
    readonly reason?: string
    readonly errors?: Record<string, string>
  }
  | "hang"
  | "reset"

/** `attempt` counts the requests for this route from 0. */
export type Route = (request: Seen, attempt: number) => Reply

export interface TaskScript {
  readonly type?: string
  /** The node the UPID names; pve1 by default. */
  readonly node?: string
  /** Status reads answered "running" before the task stops. */
  readonly runningPolls?: number
  /** Status reads answered 400 "no such task" first (the log is not written yet). */
  readonly unknownPolls?: number
  readonly exitstatus?: string
  readonly log?: ReadonlyArray<string>
}

export interface ConsoleHandshake {
  readonly socket: WebSocket
  readonly request: IncomingMessage
}

export interface Stub {
  readonly url: string
  readonly seen: ReadonlyArray<Seen>
  /** Requests other than sign-in and task polling, `METHOD /path`. */
  readonly calls: (filter?: string) => ReadonlyArray<Seen>
  readonly logins: ReadonlyArray<{ readonly username: string; readonly renewal: boolean; readonly password: string }>
  route(key: string, handler: Route): void
  /** A task (on pve1 unless the script names a node); returns its UPID. */
  task(script?: TaskScript): string
  /** Every issued ticket stops being accepted, as after 2 h (§1.3). */
  expireTickets(): void
  onConsole(handler: (handshake: ConsoleHandshake) => void): void
}

const json = (res: ServerResponse, status: number, body: unknown, reason?: string) => {
  const text = JSON.stringify(body)
  res.writeHead(status, reason ?? "", { "content-type": "application/json;charset=UTF-8" })
  res.end(text)
}

export const makeStub = (options: { readonly tls?: boolean } = {}) =>
  Effect.gen(function*() {
    const started = Date.now()
    const seen: Array<Seen> = []
    const logins: Array<{ username: string; renewal: boolean; password: string }> = []
    const routes = new Map<string, Route>()
    const attempts = new Map<string, number>()
    const tickets = new Map<string, { username: string; csrf: string }>()
    const tasks = new Map<string, TaskScript & { polls: number }>()
    let consoleHandler: ((handshake: ConsoleHandshake) => void) | undefined
    let serial = 0

    const issue = (username: string) => {
      serial += 1
      const hex = Math.floor(Date.now() / 1000).toString(16).toUpperCase()
      const ticket = `PVE:${username}:${hex}::c2lnbmF0dXJl+/${serial}=`
      const csrf = `${hex}:Y3NyZnRva2VuZm9ydGhpc3RpY2tldA${serial}`
      tickets.set(ticket, { username, csrf })
      return { username, ticket, CSRFPreventionToken: csrf }
    }

    const cookieTicket = (headers: IncomingHttpHeaders) => {
      const match = /PVEAuthCookie=([^;]+)/.exec(headers.cookie ?? "")
      return match?.[1] === undefined ? undefined : decodeURIComponent(match[1])
    }

    /** The auth failure, if any, PVE would answer (§1.2, §1.4). */
    const refusal = (request: Seen): string | undefined => {
      const authorization = request.headers.authorization
      if (authorization !== undefined) {
        return authorization === `PVEAPIToken=${tokenId}=${tokenSecret}` ? undefined : "Authentication failed!"
      }
      const ticket = cookieTicket(request.headers)
      if (ticket === undefined) return "No ticket"
      const held = tickets.get(ticket)
      if (held === undefined) return "Authentication failed!"
      if (request.method !== "GET" && request.headers.csrfpreventiontoken !== held.csrf) {
        return "Permission denied - invalid csrf token"
      }
      return undefined
    }

    const signIn = (request: Seen, res: ServerResponse) => {
      const username = request.form.get("username") ?? ""
      const password = request.form.get("password") ?? ""
      const renewal = tickets.get(password)?.username === username
      logins.push({ username, renewal, password })
      if (!renewal && users[username] !== password) return json(res, 401, { data: null }, "authentication failure")
      return json(res, 200, { data: issue(username) })
    }

    const taskStatus = (upid: string, res: ServerResponse) => {
      const task = tasks.get(upid)
      if (task === undefined || task.polls < (task.unknownPolls ?? 0)) {
        if (task !== undefined) task.polls += 1
        return json(res, 400, { data: null, errors: { upid: "no such task" } }, "Parameter verification failed.")
      }
      task.polls += 1
      const running = task.polls <= (task.unknownPolls ?? 0) + (task.runningPolls ?? 0)
      return json(res, 200, {
        data: running
          ? { upid, node: "pve1", status: "running", type: task.type ?? "qmstart" }
          : { upid, node: "pve1", status: "stopped", exitstatus: task.exitstatus ?? "OK", type: task.type ?? "qmstart" }
      })
    }

    const taskLog = (upid: string, request: Seen, res: ServerResponse) => {
      const lines = [...(tasks.get(upid)?.log ?? []), `TASK ${tasks.get(upid)?.exitstatus ?? "OK"}`]
      const start = Number(request.query.get("start") ?? "0")
      const limit = Number(request.query.get("limit") ?? "50")
      const page = lines.slice(start, start + limit).map((t, i) => ({ n: start + i + 1, t }))
      return json(res, 200, { data: page, total: lines.length })
    }

    const answer = (reply: Reply, req: IncomingMessage, res: ServerResponse) => {
      if (reply === "hang") return
      if (reply === "reset") return req.socket.destroy()
      const status = reply.status ?? 200
      const body: Record<string, unknown> = { data: reply.data ?? null }
      if (reply.total !== undefined) body["total"] = reply.total
      if (reply.message !== undefined) body["message"] = reply.message
      if (reply.errors !== undefined) body["errors"] = reply.errors
      return json(res, status, body, reply.reason ?? reply.message?.split("\n")[0])
    }

    const handle = (req: IncomingMessage, res: ServerResponse, rawBody: string) => {
      const url = new URL(req.url ?? "/", "http://stub")
      const path = decodeURIComponent(url.pathname.replace(/^\/api2\/json/, ""))
      const request: Seen = {
        method: req.method ?? "GET",
        path,
        query: url.searchParams,
        rawBody,
        form: new URLSearchParams(rawBody),
        headers: req.headers,
        at: Date.now() - started
      }
      seen.push(request)
      if (request.method === "POST" && path === "/access/ticket") return signIn(request, res)
      const refused = refusal(request)
      if (refused !== undefined) return json(res, 401, { data: null }, refused)
      const key = `${request.method} ${path}`
      const route = routes.get(key)
      if (route !== undefined) {
        const attempt = attempts.get(key) ?? 0
        attempts.set(key, attempt + 1)
        return answer(route(request, attempt), req, res)
      }
      // Asked on another node than the UPID's, PVE does not know the task (§2.3).
      const status = /^\/nodes\/([^/]+)\/tasks\/(UPID:([^:]+):.+)\/status$/.exec(path)
      if (request.method === "GET" && status?.[2] !== undefined) {
        return taskStatus(status[1] === status[3] ? status[2] : "", res)
      }
      const log = /^\/nodes\/[^/]+\/tasks\/(.+)\/log$/.exec(path)
      if (request.method === "GET" && log?.[1] !== undefined) return taskLog(log[1], request, res)
      return json(res, 501, { data: null }, `Method '${key}' not implemented`)
    }

    const listener = (req: IncomingMessage, res: ServerResponse) => {
      let body = ""
      req.setEncoding("utf8")
      req.on("data", (chunk: string) => (body += chunk))
      req.on("end", () => handle(req, res, body))
    }
    const server: Server = options.tls === true
      ? createHttpsServer({ cert: fixtureCert, key: fixtureKey }, listener)
      : createHttpServer(listener)

    const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has("binary") ? "binary" : false) })
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? "/", "http://stub")
      seen.push({
        method: "WS",
        path: decodeURIComponent(url.pathname.replace(/^\/api2\/json/, "")),
        query: url.searchParams,
        rawBody: "",
        form: new URLSearchParams(),
        headers: req.headers,
        at: Date.now() - started
      })
      const ticket = cookieTicket(req.headers)
      if (ticket === undefined || !tickets.has(ticket) || consoleHandler === undefined) {
        socket.end("HTTP/1.1 401 No ticket\r\n\r\n")
        return
      }
      const handler = consoleHandler
      wss.handleUpgrade(req, socket, head, (ws) => handler({ socket: ws, request: req }))
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
      url: `${options.tls === true ? "https" : "http"}://127.0.0.1:${port}`,
      seen,
      calls: (filter) =>
        seen.filter((s) =>
          s.path !== "/access/ticket" && !/\/tasks\//.test(s.path) &&
          (filter === undefined || `${s.method} ${s.path}`.startsWith(filter))
        ),
      logins,
      route: (key, handler) => routes.set(key, handler),
      task: (script = {}) => {
        const hex = (tasks.size + 1).toString(16).toUpperCase().padStart(8, "0")
        const upid = `UPID:${script.node ?? "pve1"}:${hex}:0A1B2C3D:6650A1B2:${script.type ?? "qmstart"}:101:root@pam:`
        tasks.set(upid, { ...script, polls: 0 })
        return upid
      },
      expireTickets: () => tickets.clear(),
      onConsole: (handler) => {
        consoleHandler = handler
      }
    }
    return stub
  })

// --- the adapter under test ------------------------------------------------------------------------------------

export const passwordAuth = { kind: "password", username: "root@pam", password: Redacted.make(users["root@pam"] ?? "") } as const

export const tokenAuth = (consoleLogin: boolean) =>
  ({
    kind: "token",
    tokenId,
    secret: Redacted.make(tokenSecret),
    consoleLogin: consoleLogin ? { username: "console@pve", password: Redacted.make(users["console@pve"] ?? "") } : null
  }) as const

export const noTls: ProxmoxTls = { ca: null, fingerprint: null, insecure: false }

export const clusterAt = (url: string, overrides: Partial<ProxmoxCluster> = {}): ProxmoxCluster => ({
  name: "c1",
  url,
  auth: passwordAuth,
  tls: noTls,
  ...overrides
})

/** Fast enough for a suite: 2 retries, short back-off and polling, and short deadlines. */
export const testOptions: Partial<ProxmoxOptions> = {
  // The scenarios script VMIDs 101, 102…: new machines take them in that order.
  vmidRange: { from: 101, to: 120 },
  requestTimeout: "2 seconds",
  retries: 2,
  retryBaseDelay: "10 millis",
  taskPollInitial: "20 millis",
  taskPollMax: "80 millis",
  taskTimeout: "3 seconds",
  cloneTimeout: "3 seconds",
  guestExecTimeout: "3 seconds",
  consoleOpenTimeout: "3 seconds"
}

export const clustersLayer = (...clusters: ReadonlyArray<ProxmoxCluster>) =>
  Layer.succeed(ProxmoxClusters, {
    get: (name) => {
      const found = clusters.find((c) => c.name === name)
      return found === undefined ? Effect.fail(new ClusterUnknown({ cluster: name })) : Effect.succeed(found)
    }
  })

/** Silent by default: a test that specifies a log line provides its own logger. */
export const adapterLayer = (cluster: ProxmoxCluster, options: Partial<ProxmoxOptions> = {}) =>
  Layer.mergeAll(
    layerWith({ ...testOptions, ...options }).pipe(Layer.provide([clustersLayer(cluster), MemoryProxmoxVmids.layer])),
    Logger.layer([])
  )

// --- scenarios ---------------------------------------------------------------------------------------------------

export const vm = { cluster: "c1", node: "pve1", vmid: 101 }
/** Where `vm` lives, as PVE paths name it. */
export const base = "/nodes/pve1/qemu/101"
export const missingConfig = "Configuration file 'nodes/pve1/qemu-server/101.conf' does not exist"

/** A VPS's cloud-init, as the provisioning workflow passes it. */
export const cloudInit = aCloudInit("web-1", {
  password: Redacted.make("Root-pass-1"),
  sshPublicKeys: ["ssh-ed25519 AAAAC3Nz/x+y= ann@laptop", "ssh-rsa AAAAB3 bob"]
})

/** A fresh stub scripted by `script`, and the adapter under test pointed at it. */
export const scenario = <A, E>(
  script: (stub: Stub) => void,
  f: (v: Virtualization["Service"], stub: Stub) => Effect.Effect<A, E>,
  options: Partial<ProxmoxOptions> = {}
) =>
  Effect.gen(function*() {
    const stub = yield* makeStub()
    script(stub)
    return yield* Effect.flatMap(Virtualization, (v) => f(v, stub)).pipe(
      Effect.provide(adapterLayer(clusterAt(stub.url), options))
    )
  }).pipe(Effect.scoped)

/** `key` answers with the UPID of a new task scripted by `script`. */
export const replyTask = (stub: Stub, key: string, script: TaskScript = {}) =>
  stub.route(key, () => ({ data: stub.task(script) }))
