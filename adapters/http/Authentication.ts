// The one authentication of the HTTP edge: the `zh_token` cookie checked against the server-side session it names
// (domain/account/Sessions.ts), for the HttpApi's signed-in groups (with the sliding cookie), for the one public route
// that reads a session when there is one (preferences), for the routes outside the HttpApi — the files relay and
// both console WebSockets — whose refusal is the same 401 envelope, before the upgrade, and for the back-office:
// every path under /api/admin is refused at the edge, before any routing, to anyone but staff.
import { Cache, Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { NotPermitted, type Unauthenticated } from "../../domain/account/AccountErrors.ts"
import { mayAct, type StaffRole } from "../../domain/account/Role.ts"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import { makeAuthenticator, type Session } from "../../domain/account/Sessions.ts"
import { Authentication, CurrentSession, MaybeSession, SessionCookie, SessionIfSignedIn } from "./AccountsApi.ts"
import { RequiredRole, StaffAuthentication } from "./AdminApi.ts"
import { setSessionCookie, tokenCookie, withCookie } from "./cookies.ts"
import { mapDomainErrors, refusal } from "./errorMapping.ts"
import { HttpSettings } from "./HttpSettings.ts"

/** The session check of a request's cookie, its services resolved once: it runs on every authenticated request. */
export class SessionGuard extends Context.Service<SessionGuard, {
  check(token: string | undefined): Effect.Effect<Session, Unauthenticated | DatabaseUnavailable>
  /** The session of a user whose role may do what needs `required`; a signed-in user who may not: NotPermitted. */
  checkStaff(
    token: string | undefined,
    required: StaffRole
  ): Effect.Effect<Session, Unauthenticated | NotPermitted | DatabaseUnavailable>
}>()("zh/http/SessionGuard") {
  static readonly layer = Layer.effect(
    SessionGuard,
    Effect.map(makeAuthenticator, (check) =>
      SessionGuard.of({
        check,
        checkStaff: (token, required) =>
          Effect.flatMap(check(token), (session) =>
            mayAct(session.user.role, required) ? Effect.succeed(session) : Effect.fail(new NotPermitted()))
      }))
  )
}

const tokenOf = (request: HttpServerRequest.HttpServerRequest) => request.cookies[SessionCookie.key]

/**
 * The middleware of a signed-in group: `check` finds the session of the request's token (or refuses it); the handler
 * runs with it and the cookie slides.
 */
const slidingSession = Effect.gen(function*() {
  const settings = yield* HttpSettings
  // Every request of a session within a second carries the same token: its cookie is built once, kept by
  // `maxAge:token` (a browser-session cookie has none).
  const cookies = yield* Cache.make({
    capacity: 10_000,
    timeToLive: "2 seconds",
    lookup: (key: string) =>
      Effect.sync(() => {
        const at = key.indexOf(":")
        const maxAge = key.slice(0, at)
        return tokenCookie(settings, key.slice(at + 1), maxAge === "" ? undefined : Number(maxAge))
      })
  })
  const cookieOf = (session: Session) =>
    Cache.get(cookies, `${session.rememberMe ? Duration.toSeconds(session.lifetime) : ""}:${session.token}`)
  return <E, R0>(check: Effect.Effect<Session, E, R0>) =>
  <E2, R>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E2, R>) =>
    check.pipe(
      Effect.flatMap((session) =>
        httpEffect.pipe(
          Effect.provideService(CurrentSession, session),
          // A success's response is at hand: the cookie goes straight on it. A failure's response is made
          // later, from the error: a pre-response handler puts it there. Either way a handler's own cookie
          // (log out everywhere expires it) is applied after ours and wins.
          Effect.flatMap((response) => Effect.map(cookieOf(session), (cookie) => withCookie(response, cookie))),
          Effect.tapCause(() => setSessionCookie(settings, session))
        ))
    )
})

/** The HttpApi's signed-in groups: 401 without a live session; with one, the handler runs and the cookie slides. */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const guard = yield* SessionGuard
    const withSession = yield* slidingSession
    return Authentication.of({
      cookie: (httpEffect, { credential }) => withSession(mapDomainErrors(guard.check(Redacted.value(credential))))(httpEffect)
    })
  })
)

/**
 * The back-office's groups: a staff session whose role may do what the endpoint needs (its RequiredRole, support by
 * default). The edge's gate (below) has already refused everyone else; this is the same check, per endpoint.
 */
export const StaffAuthenticationLive = Layer.effect(
  StaffAuthentication,
  Effect.gen(function*() {
    const guard = yield* SessionGuard
    const withSession = yield* slidingSession
    return StaffAuthentication.of({
      cookie: (httpEffect, { credential, endpoint }) => {
        const required = Option.getOrElse(Context.getOption(endpoint.annotations, RequiredRole), () => "support" as const)
        return withSession(mapDomainErrors(guard.checkStaff(Redacted.value(credential), required)))(httpEffect)
      }
    })
  })
)

/** Whether a request's path is the back-office's: `/api/admin` itself or anything under it, whatever follows. */
export const isBackOfficePath = (url: string): boolean => BACK_OFFICE.test(url) || (url.includes("%") && BACK_OFFICE.test(decoded(url)))

/** The router ignores repeated slashes and reads percent-encoded letters as themselves: so does the gate. */
const BACK_OFFICE = /^\/+api\/+admin(?:[/?#;]|$)/i

const decoded = (url: string) => {
  try {
    return decodeURIComponent(url)
  } catch {
    return url
  }
}

/**
 * Every request under /api/admin, whatever its path or method, meets the staff check before any routing: 401
 * without a session, 403 for a customer, the same answer for a route that exists and one that does not.
 */
export const staffGate = HttpRouter.middleware(
  Effect.map(SessionGuard, (guard) => (httpEffect) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      isBackOfficePath(request.url)
        ? Effect.flatMap(Effect.result(guard.checkStaff(tokenOf(request), "support")), (session) =>
          session._tag === "Failure" ? Effect.succeed(refusal(session.failure)) : httpEffect)
        : httpEffect)),
  { global: true }
)

/** A public route that does more for a signed-in visitor: the session when the cookie names a live one. */
export const SessionIfSignedInLive = Layer.effect(
  SessionIfSignedIn,
  Effect.map(SessionGuard, (guard) =>
    SessionIfSignedIn.of((httpEffect) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        // Signed out unless the cookie names a live session; a database that does not answer is answered as such.
        Effect.provideService(
          httpEffect,
          MaybeSession,
          guard.check(tokenOf(request)).pipe(Effect.asSome, Effect.catchTag("Unauthenticated", () => Effect.succeedNone))
        )))))

/**
 * A route outside the HttpApi (relay, consoles) for signed-in customers only: the handler runs with the session, or
 * the request is refused with the 401 envelope. The cookie does not slide here: a WebSocket upgrade and a relayed
 * answer carry no cookie of ours.
 */
export const requireSession = <E, R>(
  handler: (request: HttpServerRequest.HttpServerRequest, session: Session) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
(request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | SessionGuard> =>
  Effect.flatMap(SessionGuard, (guard) =>
    Effect.flatMap(Effect.result(guard.check(tokenOf(request))), (session) =>
      session._tag === "Failure" ? Effect.succeed(refusal(session.failure)) : handler(request, session.success)))
