// A database that does not answer (issue 10 §3): the server, on a database reached through a TCP proxy the test
// controls, answers 503 DATABASE_UNREACHABLE with Retry-After within its bounded connect timeout while the proxy is
// cut — whether connections are refused or left hanging — says so on /readyz, and answers 200 again by itself once
// the database is back, without a restart. A real PostgreSQL (TEST_DATABASE_URL, as in CI), else the embedded one
// served on its socket.
import { ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { errorOf, send } from "../support/fuzz.ts"
import { proxiedDatabase, type ProxiedDatabase } from "../support/proxiedDatabase.ts"
import type { Cut } from "../support/tcpProxy.ts"
import { testServerLayer, testSettings, TestServer } from "../support/testServer.ts"
import { PANEL_ORIGIN, sleep } from "../support/vpsHttp.ts"

/**
 * DATABASE_CONNECT_TIMEOUT_MS: how long opening a connection may take before the request gives up. The workflow
 * engine's locks are confirmed every second (10 s by default on this wiring): its stop, after the outages, waits out
 * one lock deadline on the connection an outage broke.
 */
const settings = testSettings({ databaseConnectTimeoutMs: 1000, workflowLockRefreshSeconds: 1 })
/**
 * What a request may take while the database is away: the connect timeout (twice: the pool's slots are shared with the
 * workflow engine's own attempts) and some room for a loaded machine.
 */
const BOUND_MS = 2 * settings.databaseConnectTimeoutMs + 3000

let database: ProxiedDatabase
let runtime: ManagedRuntime.ManagedRuntime<TestServer, unknown>
let url: string
let cookie: string
let email: string
const PASSWORD = "correct horse battery"

beforeAll(async () => {
  database = await proxiedDatabase()
  runtime = ManagedRuntime.make(testServerLayer(settings, database.layer(`${settings.databaseConnectTimeoutMs} millis`)))
  url = (await runtime.runPromise(TestServer)).url
  email = `dbdown.${randomUUID()}@example.com`
  const json = { origin: PANEL_ORIGIN, "content-type": "application/json" }
  const registered = await send(url, {
    method: "POST",
    path: "/api/auth/register",
    headers: json,
    body: JSON.stringify({ email, password: PASSWORD, accountType: "personal", firstName: "Ada", lastName: "Lovelace" })
  })
  expect(registered.status, registered.text).toBe(201)
  const login = await send(url, { method: "POST", path: "/api/auth/login", headers: json, body: JSON.stringify({ email, password: PASSWORD }) })
  cookie = [login.headers["set-cookie"] ?? []].flat().find((c) => c.startsWith("zh_token="))!.split(";")[0]!
}, 60_000)

afterAll(async () => {
  await runtime?.dispose()
  await database?.close()
})

const request = (method: string, path: string, body?: unknown) =>
  send(url, {
    method,
    path,
    headers: { origin: PANEL_ORIGIN, cookie, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    timeoutMs: 20_000
  })
const get = (path: string) => request("GET", path)

/** What a customer does, reading and writing: every one needs the database. */
const visits = (): ReadonlyArray<readonly [method: string, path: string, body?: unknown]> => [
  ["GET", "/api/auth/me"],
  ["GET", "/api/plans"],
  ["GET", "/api/subscriptions"],
  ["GET", "/api/vps"],
  ["POST", "/api/auth/login", { email, password: PASSWORD }],
  ["PUT", "/api/preferences", { language: "en" }]
]

/** Polls `path` until it answers `status`, within `ms`. */
const until = async (path: string, status: number, ms: number) => {
  const deadline = Date.now() + ms
  for (;;) {
    const reply = await get(path)
    if (reply.status === status) return reply
    if (Date.now() > deadline) throw new Error(`${path} still answers ${reply.status} after ${ms} ms: ${reply.text}`)
    await sleep(100)
  }
}

describe.each<Cut>(["refuse", "blackhole"])("the database cut (%s)", (how) => {
  it("answers 503 DATABASE_UNREACHABLE with Retry-After within the connect timeout, and 200 again once it is back", async () => {
    expect((await get("/api/auth/me")).status).toBe(200)
    database.proxy.cut(how)
    await until("/readyz", 503, BOUND_MS * 2)
    // The session cache keeps a user for a second: past it, every route needs the database.
    await sleep(1100)
    for (const [method, path, body] of visits()) {
      const started = Date.now()
      const reply = await request(method, path, body)
      const ms = Date.now() - started
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(503)
      expect(errorOf(reply)?.code, path).toBe("DATABASE_UNREACHABLE")
      expect(reply.headers["retry-after"], path).toBe("5")
      expect(ms, path).toBeLessThan(BOUND_MS)
    }
    expect((await get("/healthz")).status).toBe(200)

    database.proxy.restore()
    await until("/readyz", 200, 15_000)
    for (const [method, path, body] of visits()) {
      if (method === "GET") await until(path, 200, 10_000)
      else expect((await request(method, path, body)).status, `${method} ${path}`).toBeLessThan(300)
    }
  }, 60_000)
})
