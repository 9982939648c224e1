// Waiting on a workflow in domain tests under TestClock: `atOnce` lets it run with the clock still, `eventually`
// moves the clock a second at a time.
import { Effect } from "effect"
import { TestClock } from "effect/testing"

/** What happens without any time passing: reads until `done`, yielding to the workflow fibers between reads. */
export const atOnce = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 5_000; i++) {
      const value = yield* read
      if (done(value)) return value
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error("did not happen without time passing"))
  })

/** Moves the test clock a second at a time until `done` (within `limit` seconds). */
export const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean, limit = 3_600) =>
  Effect.gen(function*() {
    for (let i = 0; i < limit; i++) {
      const value = yield* read
      if (done(value)) return value
      yield* TestClock.adjust("1 second")
    }
    return yield* Effect.die(new Error(`did not happen within ${limit} s`))
  })
