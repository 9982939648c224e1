// Thin handlers for the account routes: decode (done by the API), call one use case, map errors, set cookies.
import { Cache, Context, Effect, Option, Redacted, Schema, SchemaIssue } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, type HttpApiError, HttpApiMiddleware } from "effect/http-api"
import type { Digest, SecureRandom } from "effect/crypto"
import type { AccountSettings } from "../../domain/account/AccountSettings.ts"
import { requestPasswordReset, resetPassword } from "../../domain/account/PasswordReset.ts"
import { register } from "../../domain/account/Registration.ts"
import { choosePreferences } from "../../domain/account/Preferences.ts"
import { endAllSessions, endSession, login } from "../../domain/account/Sessions.ts"
import type { User } from "../../domain/account/User.ts"
import type { AuditLog } from "../../ports/AuditLog.ts"
import type { BusinessRegistry } from "../../ports/BusinessRegistry.ts"
import type { LoginAttempts } from "../../ports/LoginAttempts.ts"
import type { Mailer } from "../../ports/Mailer.ts"
import type { PasswordHasher } from "../../ports/PasswordHasher.ts"
import type { PasswordResets } from "../../ports/PasswordResets.ts"
import type { SessionRecords } from "../../ports/SessionRecords.ts"
import type { SessionTokens } from "../../ports/SessionTokens.ts"
import type { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { CurrentSession, MaybeSession, RequestValidation, SessionCookie } from "./AccountsApi.ts"
import { Api } from "./Api.ts"
import { BadRequest, errorBody, NotFound } from "./ApiErrors.ts"
import {
  clientAddress,
  expireSessionCookie,
  PREFERENCE_COOKIES,
  setPreferenceCookies,
  setSessionCookie
} from "./cookies.ts"
import { mapDomainErrors } from "./errorMapping.ts"
import { HttpSettings } from "./HttpSettings.ts"
import { MissingAnswer } from "./inputs.ts"
import { UserEnvelope } from "./views.ts"

/** Everything the account use cases run on. */
export type AccountServices =
  | AuditLog
  | AccountSettings
  | Users
  | PasswordResets
  | SessionRecords
  | LoginAttempts
  | UnitOfWork
  | PasswordHasher
  | SessionTokens
  | BusinessRegistry
  | Mailer
  | SecureRandom.SecureRandom
  | Digest.Digest

export const userView = (user: User) => ({
  id: user.id,
  email: user.email,
  accountType: user.accountType,
  firstName: user.firstName,
  lastName: user.lastName,
  ...(user.companyName === null ? {} : { companyName: user.companyName }),
  ...(user.siret === null ? {} : { siret: user.siret }),
  language: user.language,
  role: user.role,
  createdAt: user.createdAt.toISOString()
})

const FORGOT_ACCEPTED = {
  message: "If an account exists for this address, a link to reset its password has been sent."
}

export const AuthHandlers = HttpApiBuilder.group(Api, "auth", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<AccountServices>()
  const settings = yield* HttpSettings
  const run = <A, E>(effect: Effect.Effect<A, E, AccountServices>) => Effect.provideContext(effect, services)
  return handlers
    .handle("register", ({ payload, request }) =>
      Effect.gen(function*() {
        const cookieLanguage = request.cookies[PREFERENCE_COOKIES.language]
        const user = yield* run(register({
          ...payload,
          password: Redacted.make(payload.password),
          language: payload.language ?? (cookieLanguage === "en" ? "en" : "fr")
        }))
        return { user: userView(user) }
      }).pipe(mapDomainErrors))
    .handle("login", ({ payload, request }) =>
      Effect.gen(function*() {
        const session = yield* run(login({
          email: payload.email,
          password: Redacted.make(payload.password),
          rememberMe: payload.rememberMe ?? false,
          address: clientAddress(settings, request),
          userAgent: request.headers["user-agent"]
        }))
        yield* setSessionCookie(settings, session)
        return { user: userView(session.user) }
      }).pipe(mapDomainErrors))
    .handle("logout", ({ request }) =>
      Effect.andThen(run(endSession(request.cookies[SessionCookie.key])), expireSessionCookie(settings)).pipe(mapDomainErrors))
    .handle("forgotPassword", ({ payload }) =>
      // Answered at once and identically for every address; the lookup and the mail happen afterwards, so
      // neither the body nor the timing tells whether the account exists.
      run(requestPasswordReset(payload.email)).pipe(
        Effect.catchCause((cause) => Effect.logError("password reset request failed", cause)),
        Effect.forkDetach,
        Effect.as(FORGOT_ACCEPTED)
      ))
    .handle("resetPassword", ({ payload, request }) =>
      run(resetPassword({
        token: payload.token,
        password: Redacted.make(payload.password),
        address: clientAddress(settings, request)
      })).pipe(mapDomainErrors))
}))

