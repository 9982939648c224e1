// A signed-in session as the server keeps it: the token names it, and it ends when its record does (logout,
// log out everywhere, a password reset) or at its absolute cap.
import { Schema } from "effect"
import type { UserId } from "./User.ts"

export const SessionId = Schema.String.pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

export interface SessionRecord {
  readonly id: SessionId
  readonly userId: UserId
  readonly rememberMe: boolean
  /** Sign-in time. */
  readonly createdAt: Date
  /** The last request seen, at a coarse granularity: written at most once per `SESSION_TOUCH_INTERVAL`. */
  readonly lastSeenAt: Date
  /** The absolute cap: however active, the session ends here. */
  readonly expiresAt: Date
  /** What the browser said it was at sign-in (bounded), for a list of one's sessions. */
  readonly userAgent: string | null
  /** The client address at sign-in. */
  readonly address: string | null
}
