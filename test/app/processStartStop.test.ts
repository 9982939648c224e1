// `node app/main.ts` starting and stopping under traffic: no request sent during the start is left unanswered, and a
// SIGTERM closes open consoles at once, lets a request under way finish, refuses new connections and exits 0.
import { fillBillingProfile, paid } from "../support/checkout.ts"
import { stat } from "node:fs/promises"
import { get, request } from "node:http"
import { connect } from "node:net"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { Browser } from "../support/browser.ts"
import { cleanUp, exitOf, freePort, migratedDataDir, spawnNode, startServer, tempDir } from "./processes.ts"

afterEach(cleanUp)

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

type Outcome =
  | { readonly _tag: "Answer"; readonly status: number; readonly code: string | undefined; readonly retryAfter: string | undefined }
  | { readonly _tag: "ConnectionError"; readonly code: string }
  | { readonly _tag: "Hung" }

/** One `GET /healthz` on a fresh connection; no answer within `timeoutMs` is a hang. */
const probe = (port: number, timeoutMs: number) =>
  new Promise<Outcome>((resolve) => {
    const req = get({ host: "127.0.0.1", port, path: "/healthz", agent: false }, (res) => {
      let body = ""
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
      res.on("end", () => {
        let code: string | undefined
        try {
          const parsed: unknown = JSON.parse(body)
          const error = typeof parsed === "object" && parsed !== null && "error" in parsed ? parsed.error : undefined
          code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined
        } catch {
          code = undefined
        }
        resolve({ _tag: "Answer", status: res.statusCode ?? 0, code, retryAfter: res.headers["retry-after"] })
      })
    })
    req.setTimeout(timeoutMs, () => {
      resolve({ _tag: "Hung" })
      req.destroy()
    })
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ _tag: "ConnectionError", code: e.code ?? e.message }))
  })

describe("the start, probed from the moment the process is spawned", () => {
  it("leaves no request hanging: each is refused before the port is bound, then answered 200 or 503 STARTING", async ({ annotate }) => {
    const port = await freePort()
    const child = spawnNode("app/main.ts", [], {
      NODE_ENV: "development",
      DATA_DIR: await tempDir("start-probe"),
      HOST: "127.0.0.1",
      PORT: String(port),
      BCRYPT_COST: "4"
    })
    let exited = false
    void child.exited.then(() => (exited = true))
    const tally = { sent: 0, ok: 0, starting: 0, hung: 0, connectionErrors: 0, otherAnswers: [] as Array<string> }
    const errors = new Map<string, number>()
    const deadline = Date.now() + 150_000
    // Four clients back to back (20 ms apart after a refused connection, not to starve the start of CPU), until 200
    // answers follow the start.
    const client = async () => {
      while (tally.ok < 200 && !exited && Date.now() < deadline) {
        tally.sent++
        const outcome = await probe(port, 5_000)
        if (outcome._tag === "Hung") tally.hung++
        else if (outcome._tag === "ConnectionError") {
          tally.connectionErrors++
          errors.set(outcome.code, (errors.get(outcome.code) ?? 0) + 1)
          await sleep(20)
        } else if (outcome.status === 200) tally.ok++
        else if (outcome.status === 503 && outcome.code === "STARTING" && outcome.retryAfter !== undefined) tally.starting++
        else tally.otherAnswers.push(`${outcome.status} ${outcome.code ?? ""}`)
      }
    }
    await Promise.all([client(), client(), client(), client()])
    const summary = { ...tally, errors: Object.fromEntries(errors) }
    await annotate(JSON.stringify(summary))
    const seen = JSON.stringify(summary)
    expect(exited, child.stderr()).toBe(false)
    expect([summary.hung, summary.otherAnswers], seen).toEqual([0, []])
    expect(summary.ok, seen).toBeGreaterThanOrEqual(200)
    // Only refusals before the port is bound: never a connection accepted and then dropped.
    expect(Object.keys(summary.errors).filter((code) => code !== "ECONNREFUSED"), seen).toEqual([])
    expect(tally.connectionErrors, seen).toBeGreaterThan(0)
  }, 240_000)
})

