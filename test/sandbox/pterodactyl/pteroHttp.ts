// Test helpers for the sandbox Pterodactyl: a started sandbox, a JSON client per API key, a server "mother" and a
// console WebSocket client that records every frame.
import WebSocket from "ws"
import { Effect, Exit, Scope } from "effect"
import {
  type SandboxPterodactyl,
  sandboxPterodactyl,
  type SandboxPterodactylOptions
} from "../../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { Allocation, AppServer, Frame, itemOf, listOf, readJson, websocketOf } from "./shapes.ts"

export type Sandbox = SandboxPterodactyl & { close(): Promise<void> }

/** The scoped sandbox in a scope of its own, for promise-style tests: `close()` closes the scope. */
export const startSandbox = async (options: SandboxPterodactylOptions = {}): Promise<Sandbox> => {
  const scope = Scope.makeUnsafe()
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  try {
    const sandbox = await Effect.runPromise(Scope.provide(sandboxPterodactyl({ installDurationMs: 0, onWarning: () => undefined, ...options }), scope))
    return { ...sandbox, close }
  } catch (e) {
    await close()
    throw e
  }
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed body, `undefined` when it is not JSON: read it through the shapes of `shapes.ts`. */
  readonly json: unknown
}

export const call = async (url: string, init: RequestInit = {}): Promise<Answer> => {
  const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(5000), ...init })
  const text = await res.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

export const api = (base: string, key: string) => {
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(`${base}${path}`, {
      method,
      headers: {
        Accept: "application/json",
        Authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        ...headers
      },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
  return {
    get: (path: string, headers?: Record<string, string>) => send("GET", path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => send("POST", path, body, headers),
    put: (path: string, body?: unknown) => send("PUT", path, body),
    delete: (path: string) => send("DELETE", path)
  }
}

export type Api = ReturnType<typeof api>

export const clients = (sandbox: Sandbox) => ({
  app: api(`${sandbox.url}/api/application`, sandbox.applicationKey),
  client: api(`${sandbox.url}/api/client`, sandbox.clientKey)
})

/** A valid create body for egg 5 on the given allocation. */
export const paperServer = (allocation: number, overrides: Record<string, unknown> = {}) => ({
  name: "mc-1",
  user: 1,
  egg: 5,
  docker_image: "ghcr.io/pterodactyl/yolks:java_17",
  startup: "java -Xms128M -Xmx{{SERVER_MEMORY}}M -jar {{SERVER_JARFILE}}",
  environment: { SERVER_JARFILE: "server.jar", MINECRAFT_VERSION: "latest", BUILD_NUMBER: "latest" },
  limits: { memory: 1024, swap: 0, disk: 3072, io: 500, cpu: 100 },
  feature_limits: { databases: 0, backups: 2 },
  allocation: { default: allocation },
  ...overrides
})

/** The id of the first free allocation of node 1. */
export const firstFreeAllocation = async (app: Api) => {
  const free = await app.get("/nodes/1/allocations?filter[server_id]=false&per_page=1")
  const allocation = listOf(Allocation)(free.json).data[0]?.attributes.id
  if (allocation === undefined) throw new Error("no free allocation on node 1")
  return allocation
}

/** Creates a server on the first free allocation of node 1 and returns its attributes. */
export const createServer = async (app: Api, overrides: Record<string, unknown> = {}) => {
  const res = await app.post("/servers", paperServer(await firstFreeAllocation(app), overrides))
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`)
  return itemOf(AppServer)(res.json).attributes
}

/** A server's attributes as the Application API reads them now. */
export const getServer = async (app: Api, id: number) => itemOf(AppServer)((await app.get(`/servers/${id}`)).json).attributes

/** A console socket on Wings: every frame is kept; `next(event)` waits for the next one of that event. */
export class Console {
  readonly frames: Array<Frame> = []
  private waiters: Array<{ event: string; from: number; resolve: (f: Frame) => void }> = []
  readonly ws: WebSocket
  closed: Promise<{ code: number; reason: string }>

  constructor(ws: WebSocket) {
    this.ws = ws
    this.closed = new Promise((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })))
    ws.on("message", (data) => {
      const frame = readJson(Frame)(data.toString())
      this.frames.push(frame)
      this.waiters = this.waiters.filter((w) => {
        const hit = this.frames.slice(w.from).find((f) => f.event === w.event)
        if (hit !== undefined) w.resolve(hit)
        return hit === undefined
      })
    })
  }

  static open(url: string, origin: string | undefined): Promise<Console> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, origin === undefined ? {} : { origin })
      ws.once("open", () => resolve(new Console(ws)))
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)))
      ws.once("error", reject)
    })
  }

  send(event: string, ...args: Array<string>) {
    this.ws.send(JSON.stringify(args.length === 0 ? { event } : { event, args }))
  }

  /** The next frame of `event` arriving after now (or already arrived after `mark`). */
  next(event: string, mark = this.frames.length, timeoutMs = 4000): Promise<Frame> {
    const already = this.frames.slice(mark).find((f) => f.event === event)
    if (already !== undefined) return Promise.resolve(already)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no '${event}' within ${timeoutMs} ms; got ${JSON.stringify(this.frames.slice(mark))}`)), timeoutMs)
      this.waiters.push({ event, from: mark, resolve: (f) => {
        clearTimeout(timer)
        resolve(f)
      } })
    })
  }

  lines(mark = 0): Array<string> {
    return this.frames.slice(mark).filter((f) => f.event === "console output").map((f) => f.args?.[0] ?? "")
  }

  close() {
    this.ws.close()
  }
}

/** Token + socket for a server from the Client API. */
export const consoleToken = async (client: Api, server: string) => {
  const res = await client.get(`/servers/${server}/websocket`)
  if (res.status !== 200) throw new Error(`websocket token: ${res.status} ${res.text}`)
  return websocketOf(res.json).data
}

/** An authenticated console socket. */
export const openConsole = async (sandbox: Sandbox, client: Api, server: string) => {
  const { token, socket } = await consoleToken(client, server)
  const c = await Console.open(socket, sandbox.url)
  const mark = c.frames.length
  c.send("auth", token)
  await c.next("auth success", mark)
  return c
}
