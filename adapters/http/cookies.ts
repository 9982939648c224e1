// The only cookies that exist: the session (zh_token) and three functional preference cookies.
import { Duration, Effect, Option } from "effect"
import { Cookies, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpEffect } from "effect/http"
import type { Session } from "../../domain/account/Sessions.ts"
import { SessionCookie } from "./AccountsApi.ts"
import type { HttpSettings } from "./HttpSettings.ts"

export const PREFERENCE_COOKIES = { theme: "zh_theme", proTheme: "zh_pro_theme", language: "zh_lang" } as const

/** A cookie as the privacy and cookies policy describes it, in both languages. */
export interface CookieDescription {
  readonly name: string
  /** "platform": set by this server; "stripe": set by Stripe on its own pages (card entry, 3-D Secure). */
  readonly setBy: "platform" | "stripe"
  readonly purpose: { readonly fr: string; readonly en: string }
  readonly lifetime: { readonly fr: string; readonly en: string }
}

/**
 * Every cookie a customer may receive, as the privacy page lists them (GET /api/legal/privacy). The setters below
 * only take a name from here, and test/adapters/http/cookiePolicy.test.ts fails when a response sets another one.
 * All are strictly necessary or functional, exempt from consent (CNIL délibérations 2020-091 and 2020-092).
 */
export const COOKIE_POLICY = [
  {
    name: SessionCookie.key,
    setBy: "platform",
    purpose: { fr: "Garde votre session ouverte après la connexion (strictement nécessaire).", en: "Keeps you signed in (strictly necessary)." },
    lifetime: {
      fr: "Fin de la session du navigateur, ou la durée de « Rester connecté »",
      en: "Until the browser session ends, or the \"Stay signed in\" lifetime"
    }
  },
  {
    name: PREFERENCE_COOKIES.theme,
    setBy: "platform",
    purpose: { fr: "Retient le thème clair ou sombre choisi.", en: "Remembers the light or dark theme you chose." },
    lifetime: { fr: "1 an", en: "1 year" }
  },
  {
    name: PREFERENCE_COOKIES.proTheme,
    setBy: "platform",
    purpose: { fr: "Retient le thème choisi dans l'espace professionnel.", en: "Remembers the theme chosen in the professional area." },
    lifetime: { fr: "1 an", en: "1 year" }
  },
  {
    name: PREFERENCE_COOKIES.language,
    setBy: "platform",
    purpose: { fr: "Retient la langue choisie (français ou anglais).", en: "Remembers the language you chose (French or English)." },
    lifetime: { fr: "1 an", en: "1 year" }
  },
  {
    name: "__stripe_mid, __stripe_sid, m",
    setBy: "stripe",
    purpose: {
      fr: "Posés par Stripe sur ses propres pages de paiement, pour la sécurité du paiement et la prévention de la fraude.",
      en: "Set by Stripe on its own payment pages, for payment security and fraud prevention."
    },
    lifetime: { fr: "Selon la politique de Stripe (stripe.com/cookies-policy)", en: "As Stripe's policy says (stripe.com/cookies-policy)" }
  }
] as const satisfies ReadonlyArray<CookieDescription>

/** The names of the cookies this server sets: the only ones its setters accept. */
export type PlatformCookieName = Extract<(typeof COOKIE_POLICY)[number], { readonly setBy: "platform" }>["name"]

export const PLATFORM_COOKIE_NAMES: ReadonlySet<string> = new Set(
  COOKIE_POLICY.filter((c) => c.setBy === "platform").map((c) => c.name)
)

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
  values: ReadonlyArray<readonly [name: PlatformCookieName, value: string]>
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
