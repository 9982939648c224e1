// The legal pages over HTTP (public, cacheable, 404 for an unknown page, both languages, sandbox placeholders) and
// the privacy page's cookie list: exactly the cookies the server sets, checked against real responses and the code.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { Effect } from "effect"
import { COOKIE_POLICY, PLATFORM_COOKIE_NAMES } from "../../adapters/http/cookies.ts"
import { LEGAL_CACHE_CONTROL } from "../../adapters/http/LegalRoutes.ts"
import { resolveLegalTexts } from "../../app/legalSettings.ts"
import { demoSeller } from "../../domain/billing/invoicing/Seller.ts"
import { Browser, parseSetCookie } from "../support/browser.ts"
import { legalDir } from "../support/invoicing.ts"
import { startTestServer } from "../support/testServer.ts"

type Server = Awaited<ReturnType<typeof startTestServer>>
let sandbox: Server
let operator: Server

beforeAll(async () => {
  sandbox = await startTestServer()
  const texts = await Effect.runPromise(resolveLegalTexts(legalDir, false, demoSeller))
  operator = await startTestServer({ legal: texts })
}, 120_000)

afterAll(async () => {
  await sandbox?.stop()
  await operator?.stop()
})

interface LegalPage {
  page: string
  language: string
  title: string
  body: string
  updatedAt: string | null
  placeholder: boolean
  mediator: { name: string; url: string }
  cookies: Array<{ name: string; setBy: string; purpose: string; lifetime: string }>
}

describe("GET /api/legal/:page", () => {
  it("serves the operator's text to anyone (no session), cacheable, in French by default and in English on ?lang=en", async () => {
    const anonymous = new Browser(operator.url)
    const fr = await anonymous.get("/api/legal/terms")
    expect(fr.status).toBe(200)
    expect(fr.headers.get("cache-control")).toBe(LEGAL_CACHE_CONTROL)
    expect(fr.setCookies).toEqual([])
    const frPage = fr.body as LegalPage
    expect(frPage).toMatchObject({ page: "terms", language: "fr", title: "Conditions générales de vente", placeholder: false, mediator: demoSeller.mediator })
    expect(frPage.body).toMatch(/^Article 1\. Les présentes conditions/)
    expect(frPage.updatedAt).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    const en = (await anonymous.get("/api/legal/notice?lang=en")).body as LegalPage
    expect([en.title, en.language]).toEqual(["Legal notice", "en"])
    expect(en.body).toContain("Publication director")
  })

  it("answers 404 LEGAL_PAGE_NOT_FOUND for an unknown page and 400 INVALID_LANGUAGE for another language", async () => {
    const anonymous = new Browser(operator.url)
    const unknown = await anonymous.get("/api/legal/cookies-secret")
    expect(unknown.status).toBe(404)
    expect((unknown.body as { error: { code: string } }).error.code).toBe("LEGAL_PAGE_NOT_FOUND")
    const german = await anonymous.get("/api/legal/terms?lang=de")
    expect(german.status).toBe(400)
    expect((german.body as { error: { code: string } }).error.code).toBe("INVALID_LANGUAGE")
  })

  it("is listed in /openapi.json with its parameters and its answer", async () => {
    const doc = (await new Browser(operator.url).get("/openapi.json")).body as {
      paths: Record<string, { get?: { parameters?: Array<{ name: string; in: string }>; responses?: Record<string, unknown> } }>
    }
    const operation = doc.paths["/api/legal/{page}"]?.get
    expect(operation?.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(expect.arrayContaining(["path:page", "query:lang"]))
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(["200", "400", "404"]))
  })

  it("sandbox mode without LEGAL_DIR serves placeholders that say so, with the demo mediator", async () => {
    const anonymous = new Browser(sandbox.url)
    for (const [page, lang, mark] of [["notice", "fr", "TEXTE PROVISOIRE"], ["privacy", "en", "PLACEHOLDER"]] as const) {
      const reply = await anonymous.get(`/api/legal/${page}?lang=${lang}`)
      expect(reply.status).toBe(200)
      const body = reply.body as LegalPage
      expect(body.placeholder).toBe(true)
      expect(body.body).toContain(mark)
      expect(body.updatedAt).toBeNull()
      expect(body.mediator).toEqual(demoSeller.mediator)
    }
  })

  it("the privacy page lists every cookie of the policy, in the page's language; the other pages list none", async () => {
    const anonymous = new Browser(operator.url)
    const fr = (await anonymous.get("/api/legal/privacy")).body as LegalPage
    expect(fr.cookies.map((c) => c.name)).toEqual(COOKIE_POLICY.map((c) => c.name))
    expect(fr.cookies[0]!.purpose).toBe(COOKIE_POLICY[0].purpose.fr)
    const en = (await anonymous.get("/api/legal/privacy?lang=en")).body as LegalPage
    expect(en.cookies[0]!.purpose).toBe(COOKIE_POLICY[0].purpose.en)
    expect(((await anonymous.get("/api/legal/terms")).body as LegalPage).cookies).toEqual([])
  })
})

describe("the cookie list is exactly what the server sets", () => {
  it("every cookie set while registering, signing in (with and without remember-me), choosing preferences and signing out is listed, and every listed one is set", async () => {
    const seen = new Set<string>()
    const browser = new Browser(sandbox.url)
    const record = <R extends { readonly setCookies: ReadonlyArray<string> }>(reply: R): R => {
      for (const header of reply.setCookies) seen.add(parseSetCookie(header).name)
      return reply
    }
    const email = `cookies.${Date.now()}@example.com`
    const password = "correct horse battery"
    record(await browser.post("/api/auth/register", { email, password, accountType: "personal", firstName: "Ada", lastName: "Lovelace" }))
    expect(record(await browser.post("/api/auth/login", { email, password })).status).toBe(200)
    expect(record(await browser.put("/api/preferences", { theme: "dark", proTheme: "light", language: "en" })).status).toBeLessThan(300)
    record(await browser.get("/api/auth/me"))
    record(await browser.post("/api/auth/logout", {}))
    expect(record(await browser.post("/api/auth/login", { email, password, rememberMe: true })).status).toBe(200)
    expect([...seen].filter((name) => !PLATFORM_COOKIE_NAMES.has(name))).toEqual([])
    expect([...PLATFORM_COOKIE_NAMES].filter((name) => !seen.has(name))).toEqual([])
  })

  it("no code but adapters/http/cookies.ts sets a cookie (server side or in the panel's script)", () => {
    const root = resolve(import.meta.dirname, "../..")
    const offenders: Array<string> = []
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        if (entry === "node_modules" || entry === "dist" || entry.startsWith(".")) continue
        const path = join(dir, entry)
        if (statSync(path).isDirectory()) walk(path)
        else if (/\.(ts|js)$/.test(entry) && relative(root, path) !== join("adapters", "http", "cookies.ts")) {
          const text = readFileSync(path, "utf8")
          if (/setCookies?\(|expireCookie\(|makeCookie\w*\(|document\.cookie\s*=|cookieStore\.set|setHeaders?\(\s*\S*\s*["']set-cookie["']|["']set-cookie["']\s*:/i.test(text)) {
            offenders.push(relative(root, path))
          }
        }
      }
    }
    for (const dir of ["adapters", "app", "domain", "ports"]) walk(join(root, dir))
    expect(offenders).toEqual([])
  })
})
