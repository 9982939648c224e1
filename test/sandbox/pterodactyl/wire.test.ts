// Specification of the sandbox panel's wire (reference/pterodactyl.md §1): Bearer keys and their prefixes, the
// mandatory Accept header, error and list envelopes, absolute pagination links, rate limits and injected failures.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { Schema } from "effect"
import { api, call, clients, type Sandbox, startSandbox } from "./pteroHttp.ts"
import { Allocation, Egg, EggWithVariables, errorsOf, itemOf, Node, pageOf, read } from "./shapes.ts"

let sandbox: Sandbox
let app: ReturnType<typeof clients>["app"]
let client: ReturnType<typeof clients>["client"]

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimits: { application: 1000, client: 1000 } })
  ;({ app, client } = clients(sandbox))
})
afterEach(() => sandbox.control.clearFaults())
afterAll(() => sandbox.close())

describe("authentication", () => {
  it("refuses an unknown key with 401 AuthenticationException", async () => {
    const res = await api(`${sandbox.url}/api/application`, `ptla_${"x".repeat(43)}`).get("/nodes")
    expect(res.status).toBe(401)
    expect(res.json).toEqual({ errors: [{ code: "AuthenticationException", status: "401", detail: "Unauthenticated." }] })
  })

  it("redirects to /auth/login instead of a JSON 401 when Accept is not JSON", async () => {
    const res = await call(`${sandbox.url}/api/application/nodes`, { headers: { Authorization: "Bearer nope" } })
    expect(res.status).toBe(302)
    expect(res.headers.get("location")).toBe(`${sandbox.url}/auth/login`)
  })

  it("treats a +json vendor Accept type as JSON", async () => {
    const res = await api(`${sandbox.url}/api/application`, sandbox.applicationKey).get("/nodes", { Accept: "Application/vnd.pterodactyl.v1+json" })
    expect(res.status).toBe(200)
  })

  it("answers 403 to an application key on a client route", async () => {
    const res = await api(`${sandbox.url}/api/client`, sandbox.applicationKey).get("")
    expect(res.status).toBe(403)
    expect(errorsOf(res.json)[0].detail).toBe("You are attempting to use an application API key on an endpoint that requires a client API key.")
  })

  it("lets the root admin's client key use the Application API", async () => {
    expect((await api(`${sandbox.url}/api/application`, sandbox.clientKey).get("/nodes/1")).status).toBe(200)
  })
})

describe("envelopes", () => {
  it("wraps an item with object and attributes, and 404s with the error envelope", async () => {
    const node = itemOf(Node)((await app.get("/nodes/1")).json)
    expect(node.object).toBe("node")
    expect(node.attributes).toMatchObject({ id: 1, name: "node-1", fqdn: "127.0.0.1", scheme: "http", memory: 16384, upload_size: 100 })
    expect(node.attributes.daemon_listen).toBe(Number(new URL(sandbox.nodeUrl).port))
    expect(node.attributes.allocated_resources).toEqual({ memory: 0, disk: 0 })
    const missing = await app.get("/nodes/99")
    expect(missing.status).toBe(404)
    expect(errorsOf(missing.json)[0]).toMatchObject({ code: "NotFoundHttpException", status: "404" })
  })

  it("paginates lists with meta.pagination and an absolute links.next on the panel host", async () => {
    const res = pageOf(Allocation)((await app.get("/nodes/1/allocations?per_page=4&filter[server_id]=false")).json)
    expect(res.object).toBe("list")
    expect(res.data).toHaveLength(4)
    expect(res.data[0]).toEqual({ object: "allocation", attributes: { id: 1, ip: "127.0.0.1", alias: null, port: 25565, notes: null, assigned: false } })
    const { pagination } = res.meta
    expect(pagination).toMatchObject({ total: 10, count: 4, per_page: 4, current_page: 1, total_pages: 3 })
    expect(pagination.links.next).toMatch(new RegExp(`^${sandbox.url}/api/application/nodes/1/allocations\\?`))
    const link = read(Schema.String)(pagination.links.next)
    const next = pageOf(Allocation)((await app.get(new URL(link).pathname.replace("/api/application", "") + new URL(link).search)).json)
    expect(next.meta.pagination.current_page).toBe(2)
    expect(next.meta.pagination.links.previous).toBeDefined()
  })

  it("rejects malformed JSON with 400 before validation", async () => {
    const res = await app.post("/servers", "{not json")
    expect(res.status).toBe(400)
    expect(errorsOf(res.json)[0].detail).toMatch(/^The JSON data passed in the request appears to be malformed/)
  })

  it("serves the egg with its variables and the object shape of docker_images; the old list shape on egg 6", async () => {
    const paper = itemOf(EggWithVariables)((await app.get("/nests/1/eggs/5?include=variables")).json)
    expect(paper.attributes.docker_images).toEqual({ "Java 17": "ghcr.io/pterodactyl/yolks:java_17", "Java 21": "ghcr.io/pterodactyl/yolks:java_21" })
    const vars = paper.attributes.relationships.variables.data.map((v) => v.attributes)
    expect(vars.map((v) => [v.env_variable, v.default_value, v.user_editable])).toEqual([
      ["SERVER_JARFILE", "server.jar", true],
      ["MINECRAFT_VERSION", "latest", true],
      ["BUILD_NUMBER", "latest", false]
    ])
    const bedrock = itemOf(Egg)((await app.get("/nests/2/eggs/6")).json)
    expect(bedrock.attributes.docker_images).toEqual(["ghcr.io/pterodactyl/yolks:debian"])
    expect((await app.get("/nests/1/eggs/6")).status).toBe(404)
  })
})

