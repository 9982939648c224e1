// The only cookies that exist: the session (zh_token) and three functional preference cookies.
import { Duration, Effect, Option } from "effect"
import { Cookies, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpEffect } from "effect/http"
import type { Session } from "../../domain/account/Sessions.ts"
import { SessionCookie } from "./AccountsApi.ts"
import type { HttpSettings } from "./HttpSettings.ts"

export const PREFERENCE_COOKIES = { theme: "zh_theme", proTheme: "zh_pro_theme", language: "zh_lang" } as const

/**
 * Sets `zh_token` on whatever response leaves this request (errors included). Remember-me sessions get a
 * persistent cookie; others a browser-session cookie (no Max-Age) whose token expires after the idle lifetime.
 */
export const setSessionCookie = (
  settings: HttpSettings["Service"],
  session: Session
): Effect.Effect<void, never, HttpServerRequest.HttpServerRequest> => {
  const cookie = sessionCookie(settings, session)
  return HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.updateCookies(response, (cookies) => Cookies.setCookie(cookies, cookie)))
  )
}

/** A response with this cookie set (the session's, from `sessionCookie` or a cache of them). */
export const withCookie = (response: HttpServerResponse.HttpServerResponse, cookie: Cookies.Cookie): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.updateCookies(response, (cookies) => Cookies.setCookie(cookies, cookie))

/**
 * `zh_token`: remember-me sessions get a persistent cookie (Max-Age: what the token has left); others a
 * browser-session cookie whose token expires after the idle lifetime.
 */
export const sessionCookie = (settings: HttpSettings["Service"], session: Session): Cookies.Cookie =>
  tokenCookie(settings, session.token, session.rememberMe ? Duration.toSeconds(session.lifetime) : undefined)

/** The cookie of a session token; `maxAgeSeconds` undefined: a browser-session cookie. */
export const tokenCookie = (settings: HttpSettings["Service"], token: string, maxAgeSeconds: number | undefined): Cookies.Cookie =>
  // A JWT is base64url and dots: always a valid cookie value.
  Cookies.makeCookieUnsafe(SessionCookie.key, token, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: settings.secureCookies,
    ...(maxAgeSeconds === undefined ? {} : { maxAge: Duration.seconds(maxAgeSeconds) })
  })

export const expireSessionCookie = (
  settings: HttpSettings["Service"]
): Effect.Effect<void, never, HttpServerRequest.HttpServerRequest> =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.orDie(HttpServerResponse.expireCookie(response, SessionCookie.key, {
      path: "/",
      httpOnly: true,
      sameSite: "lax",
      secure: settings.secureCookies
    }))
  )

/** Preference cookies are readable by the panel's script (it applies the theme before the first paint). */
export const setPreferenceCookies = (
  settings: HttpSettings["Service"],
  values: ReadonlyArray<readonly [name: string, value: string]>
): Effect.Effect<void, never, HttpServerRequest.HttpServerRequest> =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.orDie(HttpServerResponse.setCookies(
      response,
      values.map(([name, value]) =>
        [name, value, { path: "/", sameSite: "lax", secure: settings.secureCookies, maxAge: Duration.days(365) }] as const
      )
    ))
  )

/** The client's address for throttling: the socket peer, or the proxy's last X-Forwarded-For hop when trusted. */
export const clientAddress = (
  settings: HttpSettings["Service"],
  request: HttpServerRequest.HttpServerRequest
): string | undefined => {
  if (settings.trustProxy) {
    const hops = (request.headers["x-forwarded-for"] ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
    const last = hops.at(-1)
    if (last !== undefined) return last
  }
  return Option.getOrUndefined(request.remoteAddress)
}
