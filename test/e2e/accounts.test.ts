// The account system over HTTP: a real server on a loopback socket, a real database, the sandbox registry.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser, jwtClaims, parseSetCookie } from "../support/browser.ts"
import { startTestServer } from "../support/testServer.ts"
import { SandboxSirets } from "../support/sandboxRegistries.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

let seq = 0
const email = (label: string) => `${label}.${++seq}.${Date.now()}@example.com`
const personal = (address: string, extra: Record<string, unknown> = {}) => ({
  email: address,
  password: "correct horse battery",
  accountType: "personal",
  firstName: "Ada",
  lastName: "Lovelace",
  ...extra
})
const professional = (address: string, siret: string) =>
  personal(address, { accountType: "professional", siret })
const errorCode = (body: unknown) => (body as { error: { code: string; message: string } }).error.code

const signedIn = async (extra: { rememberMe?: boolean } = {}) => {
  const browser = new Browser(server.url)
  const address = email("user")
  expect((await browser.post("/api/auth/register", personal(address))).status).toBe(201)
  const login = await browser.post("/api/auth/login", { email: address, password: "correct horse battery", ...extra })
  expect(login.status).toBe(200)
  return { browser, address, login }
}

describe("registration", () => {
  it("registers a personal account and answers the public view of the user", async () => {
    const address = email("Personal")
    const reply = await new Browser(server.url).post("/api/auth/register", personal(address.toUpperCase(), { language: "en" }))
    expect(reply.status).toBe(201)
    const user = (reply.body as { user: Record<string, unknown> }).user
    expect(user).toMatchObject({ email: address.toLowerCase(), accountType: "personal", firstName: "Ada", language: "en", role: "customer" })
    expect(Object.keys(user).sort()).toEqual(["accountType", "createdAt", "email", "firstName", "id", "language", "lastName", "role"])
    expect(reply.text).not.toContain("correct horse")
    expect(reply.text).not.toContain("$2")
  })

  it("refuses a second account for the same e-mail in another case with 409", async () => {
    const address = email("dup")
    const browser = new Browser(server.url)
    expect((await browser.post("/api/auth/register", personal(address))).status).toBe(201)
    const again = await browser.post("/api/auth/register", personal(address.toUpperCase()))
    expect(again.status).toBe(409)
    expect(errorCode(again.body)).toBe("EMAIL_TAKEN")
  })

  it("registers a professional account whose SIRET the registry calls active, keeping the company name", async () => {
    const reply = await new Browser(server.url).post("/api/auth/register", professional(email("pro"), "552 081 317 66.522"))
    expect(reply.status).toBe(201)
    expect(reply.body).toMatchObject({ user: { siret: SandboxSirets.edf, companyName: "ELECTRICITE DE FRANCE" } })
  })

  it("does not store the name of a partially diffusible company", async () => {
    const reply = await new Browser(server.url).post("/api/auth/register", professional(email("pd"), SandboxSirets.partiallyDiffusible))
    expect(reply.status).toBe(201)
    expect((reply.body as { user: Record<string, unknown> }).user["companyName"]).toBeUndefined()
  })

  it.each([
    ["a closed establishment", SandboxSirets.closed, 422, "SIRET_CLOSED"],
    ["an unknown SIRET", SandboxSirets.unknown, 422, "SIRET_UNKNOWN"],
    ["a bad checksum", "55208131766523", 422, "SIRET_CHECKSUM"],
    ["a bad format", "5520813176", 422, "SIRET_FORMAT"],
    ["a registry that is down", SandboxSirets.registryDown, 503, "REGISTRY_UNAVAILABLE"],
    ["a registry that throttles", SandboxSirets.registryThrottled, 503, "REGISTRY_THROTTLED"]
  ])("refuses %s with its own status and code, and stores nothing", async (_label, siret, status, code) => {
    const address = email("refused")
    const browser = new Browser(server.url)
    const reply = await browser.post("/api/auth/register", professional(address, siret))
    expect(reply.status).toBe(status)
    expect(errorCode(reply.body)).toBe(code)
    // Nothing was stored: the same address can still register.
    expect((await browser.post("/api/auth/register", personal(address))).status).toBe(201)
  })

  it("requires a SIRET for a professional account", async () => {
    const reply = await new Browser(server.url).post("/api/auth/register", personal(email("nosiret"), { accountType: "professional" }))
    expect(reply.status).toBe(422)
    expect(errorCode(reply.body)).toBe("SIRET_REQUIRED")
  })

  it.each([
    ["7 bytes", "1234567", "PASSWORD_TOO_SHORT"],
    ["73 bytes of UTF-8 (25 characters)", "€".repeat(24) + "x", "PASSWORD_TOO_LONG"]
  ])("refuses a password of %s", async (_label, password, code) => {
    const reply = await new Browser(server.url).post("/api/auth/register", personal(email("pw"), { password }))
    expect(reply.status).toBe(422)
    expect(errorCode(reply.body)).toBe(code)
  })

  it("refuses a body that does not match the schema with 400 and the field at fault", async () => {
    const reply = await new Browser(server.url).post("/api/auth/register", { ...personal(email("bad")), accountType: "company" })
    expect(reply.status).toBe(400)
    expect(errorCode(reply.body)).toBe("INVALID_REQUEST")
    expect((reply.body as { error: { message: string } }).error.message).toContain("accountType")
  })
})

