// When an open console must close: its session ended (logout, log out everywhere, a password reset — on any
// instance), or its service is no longer usable by its owner (suspended, destroyed, deleted, stopped). Both are re-read
// every STATE_POLL, so a console closes within that time.
import { Effect } from "effect"
import type { SessionId } from "../account/SessionRecord.ts"
import { sessionIsLive } from "../account/Sessions.ts"

export const STATE_POLL = "2 seconds"

export type ConsoleEnd = "session ended" | "service ended"

/** Completes with the reason once the console must close; `serviceUsable` says whether its service still is. */
export const watchConsole = <E, R>(sessionId: SessionId, serviceUsable: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (;;) {
      yield* Effect.sleep(STATE_POLL)
      if (!(yield* sessionIsLive(sessionId))) return "session ended" as ConsoleEnd
      if (!(yield* serviceUsable)) return "service ended" as ConsoleEnd
    }
  })
