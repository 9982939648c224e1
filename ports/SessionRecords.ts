// Server-side sessions, one row each while the session lives: ending a session deletes its row.
import { Context, type Effect, type Option } from "effect"
import type { SessionId, SessionRecord } from "../domain/account/SessionRecord.ts"
import type { UserId } from "../domain/account/User.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class SessionRecords extends Context.Service<SessionRecords, {
  create(session: SessionRecord): Effect.Effect<void, DatabaseUnavailable>
  /** None once the session has ended (or never existed). */
  find(id: SessionId): Effect.Effect<Option.Option<SessionRecord>, DatabaseUnavailable>
  /** Moves `lastSeenAt` forward to `at` (never back). */
  touch(id: SessionId, at: Date): Effect.Effect<void, DatabaseUnavailable>
  /** Ends one session; true when it was still live. */
  end(id: SessionId): Effect.Effect<boolean, DatabaseUnavailable>
  /** Ends every session of the user; returns how many were live. */
  endAllOf(userId: UserId): Effect.Effect<number, DatabaseUnavailable>
  /** Forgets up to `limit` sessions whose absolute cap has passed at `now` (any user's); returns how many. */
  /** The user's live sessions (not past their cap at `now`), the latest sign-in first. */
  listOf(userId: UserId, now: Date): Effect.Effect<ReadonlyArray<SessionRecord>, DatabaseUnavailable>
  purgeExpired(now: Date, limit: number): Effect.Effect<number, DatabaseUnavailable>
}>()("zh/ports/SessionRecords") {}