describe("rate limits", () => {
  it("count per minute per user and answer 429 with Retry-After past the limit", async () => {
    const small = await startSandbox({ rateLimits: { application: 3, client: 5 } })
    try {
      const a = clients(small).app
      const first = await a.get("/nodes")
      expect(first.headers.get("x-ratelimit-limit")).toBe("3")
      expect(first.headers.get("x-ratelimit-remaining")).toBe("2")
      await a.get("/nodes")
      await a.get("/nodes")
      const over = await a.get("/nodes")
      expect(over.status).toBe(429)
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(over.json).toEqual({ errors: [{ code: "ThrottleRequestsException", status: "429", detail: "Too Many Attempts." }] })
      // The client API has its own bucket.
      expect((await clients(small).client.get("")).status).toBe(200)
    } finally {
      await small.close()
    }
  })

  it("throttleNext forces 429s with the given Retry-After", async () => {
    sandbox.control.throttleNext({ times: 2, retryAfterSeconds: 7 })
    const a = await app.get("/nodes")
    expect(a.status).toBe(429)
    expect(a.headers.get("retry-after")).toBe("7")
    expect((await client.get("")).status).toBe(429)
    expect((await app.get("/nodes")).status).toBe(200)
  })
})

describe("failNext", () => {
  it("answers the next matching panel requests with the status and error envelope", async () => {
    sandbox.control.failNext({ method: "GET", path: "/api/application/nodes", times: 2, status: 504 })
    const first = await app.get("/nodes")
    expect(first.status).toBe(504)
    expect(errorsOf(first.json)[0]).toMatchObject({ code: "DaemonConnectionException", status: "504" })
    expect((await app.get("/nodes/1")).status).toBe(504)
    expect((await app.get("/nodes")).status).toBe(200)
  })

  it("takes a RegExp, a code and a detail, and applies to Wings routes too", async () => {
    sandbox.control.failNext({ path: /\/users$/, times: 1, status: 500, code: "QueryException", detail: "boom" })
    expect(errorsOf((await app.get("/users")).json)).toEqual([{ code: "QueryException", status: "500", detail: "boom" }])
    sandbox.control.failNext({ path: "/download/", times: 1, status: 502 })
    expect((await call(`${sandbox.nodeUrl}/download/file?token=x`)).status).toBe(502)
  })
})

describe("request log", () => {
  it("records method, path, query and the headers that matter, never the key", async () => {
    await app.get("/users?filter[email]=zzz")
    const last = sandbox.control.requests().at(-1)
    expect(last).toMatchObject({
      target: "panel",
      method: "GET",
      path: "/api/application/users",
      query: { "filter[email]": "zzz" },
      accept: "application/json",
      authorization: true,
      origin: null
    })
    expect(JSON.stringify(sandbox.control.requests())).not.toContain(sandbox.applicationKey)
  })
})

describe("the request log", () => {
  it("keeps only the most recent requests when given a limit", async () => {
    const small = await startSandbox({ requestLogLimit: 10 })
    try {
      const panel = api(`${small.url}/api/application`, small.applicationKey)
      for (let i = 0; i < 40; i++) expect((await panel.get(`/nodes?page=${i + 1}`)).status).toBe(200)
      const kept = small.control.requests()
      expect(kept.length).toBeGreaterThanOrEqual(10)
      expect(kept.length).toBeLessThanOrEqual(11)
      expect(kept.at(-1)?.query).toEqual({ page: "40" })
    } finally {
      await small.close()
    }
  })
})
