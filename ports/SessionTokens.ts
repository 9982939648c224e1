// Signed session tokens (the `zh_token` cookie's value): they name a server-side session and carry its expiry.
import { Context, type Effect, Schema } from "effect"
import type { SessionId } from "../domain/account/SessionRecord.ts"
import type { UserId } from "../domain/account/User.ts"

export interface SessionClaims {
  /** The server-side session: the token works only while it lives. */
  readonly sessionId: SessionId
  readonly userId: UserId
  readonly rememberMe: boolean
  /** When the user signed in (seconds since the epoch): bounds the session's absolute lifetime. */
  readonly signedInAt: number
  /** Expiry, seconds since the epoch. */
  readonly expiresAt: number
}

export class TokenRejected extends Schema.TaggedError<TokenRejected>()("TokenRejected", {
  reason: Schema.Literals(["MALFORMED", "BAD_SIGNATURE", "EXPIRED"])
}) {}

export class SessionTokens extends Context.Service<SessionTokens, {
  issue(claims: SessionClaims, now: Date): Effect.Effect<string>
  /** Checks signature (HS256 only) and expiry against `now`. */
  verify(token: string, now: Date): Effect.Effect<SessionClaims, TokenRejected>
  /** Checks the signature (HS256 only) but not the expiry: which session an expired token names. */
  read(token: string): Effect.Effect<SessionClaims, TokenRejected>
}>()("zh/ports/SessionTokens") {}
