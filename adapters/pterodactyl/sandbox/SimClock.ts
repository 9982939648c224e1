// The simulator's time: what "now" is and work done later. Over sockets it is the process clock; without sockets it is
// the Effect Clock of whoever built the simulation (a test's TestClock moves installs, backups and the game with it).
import { Clock, Effect, Fiber, FiberSet, type Scope } from "effect"

/** Work scheduled with `later` or `every`; cancelling it twice is harmless. */
export interface Timer {
  cancel(): void
}

export interface SimClock {
  /** Epoch milliseconds. */
  now(): number
  later(ms: number, f: () => void): Timer
  every(ms: number, f: () => void): Timer
  /** Cancels everything still scheduled (the simulation is closing). */
  stop(): void
}

/** The process clock; timers are Node's. */
export const processClock = (): SimClock => {
  const timers = new Set<NodeJS.Timeout>()
  const track = (timer: NodeJS.Timeout, clear: (t: NodeJS.Timeout) => void): Timer => {
    timers.add(timer)
    return {
      cancel: () => {
        clear(timer)
        timers.delete(timer)
      }
    }
  }
  return {
    now: () => Date.now(),
    later: (ms, f) => {
      const timer: NodeJS.Timeout = setTimeout(() => {
        timers.delete(timer)
        f()
      }, ms)
      return track(timer, clearTimeout)
    },
    every: (ms, f) => track(setInterval(f, ms), clearInterval),
    stop: () => {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
    }
  }
}

/** The current Effect Clock; timers are fibers sleeping on it, interrupted when the scope closes. */
export const effectClock: Effect.Effect<SimClock, never, Scope.Scope> = Effect.gen(function*() {
  const clock = yield* Clock.Clock
  const fibers = yield* FiberSet.make<void>()
  const run = yield* FiberSet.runtime(fibers)<never>()
  const fork = (work: Effect.Effect<void>): Timer => {
    const fiber = run(work)
    return { cancel: () => void Effect.runFork(Fiber.interrupt(fiber)) }
  }
  return {
    now: () => clock.currentTimeMillisUnsafe(),
    later: (ms, f) => fork(Effect.andThen(Effect.sleep(ms), Effect.sync(f))),
    every: (ms, f) => fork(Effect.forever(Effect.andThen(Effect.sleep(ms), Effect.sync(f)))),
    stop: () => void Effect.runFork(FiberSet.clear(fibers))
  }
})
