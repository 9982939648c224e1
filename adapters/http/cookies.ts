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

/** The same cookie on a response already in hand (cheaper than a pre-response handler when one is at hand). */
export const withSessionCookie = (
  settings: HttpSettings["Service"],
  session: Session,
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => {
  const cookie = sessionCookie(settings, session)
  if (response.cookies.cookies[SessionCookie.key] === cookie) return response
  return HttpServerResponse.updateCookies(response, (cookies) => Cookies.setCookie(cookies, cookie))
}

/** The last cookie built (the same object while it lasts, so a response can tell it already has it): every request of a session within the same second gets the same token and Max-Age. */
let lastCookie: { readonly key: string; readonly cookie: Cookies.Cookie } | undefined

export const sessionCookie = (settings: HttpSettings["Service"], session: Session): Cookies.Cookie => {
  const maxAge = session.rememberMe ? session.lifetime : undefined
  const key = `${session.token}|${maxAge === undefined ? "" : Duration.toMillis(maxAge)}|${settings.secureCookies}`
  if (lastCookie?.key === key) return lastCookie.cookie
  // A JWT is base64url and dots: always a valid cookie value.
  const cookie = Cookies.makeCookieUnsafe(SessionCookie.key, session.token, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: settings.secureCookies,
    ...(maxAge === undefined ? {} : { maxAge })
  })
  lastCookie = { key, cookie }
  return cookie
}

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