describe("login and the session cookie", () => {
  it("a remember-me login sets a persistent HttpOnly, SameSite=Lax cookie for 12 hours", async () => {
    const { login } = await signedIn({ rememberMe: true })
    const cookie = parseSetCookie(login.setCookies.find((c) => c.startsWith("zh_token="))!)
    expect(cookie.attributes.get("max-age")).toBe(String(12 * 3600))
    expect(cookie.attributes.has("httponly")).toBe(true)
    expect(cookie.attributes.get("samesite")?.toLowerCase()).toBe("lax")
    expect(cookie.attributes.get("path")).toBe("/")
    expect(cookie.attributes.has("secure")).toBe(false)
    const claims = jwtClaims(cookie.value)
    expect(Number(claims["exp"]) - Number(claims["iat"])).toBe(12 * 3600)
  })

  it("a login without remember-me sets a browser-session cookie whose token lives for the idle lifetime", async () => {
    const { login } = await signedIn()
    const cookie = parseSetCookie(login.setCookies.find((c) => c.startsWith("zh_token="))!)
    expect(cookie.attributes.has("max-age")).toBe(false)
    expect(cookie.attributes.has("expires")).toBe(false)
    const claims = jwtClaims(cookie.value)
    expect(Number(claims["exp"]) - Number(claims["iat"])).toBe(2 * 3600)
  })

  it("a wrong password and an unknown e-mail get the same 401", async () => {
    const { address } = await signedIn()
    const browser = new Browser(server.url)
    const wrong = await browser.post("/api/auth/login", { email: address, password: "wrong password!", rememberMe: false })
    const unknown = await browser.post("/api/auth/login", { email: email("ghost"), password: "wrong password!", rememberMe: false })
    expect([wrong.status, unknown.status]).toEqual([401, 401])
    expect(wrong.text).toBe(unknown.text)
    expect(wrong.setCookies).toEqual([])
  })

  it("GET /api/auth/me answers the user and slides the session with a fresh cookie", async () => {
    const { browser, address } = await signedIn()
    const before = jwtClaims(browser.cookies.get("zh_token")!)
    await new Promise((r) => setTimeout(r, 1100))
    const me = await browser.get("/api/auth/me")
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ user: { email: address } })
    const after = jwtClaims(browser.cookies.get("zh_token")!)
    expect(Number(after["exp"])).toBeGreaterThan(Number(before["exp"]))
    expect(after["sat"]).toBe(before["sat"])
  })

  it("an authenticated route without a valid cookie answers 401", async () => {
    const browser = new Browser(server.url)
    expect((await browser.get("/api/auth/me")).status).toBe(401)
    browser.cookies.set("zh_token", "not.a.jwt")
    const reply = await browser.get("/api/auth/me")
    expect(reply.status).toBe(401)
    expect(errorCode(reply.body)).toBe("UNAUTHENTICATED")
  })

  it("a token signed with another algorithm or key is refused", async () => {
    const { browser } = await signedIn()
    const [, payload] = browser.cookies.get("zh_token")!.split(".")
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`
    browser.cookies.set("zh_token", none)
    expect((await browser.get("/api/auth/me")).status).toBe(401)
  })

  it("logout expires the cookie", async () => {
    const { browser } = await signedIn()
    const reply = await browser.post("/api/auth/logout")
    expect(reply.status).toBe(204)
    const cookie = parseSetCookie(reply.setCookies.find((c) => c.startsWith("zh_token="))!)
    expect(cookie.attributes.get("max-age")).toBe("0")
    expect((await browser.get("/api/auth/me")).status).toBe(401)
  })

  it("logout-all revokes every session of the user, including copies of the token", async () => {
    const { browser } = await signedIn()
    const other = new Browser(server.url)
    other.cookies.set("zh_token", browser.cookies.get("zh_token")!)
    expect((await browser.post("/api/auth/logout-all")).status).toBe(204)
    const reply = await other.get("/api/auth/me")
    expect(reply.status).toBe(401)
    expect(errorCode(reply.body)).toBe("UNAUTHENTICATED")
  })

  it("throttles an account after repeated failures with 429 and Retry-After, even for the right password", async () => {
    const { address } = await signedIn()
    const browser = new Browser(server.url)
    for (let i = 0; i < 5; i++) {
      expect((await browser.post("/api/auth/login", { email: address, password: `wrong ${i} password` })).status).toBe(401)
    }
    const throttled = await browser.post("/api/auth/login", { email: address, password: "correct horse battery" })
    expect(throttled.status).toBe(429)
    expect(errorCode(throttled.body)).toBe("LOGIN_THROTTLED")
    const retryAfter = Number(throttled.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(15 * 60)
  })
})

describe("forgot and reset password", () => {
  it("answers 202 with the same body whether or not the account exists", async () => {
    const { address } = await signedIn()
    const browser = new Browser(server.url)
    const known = await browser.post("/api/auth/forgot-password", { email: address })
    const unknown = await browser.post("/api/auth/forgot-password", { email: email("nobody") })
    expect([known.status, unknown.status]).toEqual([202, 202])
    expect(known.text).toBe(unknown.text)
  })

  it("resets through the mailed token once; old sessions end; the token cannot be reused", async () => {
    const { browser, address } = await signedIn()
    await browser.post("/api/auth/forgot-password", { email: address })
    const mail = await waitFor(async () => (await server.outbox()).find((m) => m.to === address))
    const token = /reset-password\?token=([0-9a-f]{64})/.exec(mail.text)?.[1]
    expect(token).toBeDefined()
    expect(mail.html).toContain(`http://panel.test/reset-password?token=${token}`)
    const anonymous = new Browser(server.url)
    expect((await anonymous.post("/api/auth/reset-password", { token, password: "a brand new secret" })).status).toBe(204)
    expect((await browser.get("/api/auth/me")).status).toBe(401)
    expect((await anonymous.post("/api/auth/login", { email: address, password: "a brand new secret" })).status).toBe(200)
    expect((await anonymous.post("/api/auth/login", { email: address, password: "correct horse battery" })).status).toBe(401)
    const reused = await anonymous.post("/api/auth/reset-password", { token, password: "yet another secret" })
    expect(reused.status).toBe(400)
    expect(errorCode(reused.body)).toBe("RESET_TOKEN_USED")
  })

  it("refuses an unknown token with 400 and its own code", async () => {
    const reply = await new Browser(server.url).post("/api/auth/reset-password", { token: "ab".repeat(32), password: "whatever long" })
    expect(reply.status).toBe(400)
    expect(errorCode(reply.body)).toBe("RESET_TOKEN_INVALID")
  })
})

