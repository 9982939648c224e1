// The simulator's time: what "now" is and work done later. Over sockets it is the process clock; without sockets it is
// the Effect Clock of whoever built the simulation (a test's TestClock moves tasks, config locks and console windows
// with it). On top of either, an offset that `advanceClock` moves forward, so ticket and console-ticket ages
// (reference/proxmox.md §1.3, §4.2) can be aged without waiting.
import { Clock, Effect, Fiber, FiberSet, type Scope } from "effect"

/** Work scheduled with `later`; cancelling it twice is harmless. */
export interface Timer {
  cancel(): void
}

export interface SimClock {
  /** Milliseconds since the epoch, as the simulated PVE sees them. */
  now(): number
  /** Whole seconds since the epoch: what PVE writes into tickets and UPIDs. */
  nowSeconds(): number
  /** Moves "now" forward (not the timers): tickets, CSRF tokens and console tickets age accordingly. */
  advance(ms: number): void
  later(ms: number, f: () => void): Timer
  /** Completes after `ms` of this clock (never, once the clock stopped); interrupting it cancels the timer. */
  sleep(ms: number): Effect.Effect<void>
  /** Cancels everything still scheduled (the simulation is closing). */
  stop(): void
}

/** `now` and the offset `advance` moves, around the base clock's time and timers. */
const withOffset = (base: () => number, later: (ms: number, f: () => void) => Timer, stop: () => void): SimClock => {
  let offsetMs = 0
  const now = () => base() + offsetMs
  return {
    now,
    nowSeconds: () => Math.floor(now() / 1000),
    advance: (ms) => {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advanceClock expects a non-negative duration, got ${ms}`)
      offsetMs += ms
    },
    later,
    sleep: (ms) =>
      Effect.callback<void>((resume) => {
        const timer = later(ms, () => resume(Effect.void))
        return Effect.sync(() => timer.cancel())
      }),
    stop
  }
}

/** The process clock; timers are Node's. */
export const processClock = (): SimClock => {
  const timers = new Set<NodeJS.Timeout>()
  const later = (ms: number, f: () => void): Timer => {
    const timer: NodeJS.Timeout = setTimeout(() => {
      timers.delete(timer)
      f()
    }, ms)
    timers.add(timer)
    return {
      cancel: () => {
        clearTimeout(timer)
        timers.delete(timer)
      }
    }
  }
  return withOffset(() => Date.now(), later, () => {
    for (const timer of timers) clearTimeout(timer)
    timers.clear()
  })
}

/** The current Effect Clock; timers are fibers sleeping on it, interrupted when the scope closes. */
export const effectClock: Effect.Effect<SimClock, never, Scope.Scope> = Effect.gen(function*() {
  const clock = yield* Clock.Clock
  const fibers = yield* FiberSet.make<void>()
  const run = yield* FiberSet.runtime(fibers)<never>()
  const later = (ms: number, f: () => void): Timer => {
    const fiber = run(Effect.andThen(Effect.sleep(ms), Effect.sync(f)))
    return { cancel: () => void Effect.runFork(Fiber.interrupt(fiber)) }
  }
  return withOffset(() => clock.currentTimeMillisUnsafe(), later, () => void Effect.runFork(FiberSet.clear(fibers)))
})
