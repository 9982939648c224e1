// Signing in, the per-request session check, and signing out. A session is a server-side record that its token
// names: logging out deletes it, logging out everywhere or a password reset deletes all of the user's, and a token
// whose record is gone stops working at once (within the read cache's second on other instances). The token still
// carries the sliding expiry; the record carries the absolute cap and a coarse "last seen".
import { Clock, Duration, Effect, Option, type Redacted } from "effect"
import { SecureRandom } from "effect/crypto"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"
import { SessionRecords } from "../../ports/SessionRecords.ts"
import { type SessionClaims, SessionTokens } from "../../ports/SessionTokens.ts"
import { Users } from "../../ports/Users.ts"
import { InvalidCredentials, Unauthenticated } from "./AccountErrors.ts"
import { AccountSettings } from "./AccountSettings.ts"
import { normaliseEmail } from "./Credentials.ts"
import { admitSignIn, signInSucceeded } from "./LoginThrottle.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { recordAudit, recordOwnAction } from "../audit/record.ts"
import { isStaff, type Role } from "./Role.ts"
import { SessionId } from "./SessionRecord.ts"
import { User, type UserId } from "./User.ts"

export interface Session {
  /** The server-side record this session lives in. */
  readonly id: SessionId
  readonly user: User
  readonly token: string
  readonly rememberMe: boolean
  /** How long the token is valid from now; a remember-me cookie gets it as Max-Age. */
  readonly lifetime: Duration.Duration
}

/** "Last seen" is written at most this often per session: the check stays a cache read on nearly every request. */
export const TOUCH_INTERVAL = Duration.minutes(1)
const TOUCH_MILLIS = Duration.toMillis(TOUCH_INTERVAL)

/** Sessions past their cap that one sign-in forgets (any user's): the table holds little more than live sessions. */
const PURGE_PER_SIGN_IN = 100

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/** Control characters out, length bounded: what a client says about itself is stored only as a hint. */
const hint = (text: string | undefined, max: number): string | null => {
  const clean = text?.replace(/[\u0000-\u001f\u007f]/g, "").trim().slice(0, max)
  return clean === undefined || clean === "" ? null : clean
}

/**
 * How long a session of `user` lasts: staff sessions are shorter (an operator's stolen cookie opens every account),
 * and the user's role is read on every request, so a role granted or revoked applies to sessions already open.
 */
const lifetimesOf = (settings: AccountSettings["Service"], user: User, rememberMe: boolean) => {
  const lifetime = rememberMe ? settings.rememberMeLifetime : settings.sessionIdleLifetime
  return isStaff(user.role)
    ? {
      lifetime: Duration.min(lifetime, settings.staffSessionLifetime),
      absolute: Duration.min(settings.sessionAbsoluteLifetime, settings.staffSessionAbsoluteLifetime)
    }
    : { lifetime, absolute: settings.sessionAbsoluteLifetime }
}

/** A token for the session `id` of `user`, valid from `at` under the lifetimes of `settings`. */
const issueWith = (
  tokens: SessionTokens["Service"],
  settings: AccountSettings["Service"],
  id: SessionId,
  user: User,
  rememberMe: boolean,
  signedInAt: number,
  at: Date
): Effect.Effect<Session> => {
  const { absolute, lifetime } = lifetimesOf(settings, user, rememberMe)
  // The sliding expiry never runs past the absolute cap counted from sign-in.
  const cap = signedInAt + Math.floor(Duration.toSeconds(absolute))
  const expiresAt = Math.min(seconds(at) + Math.floor(Duration.toSeconds(lifetime)), cap)
  const claims: SessionClaims = { sessionId: id, userId: user.id, rememberMe, signedInAt, expiresAt }
  return Effect.map(tokens.issue(claims, at), (token) => ({
    id,
    user,
    token,
    rememberMe,
    lifetime: Duration.seconds(expiresAt - seconds(at))
  }))
}

