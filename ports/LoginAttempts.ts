// Counters behind login throttling, keyed by account or client address, in fixed windows.
import { Context, type Effect } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export interface AttemptWindow {
  /** Attempts counted in the current window, this one included. */
  readonly count: number
  /** When the current window ends and the counter starts again. */
  readonly resetsAt: Date
}

export class LoginAttempts extends Context.Service<LoginAttempts, {
  /**
   * Counts one attempt atomically. A hit after the window's end opens a new window, at 1, ending `windowMillis`
   * later; hits inside a window keep its end, whatever `windowMillis` they give.
   */
  hit(key: string, now: Date, windowMillis: number): Effect.Effect<AttemptWindow, DatabaseUnavailable>
  /** Takes one attempt back (a successful login must not count against its address). */
  undo(key: string): Effect.Effect<void, DatabaseUnavailable>
  /** Forgets the key (a successful login clears its account's failures). */
  clear(key: string): Effect.Effect<void, DatabaseUnavailable>
}>()("zh/ports/LoginAttempts") {}
