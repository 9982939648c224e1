// Waiting on a workflow in domain tests under TestClock: `atOnce` lets it run with the clock still, `eventually`
// moves the clock a second at a time, `passing` lets a long stretch go by. Upstream simulations reached in memory
// answer through the event loop, so the clock moves only once what woke up has had its answers.
import { Duration, Effect } from "effect"
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

/** A few turns of the event loop: in-memory upstream calls under way get their answers (no clock involved). */
export const settle = Effect.promise(async () => {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve))
})

/** Moves the test clock by `total`, `step` at a time, letting the event loop answer in-memory calls after each step. */
export const passing = (total: Duration.Input, step: Duration.Input = "10 seconds") =>
  Effect.gen(function*() {
    const steps = Math.ceil(Duration.toMillis(Duration.fromInputUnsafe(total)) / Duration.toMillis(Duration.fromInputUnsafe(step)))
    for (let i = 0; i < steps; i++) {
      yield* TestClock.adjust(step)
      yield* settle
    }
  })

/** Moves the test clock a second at a time until `done` (within `limit` seconds). */
export const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean, limit = 3_600) =>
  Effect.gen(function*() {
    for (let i = 0; i < limit; i++) {
      const value = yield* read
      if (done(value)) return value
      yield* TestClock.adjust("1 second")
      yield* settle
    }
    return yield* Effect.die(new Error(`did not happen within ${limit} s`))
  })
