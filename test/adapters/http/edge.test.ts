// The HTTP edge's answers to what no route handled: an unexpected defect is a 500 logged on one line (no pretty-printed
// cause, no body, no query), a database that does not answer is a 503 with Retry-After, a lost unique constraint a
// 409, and any error a route answers without JSON gets the envelope.
import { Effect, Layer, Logger } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SqlError } from "effect/sql"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { edgeMiddleware } from "../../../adapters/http/edge.ts"

const logged: Array<{ readonly level: string; readonly text: string }> = []
const capture = Logger.make(({ logLevel, message }) => {
  logged.push({ level: logLevel, text: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
})

const sqlDefect = (reason: SqlError.SqlError["reason"]) => Effect.die(new SqlError.SqlError({ reason }))

const app = HttpRouter.toWebHandler(
  Layer.mergeAll(
    HttpRouter.add("POST", "/boom", Effect.die(new Error("the handler broke"))),
    HttpRouter.add("GET", "/db-down", sqlDefect(new SqlError.ConnectionError({ cause: new Error("connect ECONNREFUSED"), message: "PgConnection: connect failed" }))),
    HttpRouter.add("GET", "/db-lost", sqlDefect(new SqlError.UniqueViolation({ cause: new Error("duplicate key"), constraint: "users_email_key" }))),
    HttpRouter.add("GET", "/db-bug", sqlDefect(new SqlError.SqlSyntaxError({ cause: new Error("syntax error at or near"), message: "syntax" }))),
    HttpRouter.add("POST", "/echo", Effect.flatMap(HttpServerRequest.HttpServerRequest, (r) => Effect.map(r.text, (t) => HttpServerResponse.text(t)))),
    HttpRouter.add("GET", "/teapot", Effect.succeed(HttpServerResponse.text("short and stout", { status: 418 }))),
    HttpRouter.add("GET", "/page", Effect.succeed(HttpServerResponse.text("<h1>Not built</h1>", { status: 503, contentType: "text/html" }))),
    edgeMiddleware({ secureCookies: false, trustProxy: false, maxBodyBytes: 1024 }),
    Logger.layer([capture])
  ).pipe(Layer.provide(HttpServer.layerServices)),
  { disableLogger: true }
)

afterAll(() => app.dispose())
beforeEach(() => {
  logged.length = 0
})

const call = (method: string, path: string, body?: string) =>
  app.handler(new Request(`http://panel.test${path}`, { method, ...(body === undefined ? {} : { body }) }))

describe("the HTTP edge", () => {
  it("answers an unexpected defect 500 in the envelope and logs it on one line, without the body or the query", async () => {
    const reply = await call("POST", "/boom?token=secret-in-query", "secret-in-body")
    expect(reply.status).toBe(500)
    expect(await reply.json()).toEqual({
      error: { code: "INTERNAL_ERROR", message: "Something went wrong on our side; it has been logged." }
    })
    expect(logged).toHaveLength(1)
    const [entry] = logged
    expect(entry?.level).toBe("Error")
    expect(entry?.text).not.toContain("\n")
    expect(entry?.text).toContain("POST /boom: Error: the handler broke")
    // Enough to find it: the first frames of the stack.
    expect(entry?.text).toMatch(/\| at .*edge\.test\.ts/)
    expect(entry?.text).not.toContain("secret-in")
  })

  it("answers a database that does not answer 503 DATABASE_UNREACHABLE with Retry-After, logged once as a warning", async () => {
    const reply = await call("GET", "/db-down")
    expect(reply.status).toBe(503)
    expect(reply.headers.get("retry-after")).toBe("5")
    expect((await reply.json()).error.code).toBe("DATABASE_UNREACHABLE")
    expect(logged.map((l) => l.level)).toEqual(["Warn"])
  })

  it("answers a unique constraint lost to a concurrent request 409 CONFLICT", async () => {
    const reply = await call("GET", "/db-lost")
    expect(reply.status).toBe(409)
    expect((await reply.json()).error.code).toBe("CONFLICT")
  })

  it("still answers any other database error 500: a query the database refuses is our bug", async () => {
    const reply = await call("GET", "/db-bug")
    expect(reply.status).toBe(500)
    expect(logged.map((l) => l.level)).toEqual(["Error"])
  })

  it("puts any error answered without JSON in the envelope, with a code named after its status", async () => {
    const reply = await call("GET", "/teapot")
    expect(reply.status).toBe(418)
    expect(reply.headers.get("content-type")).toContain("application/json")
    expect((await reply.json()).error.code).toBe("I_M_A_TEAPOT")
  })

  it("leaves a page meant for a browser as it is", async () => {
    const reply = await call("GET", "/page")
    expect(reply.status).toBe(503)
    expect(await reply.text()).toBe("<h1>Not built</h1>")
  })

  it("answers an unknown route 404 and a body read past the limit 413, in the envelope", async () => {
    const missing = await call("GET", "/nothing")
    expect(missing.status).toBe(404)
    expect((await missing.json()).error.code).toBe("NOT_FOUND")
    expect(await (await call("POST", "/echo", "x".repeat(1024))).text()).toBe("x".repeat(1024))
    const large = await call("POST", "/echo", "x".repeat(1025))
    expect(large.status).toBe(413)
    expect((await large.json()).error.code).toBe("PAYLOAD_TOO_LARGE")
  })
})