/** A console WebSocket on `vpsId`, open, with the code it closes with. */
const openConsole = (url: string, vpsId: string, cookie: string, origin: string) =>
  new Promise<{ readonly ws: WebSocket; readonly closed: Promise<{ code: number; at: number }> }>((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/api/vps/${vpsId}/console`, { headers: { origin, cookie } })
    const closed = new Promise<{ code: number; at: number }>((done) => ws.once("close", (code: number) => done({ code, at: Date.now() })))
    ws.once("open", () => resolve({ ws, closed }))
    ws.once("unexpected-response", (_req, res) => reject(new Error(`console refused: ${res.statusCode}`)))
    ws.once("error", reject)
  })

/** `POST /api/auth/register` whose body is sent in two halves: the second when the test calls `finish()`. */
const slowRegistration = (port: number, origin: string, email: string) => {
  const body = JSON.stringify({ email, password: "correct horse battery", accountType: "personal", firstName: "Ada", lastName: "Lovelace" })
  const req = request({
    host: "127.0.0.1",
    port,
    method: "POST",
    path: "/api/auth/register",
    agent: false,
    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), origin }
  })
  const answer = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
    req.on("response", (res) => {
      let text = ""
      res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers["connection"], body: text }))
    })
    req.on("error", reject)
  })
  req.write(body.slice(0, 20))
  return { answer, finish: () => req.end(body.slice(20)) }
}

/** Whether a new TCP connection to `port` is accepted. */
const connects = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve("connected")
    })
    socket.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
  })

interface OrderBody {
  readonly id: string
  readonly status: string
  readonly serviceId?: string
}

describe("SIGTERM", () => {
  it("closes an open console at once, lets a request under way finish, refuses new connections, exits 0 and releases the data directory", async ({ annotate }) => {
    const dataDir = await migratedDataDir("sigterm-drain")
    const server = await startServer({
      NODE_ENV: "development",
      DATA_DIR: dataDir,
      BCRYPT_COST: "4",
      SANDBOX_TASK_SPEED: "instant",
      SHUTDOWN_TIMEOUT_SECONDS: "8"
    })
    const port = Number(new URL(server.url).port)
    const origin = `http://localhost:${port}`
    const browser = new Browser(server.url)
    const email = `drain.${Date.now()}@example.com`
    const account = { email, password: "correct horse battery", accountType: "personal", firstName: "Ada", lastName: "Lovelace" }
    expect((await browser.request("POST", "/api/auth/register", { json: account, headers: { origin } })).status).toBe(201)
    expect((await browser.request("POST", "/api/auth/login", { json: { email, password: account.password }, headers: { origin } })).status).toBe(200)
    await fillBillingProfile(browser, origin)
    const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7uLQ2QJEVpMZ8wYJfEq1v7rJ9l3cQxYwZ0Yt3JmK4N ada@example.com"
    const placed = await browser.request("POST", "/api/orders", {
      json: { planId: "vps-s", expressStartConsent: true, options: { templateId: "debian-12", hostname: "drain-1", sshPublicKey: key } },
      headers: { origin }
    })
    expect(placed.status, placed.text).toBe(201)
    let order = (placed.body as { order: OrderBody }).order
    await paid(order)
    for (const until = Date.now() + 60_000; order.status !== "completed" && Date.now() < until; await sleep(100)) {
      order = (await browser.get(`/api/orders/${order.id}`)).body as OrderBody
    }
    expect(order.status).toBe("completed")

    const consoleSession = await openConsole(server.url, order.serviceId ?? "", `zh_token=${browser.cookies.get("zh_token") ?? ""}`, origin)
    const slow = slowRegistration(port, origin, `slow.${Date.now()}@example.com`)
    // The headers and half the body are on their way: let the server take the request in before the signal.
    await sleep(500)
    const signalled = Date.now()
    server.process.kill("SIGTERM")

    const closed = await Promise.race([consoleSession.closed, sleep(5_000).then(() => undefined)])
    expect(closed, "the console was still open 5 s after SIGTERM").toBeDefined()
    await annotate(`console closed ${closed!.at - signalled} ms after SIGTERM with code ${closed!.code}`)
    expect(closed!.code).toBe(1001)
    expect(await connects(port)).toBe("ECONNREFUSED")
    expect(server.process.exitCode).toBeNull()

    slow.finish()
    const answer = await slow.answer
    expect([answer.status, answer.connection], answer.body).toEqual([201, "close"])
    const exit = await exitOf(server, 20_000)
    await annotate(`exited ${Date.now() - signalled} ms after SIGTERM: ${JSON.stringify(exit)}`)
    expect(exit, server.stderr()).toEqual({ code: 0, signal: null })
    expect(Date.now() - signalled).toBeLessThan(8_000)
    // The embedded database was closed: no endpoint left for the CLI to find.
    await expect(stat(join(dataDir, "pglite.endpoint"))).rejects.toThrow()
  }, 240_000)
})
