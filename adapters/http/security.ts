// What every request and every answer passes through, on every route: a state-changing request from another origin
// is refused (403 CSRF_REJECTED), and every answer carries the security headers — `no-store` on the API,
// `nosniff` everywhere, HSTS when served over HTTPS, a Content-Security-Policy on the API reference page.
//
// Cross-site request forgery: SameSite=Lax keeps the cookie off requests from other *sites*, but a page of the same
// site (another port, a sibling subdomain where a customer runs pages) still sends it. Browsers say where a request
// comes from: `Origin` on every non-GET request, and `Sec-Fetch-Site` (all current browsers); a request with neither
// did not come from a browser page — curl, scripts, server-to-server — and is let through, as Go's
// net/http.CrossOriginProtection does: forging one needs no cookie of a victim, and no page can send one.
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SessionCookie } from "./AccountsApi.ts"
import { errorResponse } from "./errorMapping.ts"
import type { HttpSettings } from "./HttpSettings.ts"
import { LEGAL_PAGES } from "./LegalRoutes.ts"

export interface SecurityOptions {
  /** The panel's public origin (PUBLIC_URL): the only `Origin` a state-changing request may come from. */
  readonly allowedOrigin: string
  /**
   * State-changing routes a foreign origin may call, as `"METHOD /path"`: only for callers that prove who they are
   * otherwise, such as a payment provider's signed webhook (`"POST /api/payments/stripe/webhook"`).
   */
  readonly csrfExempt: ReadonlyArray<string>
}

/** Methods that change nothing (RFC 9110 §9.2.1): never checked. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

const pathOf = (url: string) => {
  const end = url.search(/[?#]/)
  return end === -1 ? url : url.slice(0, end)
}

/** Whether a request may change state: a safe method, an exempt route, our origin, or no browser page at all. */
export const isSameOriginOrNotBrowser = (
  method: string,
  path: string,
  headers: Readonly<Record<string, string | undefined>>,
  options: SecurityOptions,
  exempt: ReadonlySet<string> = new Set(options.csrfExempt)
): boolean => {
  if (SAFE_METHODS.has(method) || exempt.has(`${method} ${path}`)) return true
  const origin = headers["origin"]
  if (origin !== undefined) return origin === options.allowedOrigin
  // Sec-Fetch-Site "none" is a request the user made themselves (the address bar, a bookmark), never a page's.
  const site = headers["sec-fetch-site"]
  if (site !== undefined) return site === "same-origin" || site === "none"
  return true
}

/**
 * API answers a cache may keep: public and the same for everyone. Every other /api/ answer is `no-store`, and so is
 * the plans' for a request carrying a session cookie (its prices follow the signed-in customer's VAT; the answer to
 * visitors who are not signed in is `Vary: Cookie`).
 */
export const PUBLIC_API_PATHS: ReadonlySet<string> = new Set(["/api/plans", ...LEGAL_PAGES.map((page) => `/api/legal/${page}`)])

/** A year, and subdomains too (RFC 6797 §6.1): once the panel is on HTTPS it never goes back. */
const HSTS = "max-age=31536000; includeSubDomains"

const encoder = new TextEncoder()

/**
 * The reference page (Scalar, bundled into the page by the framework) runs two inline scripts: the bundle and its
 * start-up. They are allowed by their SHA-256, as the page serves them, and nothing else runs; the page reaches
 * only this origin (the OpenAPI document is in the page; "try it" calls our API).
 */
export const docsPolicy = (html: string): string => {
  const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    ([, body]) => `'sha256-${createHash("sha256").update(encoder.encode(body ?? "")).digest("base64")}'`
  )
  return [
    "default-src 'none'",
    `script-src ${hashes.join(" ")} 'report-sample'`,
    // Scalar styles its components with generated style elements and attributes.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

/** Adds the headers of one kind of answer. */
const headerSet = (headers: Readonly<Record<string, string>>) => (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, headers)

export const securityMiddleware = (settings: HttpSettings["Service"], options: SecurityOptions) => {
  const exempt = new Set(options.csrfExempt)
  const everywhere: Record<string, string> = {
    "x-content-type-options": "nosniff",
    ...(settings.secureCookies ? { "strict-transport-security": HSTS } : {})
  }
  const api = headerSet({ ...everywhere, "cache-control": "no-store" })
  const publicApi = headerSet({ ...everywhere, vary: "cookie" })
  const other = headerSet(everywhere)
  /** The reference page is built once by the framework: its policy is computed once per page body. */
  const docsPolicies = new WeakMap<object, string>()
  const docs = (response: HttpServerResponse.HttpServerResponse) => {
    const body = response.body
    if (response.status !== 200 || body._tag !== "Uint8Array") return other(response)
    let policy = docsPolicies.get(body)
    if (policy === undefined) {
      policy = docsPolicy(body.text ?? new TextDecoder().decode(body.body))
      docsPolicies.set(body, policy)
    }
    return HttpServerResponse.setHeaders(response, { ...everywhere, "content-security-policy": policy })
  }

  const secure = (request: HttpServerRequest.HttpServerRequest, path: string, response: HttpServerResponse.HttpServerResponse) =>
    path.startsWith("/api/")
      ? !PUBLIC_API_PATHS.has(path) || (path === "/api/plans" && request.cookies[SessionCookie.key] !== undefined)
        ? api(response)
        : path === "/api/plans"
        ? publicApi(response)
        : other(response)
      : path === "/docs"
      ? docs(response)
      : other(response)
  /** For an answer made later from a failure (by the edge or the framework), whichever middleware runs first. */
  const secureLater = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
    Effect.succeed(secure(request, pathOf(request.url), response))

  return HttpRouter.middleware(
    (httpEffect) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const path = pathOf(request.url)
        if (!isSameOriginOrNotBrowser(request.method, path, request.headers, options, exempt)) {
          return Effect.succeed(secure(request, path, errorResponse(403, "CSRF_REJECTED", "This request must come from the panel's own pages.")))
        }
        return Effect.matchCauseEffect(httpEffect, {
          onSuccess: (response) => Effect.succeed(secure(request, path, response)),
          onFailure: (cause) => Effect.andThen(HttpEffect.appendPreResponseHandler(secureLater), Effect.failCause(cause))
        })
      }),
    { global: true }
  )
}