describe("preferences", () => {
  it("stores theme, professional theme and language as the functional cookies", async () => {
    const browser = new Browser(server.url)
    const reply = await browser.put("/api/preferences", { theme: "dark", proTheme: "light", language: "en" })
    expect(reply.status).toBe(204)
    const cookies = new Map(reply.setCookies.map((c) => [parseSetCookie(c).name, parseSetCookie(c)]))
    expect([...cookies.keys()].sort()).toEqual(["zh_lang", "zh_pro_theme", "zh_theme"])
    expect(cookies.get("zh_theme")?.value).toBe("dark")
    expect(cookies.get("zh_pro_theme")?.value).toBe("light")
    expect(cookies.get("zh_lang")?.value).toBe("en")
    expect(cookies.get("zh_theme")?.attributes.get("samesite")?.toLowerCase()).toBe("lax")
  })

  it("changes a signed-in user's language, which the e-mails follow", async () => {
    const { browser } = await signedIn()
    expect((await browser.get("/api/auth/me")).body).toMatchObject({ user: { language: "fr" } })
    expect((await browser.put("/api/preferences", { language: "en" })).status).toBe(204)
    expect((await browser.get("/api/auth/me")).body).toMatchObject({ user: { language: "en" } })
  })

  it("refuses an unknown theme with 400", async () => {
    const reply = await new Browser(server.url).put("/api/preferences", { theme: "purple" })
    expect(reply.status).toBe(400)
    expect(errorCode(reply.body)).toBe("INVALID_REQUEST")
    expect(reply.setCookies).toEqual([])
  })
})

