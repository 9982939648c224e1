// Work that must happen however long it takes (an undo, a refund): retried with capped exponential backoff and no
// limit, each failed attempt reported, so a long outage delays it but never drops it.
import { Cause, type Duration, Effect, Schedule } from "effect"

/** 1 s, 2 s, 4 s … then every `cap`, forever. */
export const cappedBackoff = (cap: Duration.Input) => Schedule.min([Schedule.exponential("1 second"), Schedule.spaced(cap)])

export interface KeepTryingOptions<R> {
  /** Told of every failed attempt (numbered from 1), defects included. */
  readonly onFailure: (attempt: number, cause: Cause.Cause<unknown>) => Effect.Effect<void, never, R>
  readonly cap?: Duration.Input
}

/**
 * Runs `effect` until it succeeds. A failure or a defect is tried again after the backoff; only interruption (a
 * process stopping: a durable caller resumes it elsewhere) ends it.
 */
export const keepTrying = <A, E, R, R2>(effect: Effect.Effect<A, E, R>, options: KeepTryingOptions<R2>) =>
  Effect.suspend(() => {
    let attempt = 0
    return effect.pipe(
      Effect.sandbox,
      Effect.tapError((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : options.onFailure(++attempt, cause)),
      Effect.retry({ schedule: cappedBackoff(options.cap ?? "5 minutes"), while: (cause) => !Cause.hasInterruptsOnly(cause) }),
      // The retry ends only on an interruption: pass it on.
      Effect.catch(() => Effect.interrupt)
    )
  })

/** Alert on the first failure and then at attempts 2, 4, 8 …: loud at once, then quieter as an outage lasts. */
export const worthAnAlert = (attempt: number) => (attempt & (attempt - 1)) === 0

/** One line for a log or a record: the first failure's message, or the defect's. */
export const describeCause = (cause: Cause.Cause<unknown>) => {
  const squashed = Cause.squash(cause)
  if (typeof squashed === "object" && squashed !== null && "message" in squashed && typeof squashed.message === "string") {
    const tag = "_tag" in squashed && typeof squashed._tag === "string" ? `${squashed._tag}: ` : ""
    return `${tag}${squashed.message}`
  }
  return String(squashed)
}