const encodeUserEnvelope = Schema.encodeSync(UserEnvelope)

export const SessionHandlers = HttpApiBuilder.group(Api, "session", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<SessionRecords | UnitOfWork | AuditLog>()
  const run = <A, E>(effect: Effect.Effect<A, E, SessionRecords | UnitOfWork | AuditLog>) => Effect.provideContext(effect, services)
  const settings = yield* HttpSettings
  /**
   * `me`'s answer, encoded once per user object: the users' read cache hands out the same one for a second (and a
   * new one after any change), so a session polling `me` costs no encoding.
   */
  const answers = yield* Cache.make({
    capacity: 10_000,
    timeToLive: "2 seconds",
    lookup: (user: User) =>
      Effect.sync(() =>
        HttpServerResponse.text(JSON.stringify(encodeUserEnvelope({ user: userView(user) })), { contentType: "application/json" }))
  })
  return handlers
    .handle("me", () => Effect.flatMap(CurrentSession, (s) => Cache.get(answers, s.user)))
    .handle("logoutAll", () =>
      Effect.gen(function*() {
        const session = yield* CurrentSession
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* run(endAllSessions(session.user, clientAddress(settings, request)))
        yield* expireSessionCookie(settings)
      }).pipe(mapDomainErrors))
}))

export const PreferencesHandlers = HttpApiBuilder.group(Api, "preferences", Effect.fn(function*(handlers) {
  const users = yield* Users
  const settings = yield* HttpSettings
  return handlers.handle("update", ({ payload }) =>
    Effect.gen(function*() {
      const session = yield* MaybeSession
      const kept = yield* choosePreferences(Effect.map(session, Option.map((s) => s.user.id)), payload).pipe(
        Effect.provideService(Users, users)
      )
      const cookies: Array<readonly [string, string]> = []
      if (kept.theme !== undefined) cookies.push([PREFERENCE_COOKIES.theme, kept.theme])
      if (kept.proTheme !== undefined) cookies.push([PREFERENCE_COOKIES.proTheme, kept.proTheme])
      if (kept.language !== undefined) cookies.push([PREFERENCE_COOKIES.language, kept.language])
      yield* setPreferenceCookies(settings, cookies)
    }).pipe(mapDomainErrors))
}))

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** "email: Expected string; password: …" with each issue's path, on one line, plus the list as details. */
const describeIssues = (error: HttpApiError.HttpApiSchemaError) => {
  const issues = formatIssues(error.cause.issue).issues.map((issue) => ({
    path: (issue.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join("."),
    message: issue.message
  }))
  const summary = issues.map((i) => (i.path === "" ? i.message : `${i.path}: ${i.message}`)).join("; ")
  return { summary, issues }
}

export const RequestValidationLive = HttpApiMiddleware.layerSchemaErrorTransform(RequestValidation, (error, { endpoint, group }) => {
  if (error.kind === "Params") {
    // Only ids are path parameters: one that cannot name anything is answered as the missing resource it names.
    const missing = Context.getOption(Context.merge(group.annotations, endpoint.annotations), MissingAnswer)
    return Effect.fail(Option.getOrElse(missing, () => new NotFound({ error: errorBody("NOT_FOUND", "Nothing is here.") })))
  }
  if (error.cause.message.includes("Expected a valid JSON body")) {
    return Effect.fail(new BadRequest({ error: errorBody("MALFORMED_JSON", "The request body is not valid JSON.") }))
  }
  const { issues, summary } = describeIssues(error)
  const where = error.kind === "Payload" || error.kind === "Body" ? "body" : error.kind.toLowerCase()
  return Effect.fail(
    new BadRequest({ error: errorBody("INVALID_REQUEST", `The request ${where} is not valid: ${summary}`, issues) })
  )
})
