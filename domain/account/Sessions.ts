// Signing in, the per-request session check (sliding expiry, revocation), and signing out everywhere.
import { Clock, Duration, Effect, Option, type Redacted } from "effect"
import { LoginAttempts } from "../../ports/LoginAttempts.ts"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"
import { type SessionClaims, SessionTokens } from "../../ports/SessionTokens.ts"
import { Users } from "../../ports/Users.ts"
import { InvalidCredentials, LoginThrottled, Unauthenticated } from "./AccountErrors.ts"
import { AccountSettings } from "./AccountSettings.ts"
import { normaliseEmail } from "./Credentials.ts"
import { User, type UserId } from "./User.ts"

export interface Session {
  readonly user: User
  readonly token: string
  readonly rememberMe: boolean
  /** How long the token is valid from now; a remember-me cookie gets it as Max-Age. */
  readonly lifetime: Duration.Duration
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/** A session for `user` valid from `at`: the token signed by `tokens` under the lifetimes of `settings`. */
const issueWith = (
  tokens: SessionTokens["Service"],
  settings: AccountSettings["Service"],
  user: User,
  rememberMe: boolean,
  signedInAt: number,
  at: Date
): Effect.Effect<Session> => {
  const lifetime = rememberMe ? settings.rememberMeLifetime : settings.sessionIdleLifetime
  // The sliding expiry never runs past the absolute cap counted from sign-in.
  const cap = signedInAt + Math.floor(Duration.toSeconds(settings.sessionAbsoluteLifetime))
  const expiresAt = Math.min(seconds(at) + Math.floor(Duration.toSeconds(lifetime)), cap)
  const claims: SessionClaims = { userId: user.id, sessionVersion: user.sessionVersion, rememberMe, signedInAt, expiresAt }
  return Effect.map(tokens.issue(claims, at), (token) => ({
    user,
    token,
    rememberMe,
    lifetime: Duration.seconds(expiresAt - seconds(at))
  }))
}

const issue = Effect.fn("issueSession")(function*(user: User, rememberMe: boolean, signedInAt: number, at: Date) {
  return yield* issueWith(yield* SessionTokens, yield* AccountSettings, user, rememberMe, signedInAt, at)
})

const accountKey = (email: string) => `account:${email}`
const addressKey = (address: string) => `address:${address}`

/**
 * Counts the attempt before checking the password, so concurrent guesses cannot slip past the limit;
 * a throttled attempt costs no hashing at all.
 */
const throttle = Effect.fn("throttleLogin")(function*(keys: ReadonlyArray<readonly [string, number]>, at: Date) {
  const settings = yield* AccountSettings
  const attempts = yield* LoginAttempts
  const window = Duration.toMillis(settings.loginThrottleWindow)
  let retryAfter = 0
  for (const [key, limit] of keys) {
    const hit = yield* attempts.hit(key, at, window)
    if (hit.count > limit) {
      retryAfter = Math.max(retryAfter, Math.ceil((hit.resetsAt.getTime() - at.getTime()) / 1000))
    }
  }
  if (retryAfter > 0) return yield* new LoginThrottled({ retryAfterSeconds: Math.max(1, retryAfter) })
})

export const login = Effect.fn("login")(function*(input: {
  readonly email: string
  readonly password: Redacted.Redacted<string>
  readonly rememberMe: boolean
  /** The client's address, when known. */
  readonly address: string | undefined
}) {
  const settings = yield* AccountSettings
  const hasher = yield* PasswordHasher
  const attempts = yield* LoginAttempts
  const at = yield* now
  const email = normaliseEmail(input.email)
  const keys: Array<readonly [string, number]> = [[accountKey(email), settings.maxFailuresPerAccount]]
  if (input.address !== undefined) keys.push([addressKey(input.address), settings.maxFailuresPerAddress])
  yield* throttle(keys, at)

  const found = yield* (yield* Users).findByEmail(email)
  // An unknown e-mail spends one compare against a decoy hash, so timing does not reveal accounts.
  const matches = yield* hasher.verify(input.password, Option.match(found, { onNone: () => hasher.decoy, onSome: (u) => u.passwordHash }))
  if (Option.isNone(found) || !matches) return yield* new InvalidCredentials()

  yield* attempts.clear(accountKey(email))
  if (input.address !== undefined) yield* attempts.undo(addressKey(input.address))
  let user = found.value
  if (hasher.needsRehash(user.passwordHash)) {
    const hash = yield* hasher.hash(input.password)
    // Conditional: a reset that finished while we hashed wins, and this session is then already revoked.
    if (yield* (yield* Users).upgradePasswordHash(user.id, user.passwordHash, hash)) {
      user = new User({ ...user, passwordHash: hash })
    }
  }
  return yield* issue(user, input.rememberMe, seconds(at), at)
})

/**
 * The guard of every authenticated request, its services resolved once (it runs on every request: no lookup or
 * context merge per call): a valid token whose session version still matches the user's yields the user and a
 * fresh token (sliding expiry).
 */
export const makeAuthenticator = Effect.gen(function*() {
  const tokens = yield* SessionTokens
  const users = yield* Users
  const settings = yield* AccountSettings
  return (token: string | undefined): Effect.Effect<Session, Unauthenticated> => {
    if (token === undefined || token === "") return Effect.fail(new Unauthenticated({ reason: "MISSING" }))
    return Effect.flatMap(now, (at) =>
      tokens.verify(token, at).pipe(
        Effect.mapError((e) => new Unauthenticated({ reason: e.reason === "EXPIRED" ? "EXPIRED" : "INVALID" })),
        Effect.flatMap((claims) =>
          Effect.flatMap(users.findById(claims.userId), (found) =>
            Option.isNone(found) || found.value.sessionVersion !== claims.sessionVersion
              ? Effect.fail(new Unauthenticated({ reason: "REVOKED" }))
              : issueWith(tokens, settings, found.value, claims.rememberMe, claims.signedInAt, at)))
      ))
  }
})

/** The session check of one request (see `makeAuthenticator`). */
export const authenticate = Effect.fn("authenticate")(function*(token: string | undefined) {
  return yield* (yield* makeAuthenticator)(token)
})

/** "Log out everywhere": every token issued so far stops working. */
export const revokeAllSessions = Effect.fn("revokeAllSessions")(function*(userId: UserId) {
  yield* (yield* Users).revokeSessions(userId)
})
