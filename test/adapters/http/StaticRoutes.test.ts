// The panel's static serving: content types and cache headers, the single-page fallback that leaves the server's
// own paths alone, no way out of the build folder, and the 503 page when the panel is not built.
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { fileFor, isServerPath, staticRoutes } from "../../../adapters/http/StaticRoutes.ts"

const root = mkdtempSync(join(tmpdir(), "zh-static-"))
const dist = join(root, "dist")
mkdirSync(join(dist, "assets"), { recursive: true })
writeFileSync(join(dist, "index.html"), "<!doctype html><title>panel</title>")
writeFileSync(join(dist, "assets", "index-abc123.js"), "console.log(1)")
writeFileSync(join(dist, "assets", "index-abc123.css"), "body{}")
writeFileSync(join(dist, "boot.js"), "void 0")
writeFileSync(join(dist, ".build-hash"), "secret-ish\n")
writeFileSync(join(root, "outside.txt"), "outside")

const app = (webRoot: string) =>
  HttpRouter.toWebHandler(
    Layer.mergeAll(
      staticRoutes({ root: webRoot }),
      HttpRouter.add("GET", "/healthz", Effect.succeed(HttpServerResponse.text("ok"))),
      HttpRouter.add("GET", "/api/plans", Effect.succeed(HttpServerResponse.text("plans")))
    ).pipe(Layer.provide(HttpServer.layerServices)),
    { disableLogger: true }
  )

const built = app(dist)
const missing = app(join(root, "not-built"))
const get = (handler: typeof built, path: string) => handler.handler(new Request(`http://panel.test${path}`))

afterAll(async () => {
  await built.dispose()
  await missing.dispose()
  rmSync(root, { recursive: true, force: true })
})

describe("StaticRoutes", () => {
  it("serves index.html for / with no-cache and the page's security headers", async () => {
    const reply = await get(built, "/")
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(reply.headers.get("cache-control")).toBe("no-cache")
    expect(reply.headers.get("content-security-policy")).toContain("default-src 'self'")
    expect(reply.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(await reply.text()).toContain("<title>panel</title>")
  })

  it("serves hashed assets with their type, cached for good", async () => {
    const js = await get(built, "/assets/index-abc123.js")
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(await js.text()).toBe("console.log(1)")
    const css = await get(built, "/assets/index-abc123.css")
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
  })

  it("revalidates files outside assets/ (not content-hashed)", async () => {
    const reply = await get(built, "/boot.js")
    expect(reply.status).toBe(200)
    expect(reply.headers.get("cache-control")).toBe("no-cache")
  })

  it("answers index.html for the panel's own paths (e-mailed links, deep links)", async () => {
    for (const path of ["/reset-password?token=abc", "/vps/123", "/game/g-1", "/login"]) {
      const reply = await get(built, path)
      expect(reply.status, path).toBe(200)
      expect(await reply.text(), path).toContain("<title>panel</title>")
    }
  })

  it("leaves the server's paths alone: their own routes answer, unknown ones are a 404, never the page", async () => {
    expect(await (await get(built, "/healthz")).text()).toBe("ok")
    expect(await (await get(built, "/api/plans")).text()).toBe("plans")
    for (const path of ["/api/nope", "/api", "/readyz/x", "/openapi.json", "/docs/x"]) {
      const reply = await get(built, path)
      expect(reply.status, path).toBe(404)
      expect(await reply.text(), path).not.toContain("<title>panel</title>")
    }
  })

  it("answers 404 for a missing asset instead of the page", async () => {
    expect((await get(built, "/assets/index-gone.js")).status).toBe(404)
    expect((await get(built, "/favicon.png")).status).toBe(404)
  })

  it("never serves a file outside the build, nor hidden files", async () => {
    for (const path of ["/..%2foutside.txt", "/assets/..%2f..%2foutside.txt", "/%2e%2e/outside.txt", "/.build-hash", "/assets%5c..%5c..%5coutside.txt"]) {
      const reply = await get(built, path)
      const text = await reply.text()
      expect(text, path).not.toContain("outside")
      expect(text, path).not.toContain("secret-ish")
    }
  })

  it("answers a clear 503 page when the panel is not built, and still 404 JSON paths", async () => {
    for (const path of ["/", "/reset-password?token=x"]) {
      const reply = await get(missing, path)
      expect(reply.status, path).toBe(503)
      expect(reply.headers.get("content-type")).toContain("text/html")
      expect(await reply.text()).toContain("npm run build:web")
    }
    expect((await get(missing, "/api/nope")).status).toBe(404)
  })
})

describe("fileFor / isServerPath", () => {
  it("resolves inside the root only", () => {
    expect(fileFor("/srv/dist", "/assets/a.js")).toBe("/srv/dist/assets/a.js")
    expect(fileFor("/srv/dist", "/../etc/passwd")).toBeUndefined()
    expect(fileFor("/srv/dist", "/a/%2e%2e/%2e%2e/x")).toBeUndefined()
    expect(fileFor("/srv/dist", "/%00")).toBeUndefined()
    expect(fileFor("/srv/dist", "/%E0%A4%A")).toBeUndefined()
    expect(fileFor("/srv/dist", "/.env")).toBeUndefined()
  })

  it("knows the server's paths", () => {
    expect(isServerPath("/api/vps")).toBe(true)
    expect(isServerPath("/api")).toBe(true)
    expect(isServerPath("/healthz")).toBe(true)
    expect(isServerPath("/openapi.json")).toBe(true)
    expect(isServerPath("/docs")).toBe(true)
    expect(isServerPath("/apix")).toBe(false)
    expect(isServerPath("/vps/1")).toBe(false)
    expect(isServerPath("/")).toBe(false)
  })
})
