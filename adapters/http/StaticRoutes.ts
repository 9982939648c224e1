// The user panel's built files (Vite's output), served by the API's own server: hashed assets cached for good,
// index.html revalidated on every load, and the single-page fallback: any other GET that is not the API, health,
// OpenAPI or docs gets index.html, so links such as /reset-password?token=… or /vps/… open the panel. A server
// started before the panel was built answers a plain 503 page saying how to build it.
import { Effect, Layer } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { readFile, stat } from "node:fs/promises"
import { extname, join, normalize, resolve, sep } from "node:path"
import { errorResponse } from "./errorMapping.ts"

export interface StaticRoutesOptions {
  /** The built panel (a folder holding index.html and assets/); null: no panel on this server. */
  readonly root: string
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json"
}

/** Vite names what it emits under assets/ by content hash: a changed file is a new URL. */
const IMMUTABLE = "public, max-age=31536000, immutable"
const REVALIDATE = "no-cache"

/**
 * The panel's page: scripts and styles from here only, WebSockets to this origin only, never framed.
 * Inline styles stay allowed: xterm.js sizes its rows with a generated style element.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

const PAGE_HEADERS = {
  "cache-control": REVALIDATE,
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin"
}

/** Paths that belong to the server, never to the panel: an unknown one there is a JSON 404, not the page. */
export const isServerPath = (path: string): boolean =>
  /^\/(api|healthz|readyz|openapi\.json|docs)(\/|$)/.test(path)

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ZH panel not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>The panel is not built yet</h1>
<p>This server has no built user panel. Run <code>npm run build:web</code> (or start it with <code>npm start</code>,
which builds it when needed), then reload this page.</p>
<p lang="fr">Le panneau n'est pas encore construit : lancez <code>npm run build:web</code> puis rechargez la page.</p>
</body></html>
`

const notBuilt = () =>
  HttpServerResponse.text(NOT_BUILT, {
    status: 503,
    contentType: "text/html; charset=utf-8",
    headers: { "cache-control": "no-store", "retry-after": "10" }
  })

/** A regular file's bytes, or undefined when there is none (missing, a folder, unreadable). */
const readRegular = (path: string) =>
  Effect.tryPromise(async () => {
    const info = await stat(path)
    return info.isFile() ? new Uint8Array(await readFile(path)) : undefined
  }).pipe(Effect.orElseSucceed(() => undefined))

/**
 * The file a URL path names inside the root, or undefined when it could leave it (`..`, encoded separators,
 * NUL) or names a hidden file such as the build stamp.
 */
export const fileFor = (root: string, urlPath: string): string | undefined => {
  let decoded: string
  try {
    decoded = decodeURIComponent(urlPath)
  } catch {
    return undefined
  }
  if (decoded.includes("\0") || decoded.includes("\\")) return undefined
  const parts = decoded.split("/").filter((p) => p !== "")
  if (parts.some((p) => p === ".." || p.startsWith("."))) return undefined
  const base = resolve(root)
  const full = normalize(join(base, ...parts))
  return full === base || full.startsWith(base + sep) ? full : undefined
}

const indexPage = (root: string) =>
  Effect.map(readRegular(join(root, "index.html")), (bytes) =>
    bytes === undefined
      ? notBuilt()
      : HttpServerResponse.uint8Array(bytes, { contentType: TYPES[".html"]!, headers: PAGE_HEADERS }))

const serve = (options: StaticRoutesOptions) => (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const path = new URL(request.url, "http://panel").pathname
    if (isServerPath(path)) return errorResponse(404)
    if (path === "/" || path === "/index.html") return yield* indexPage(options.root)
    const file = fileFor(options.root, path)
    const ext = extname(path).toLowerCase()
    const bytes = file === undefined ? undefined : yield* readRegular(file)
    if (bytes !== undefined) {
      const immutable = path.startsWith("/assets/")
      return HttpServerResponse.uint8Array(bytes, {
        contentType: TYPES[ext] ?? "application/octet-stream",
        headers: {
          "cache-control": immutable ? IMMUTABLE : REVALIDATE,
          "x-content-type-options": "nosniff",
          ...(ext === ".html" ? PAGE_HEADERS : {})
        }
      })
    }
    // A missing asset is a 404: answering the page would hand HTML to a <script> and hide a broken build.
    if (path.startsWith("/assets/") || (ext !== "" && ext !== ".html")) {
      return HttpServerResponse.text("Not found", { status: 404, headers: { "cache-control": "no-store" } })
    }
    return yield* indexPage(options.root)
  })

/** GET on every path the router has nothing more specific for. */
export const staticRoutes = (options: StaticRoutesOptions) =>
  Layer.mergeAll(HttpRouter.add("GET", "/", serve(options)), HttpRouter.add("GET", "/*", serve(options)))
