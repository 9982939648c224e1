// The account routes' contract (schemas and endpoints only): /api/auth/* and /api/preferences.
import { Context, type Effect, type Option, Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { Session } from "../../domain/account/Sessions.ts"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import {
  BadRequest,
  Conflict,
  NotFound,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  Unprocessable
} from "./ApiErrors.ts"
import { Line } from "./inputs.ts"
import { Language, Theme, UserEnvelope } from "./views.ts"

/** Bounded (no request can make us hold megabytes in one field), one line, no control character. */
const Text = Line
const Name = Line(100).check(Schema.isTrimmed(), Schema.isNonEmpty())

export const RegisterPayload = Schema.Struct({
  email: Text(254),
  password: Text(1024),
  accountType: Schema.Literals(["personal", "professional"]),
  firstName: Name,
  lastName: Name,
  siret: Schema.optionalKey(Text(32)),
  language: Schema.optionalKey(Language)
})

export const LoginPayload = Schema.Struct({
  email: Text(254),
  password: Text(1024),
  rememberMe: Schema.optionalKey(Schema.Boolean)
})

export const ForgotPasswordPayload = Schema.Struct({ email: Text(254) })
export const ForgotPasswordAccepted = Schema.Struct({ message: Schema.String })

export const ResetPasswordPayload = Schema.Struct({ token: Text(128), password: Text(1024) })

export const PreferencesPayload = Schema.Struct({
  theme: Schema.optionalKey(Theme),
  proTheme: Schema.optionalKey(Theme),
  language: Schema.optionalKey(Language)
})

/** The signed-in session, provided to handlers by the guard. */
export class CurrentSession extends Context.Service<CurrentSession, Session>()("zh/http/CurrentSession") {}

export const SessionCookie = HttpApiSecurity.apiKey({ key: "zh_token", in: "cookie" })

/** The guard of every authenticated route (cookie session, revocation check, sliding expiry). */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentSession }>()(
  "zh/http/Authentication",
  { error: [Unauthorized, ServiceUnavailable], security: { cookie: SessionCookie } }
) {}

/** The session of a visitor on a public route, if they are signed in: checked when asked (provided by SessionIfSignedIn). */
export class MaybeSession extends Context.Service<MaybeSession, Effect.Effect<Option.Option<Session>, DatabaseUnavailable>>()(
  "zh/http/MaybeSession"
) {}

/** On a public route: the session when the cookie names a live one, for the handler to ask; never refuses. */
export class SessionIfSignedIn extends HttpApiMiddleware.Service<SessionIfSignedIn, { provides: MaybeSession }>()(
  "zh/http/SessionIfSignedIn"
) {}

/** Turns request decoding failures into the error envelope: 400, or a malformed path id's 404 (see MissingAnswer). */
export class RequestValidation extends HttpApiMiddleware.Service<RequestValidation>()("zh/http/RequestValidation", {
  error: [BadRequest, NotFound]
}) {}

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("register", "/register", {
      payload: RegisterPayload,
      success: UserEnvelope.pipe(HttpApiSchema.status(201)),
      error: [Conflict, Unprocessable, ServiceUnavailable]
    }),
    HttpApiEndpoint.post("login", "/login", {
      payload: LoginPayload,
      success: UserEnvelope,
      error: [Unauthorized, TooManyRequests]
    }),
    HttpApiEndpoint.post("logout", "/logout", { success: HttpApiSchema.NoContent }),
    HttpApiEndpoint.post("forgotPassword", "/forgot-password", {
      payload: ForgotPasswordPayload,
      success: ForgotPasswordAccepted.pipe(HttpApiSchema.status(202))
    }),
    HttpApiEndpoint.post("resetPassword", "/reset-password", {
      payload: ResetPasswordPayload,
      success: HttpApiSchema.NoContent,
      error: [BadRequest, Unprocessable, TooManyRequests]
    })
  )
  .prefix("/api/auth")
  .annotateMerge(OpenApi.annotations({ title: "Accounts", description: "Registration, sign-in, password reset" }))
{}

export class SessionApi extends HttpApiGroup.make("session")
  .add(
    HttpApiEndpoint.get("me", "/me", { success: UserEnvelope }),
    HttpApiEndpoint.post("logoutAll", "/logout-all", { success: HttpApiSchema.NoContent })
  )
  .middleware(Authentication)
  .prefix("/api/auth")
  .annotateMerge(OpenApi.annotations({ title: "Session", description: "The signed-in user (cookie zh_token)" }))
{}

export class PreferencesApi extends HttpApiGroup.make("preferences")
  .add(
    HttpApiEndpoint.put("update", "/preferences", {
      payload: PreferencesPayload,
      success: HttpApiSchema.NoContent
    })
  )
  .middleware(SessionIfSignedIn)
  .prefix("/api")
  .annotateMerge(OpenApi.annotations({
    title: "Preferences",
    description: "Theme, professional-area theme and language, kept in the functional cookies zh_theme, zh_pro_theme, zh_lang"
  }))
{}