export const login = Effect.fn("login")(function*(input: {
  readonly email: string
  readonly password: Redacted.Redacted<string>
  readonly rememberMe: boolean
  /** The client's address, when known. */
  readonly address: string | undefined
  /** The client's User-Agent, kept with the session. */
  readonly userAgent?: string | undefined
}) {
  const settings = yield* AccountSettings
  const hasher = yield* PasswordHasher
  const users = yield* Users
  const at = yield* now
  const email = normaliseEmail(input.email)
  yield* admitSignIn(email, input.address, at)

  const found = yield* users.findByEmail(email)
  // An unknown e-mail spends one compare against a decoy hash, so timing does not reveal accounts.
  const matches = yield* hasher.verify(input.password, Option.match(found, { onNone: () => hasher.decoy, onSome: (u) => u.passwordHash }))
  const address = hint(input.address, 64)
  if (Option.isNone(found) || !matches) {
    // Joins the account's trail when there is one; an unknown address is kept for operators (credential stuffing).
    yield* recordAudit({
      actorId: null,
      actorRole: "anonymous",
      action: "auth.sign_in_failed",
      subjectUserId: Option.isSome(found) ? found.value.id : null,
      address,
      details: Option.isSome(found) ? null : { email: email.slice(0, 254) }
    })
    return yield* new InvalidCredentials()
  }

  yield* signInSucceeded(email, input.address)
  let user = found.value
  if (hasher.needsRehash(user.passwordHash)) {
    const hash = yield* hasher.hash(input.password)
    // Conditional: a reset that finished while we hashed wins, and has ended every session of the user.
    if (yield* users.upgradePasswordHash(user.id, user.passwordHash, hash)) {
      user = new User({ ...user, passwordHash: hash })
    }
  }
  const sessions = yield* SessionRecords
  const id = SessionId.make(yield* (yield* SecureRandom.SecureRandom).uuidV4())
  yield* sessions.create({
    id,
    userId: user.id,
    rememberMe: input.rememberMe,
    createdAt: at,
    lastSeenAt: at,
    expiresAt: new Date(at.getTime() + Duration.toMillis(lifetimesOf(settings, user, input.rememberMe).absolute)),
    userAgent: hint(input.userAgent, 256),
    address
  })
  yield* recordOwnAction(user, "auth.sign_in", { address, details: { rememberMe: input.rememberMe, session: id } })
  yield* sessions.purgeExpired(at, PURGE_PER_SIGN_IN)
  return yield* issueWith(yield* SessionTokens, settings, id, user, input.rememberMe, seconds(at), at)
})

/**
 * The guard of every authenticated request, its services resolved once (it runs on every request: no lookup or
 * context merge per call): a valid token whose session record still lives yields the user and a fresh token
 * (sliding expiry). Both reads go through per-instance caches of at most a second.
 */
export const makeAuthenticator = Effect.gen(function*() {
  const tokens = yield* SessionTokens
  const users = yield* Users
  const sessions = yield* SessionRecords
  const settings = yield* AccountSettings
  const revoked = Effect.fail(new Unauthenticated({ reason: "REVOKED" }))
  const resume = (claims: SessionClaims, at: Date): Effect.Effect<Session, Unauthenticated | DatabaseUnavailable> =>
    Effect.flatMap(sessions.find(claims.sessionId), (record) => {
      if (Option.isNone(record) || record.value.userId !== claims.userId || record.value.expiresAt <= at) return revoked
      const lastSeen = record.value.lastSeenAt
      return Effect.flatMap(users.findById(claims.userId), (user): Effect.Effect<Session, Unauthenticated | DatabaseUnavailable> => {
        if (Option.isNone(user)) return revoked
        const issued = issueWith(tokens, settings, claims.sessionId, user.value, claims.rememberMe, claims.signedInAt, at)
        return at.getTime() - lastSeen.getTime() >= TOUCH_MILLIS
          ? Effect.andThen(sessions.touch(claims.sessionId, at), issued)
          : issued
      })
    })
  return (token: string | undefined): Effect.Effect<Session, Unauthenticated | DatabaseUnavailable> => {
    if (token === undefined || token === "") return Effect.fail(new Unauthenticated({ reason: "MISSING" }))
    return Effect.flatMap(now, (at) =>
      tokens.verify(token, at).pipe(
        Effect.mapError((e) => new Unauthenticated({ reason: e.reason === "EXPIRED" ? "EXPIRED" : "INVALID" })),
        Effect.flatMap((claims) => resume(claims, at))
      ))
  }
})

/** The session check of one request (see `makeAuthenticator`). */
export const authenticate = Effect.fn("authenticate")(function*(token: string | undefined) {
  return yield* (yield* makeAuthenticator)(token)
})

/**
 * Whether a session still lives (not ended, not past its cap): what an open console asks every few seconds. Read
 * through the same cache as the per-request check.
 */
export const sessionIsLive = Effect.fn("sessionIsLive")(function*(id: SessionId) {
  const record = yield* (yield* SessionRecords).find(id)
  return Option.isSome(record) && record.value.expiresAt.getTime() > (yield* Clock.currentTimeMillis)
})

/**
 * Logging out: ends the session the token names. An expired token still names it (a copy of the token refreshed
 * elsewhere would keep it alive), so only the signature is required; anything else ends nothing.
 */
export const endSession = Effect.fn("endSession")(function*(token: string | undefined) {
  if (token === undefined || token === "") return
  const claims = yield* Effect.option((yield* SessionTokens).read(token))
  if (Option.isSome(claims)) yield* (yield* SessionRecords).end(claims.value.sessionId)
})

/** "Log out everywhere": every session of the user ends, this one included; audited with them, in one transaction. */
export const endAllSessions = Effect.fn("endAllSessions")(function*(
  user: { readonly id: UserId; readonly role: Role },
  address: string | undefined
) {
  const sessions = yield* SessionRecords
  yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    const ended = yield* sessions.endAllOf(user.id)
    yield* recordOwnAction(user, "auth.logout_all", { address: hint(address, 64), details: { sessionsEnded: ended } })
  }))
})