describe("the HTTP edge", () => {
  it("answers malformed JSON with 400 MALFORMED_JSON", async () => {
    const reply = await new Browser(server.url).request("POST", "/api/auth/login", {
      body: "{\"email\": ",
      headers: { "content-type": "application/json" }
    })
    expect(reply.status).toBe(400)
    expect(errorCode(reply.body)).toBe("MALFORMED_JSON")
  })

  it("answers a body over the limit with 413, declared or streamed", async () => {
    const big = JSON.stringify({ email: "x".repeat(100 * 1024), password: "p" })
    const declared = await new Browser(server.url).request("POST", "/api/auth/login", {
      body: big,
      headers: { "content-type": "application/json" }
    })
    expect(declared.status).toBe(413)
    expect(errorCode(declared.body)).toBe("PAYLOAD_TOO_LARGE")
    const streamed = await fetch(`${server.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big))
          controller.close()
        }
      }),
      duplex: "half"
    } as RequestInit)
    expect(streamed.status).toBe(413)
  })

  it("answers an unknown route with the JSON 404 envelope", async () => {
    const reply = await new Browser(server.url).get("/api/nothing-here")
    expect(reply.status).toBe(404)
    expect(errorCode(reply.body)).toBe("NOT_FOUND")
  })

  it("answers a non-JSON body with 415 in the envelope", async () => {
    const reply = await new Browser(server.url).request("POST", "/api/auth/login", {
      body: "email=a",
      headers: { "content-type": "text/plain" }
    })
    expect(reply.status).toBe(415)
    expect(errorCode(reply.body)).toBe("UNSUPPORTED_MEDIA_TYPE")
  })

  it("serves liveness, readiness, the OpenAPI document and the reference page", async () => {
    const browser = new Browser(server.url)
    expect((await browser.get("/healthz")).body).toEqual({ status: "ok" })
    expect((await browser.get("/readyz")).body).toEqual({ status: "ready" })
    const openapi = (await browser.get("/openapi.json")).body as { paths: Record<string, unknown> }
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining([
      "/api/auth/register",
      "/api/auth/login",
      "/api/auth/me",
      "/api/preferences"
    ]))
    const docs = await browser.get("/docs")
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toContain("text/html")
    // The Scalar bundle is inlined: no script, style or font is fetched from elsewhere.
    expect(docs.text).not.toMatch(/<script[^>]+src=["']?https?:/)
    expect(docs.text).not.toMatch(/<link[^>]+href=["']?https?:/)
    expect(docs.text).toMatch(/"withDefaultFonts":\s*false/)
  })
})

describe("in production", () => {
  let production: Awaited<ReturnType<typeof startTestServer>>
  beforeAll(async () => {
    production = await startTestServer({ production: true, nodeEnv: "production" })
  })
  afterAll(() => production.stop())

  it("marks the session cookie Secure", async () => {
    const browser = new Browser(production.url)
    const address = email("prod")
    await browser.post("/api/auth/register", personal(address))
    const login = await browser.post("/api/auth/login", { email: address, password: "correct horse battery" })
    expect(parseSetCookie(login.setCookies[0]!).attributes.has("secure")).toBe(true)
  })
})

async function waitFor<A>(probe: () => Promise<A | undefined>, timeoutMs = 5000): Promise<A> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error("timed out waiting")
    await new Promise((r) => setTimeout(r, 50))
  }
}
