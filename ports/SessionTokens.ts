// Signed, self-contained session tokens (the `zh_token` cookie's value).
import { Context, type Effect, Schema } from "effect"
import type { UserId } from "../domain/account/User.ts"

export interface SessionClaims {
  readonly userId: UserId
  readonly sessionVersion: number
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
}>()("zh/ports/SessionTokens") {}
