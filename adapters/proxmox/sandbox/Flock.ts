// qemu-server's per-VM config flock (`/var/lock/qemu-server/lock-<vmid>.conf`): one holder at a time, waiters give up
// after a timeout (10 s in `lock_config`) with "got timeout" (reference/proxmox.md §5.3).
import { Effect } from "effect"
import type { SimClock } from "./SimClock.ts"

export class Flock {
  private held = false
  private readonly waiters: Array<() => void> = []

  /** Takes the lock if it is free, without waiting. */
  tryAcquire(): boolean {
    if (this.held) return false
    this.held = true
    return true
  }

  /**
   * Calls `done(true)` once held (at once when free), or `done(false)` after `timeoutMs` of `clock` without getting
   * it. The returned function withdraws a request still waiting.
   */
  request(timeoutMs: number, clock: SimClock, done: (held: boolean) => void): () => void {
    if (this.tryAcquire()) {
      done(true)
      return () => undefined
    }
    const leave = () => {
      const i = this.waiters.indexOf(grant)
      if (i >= 0) this.waiters.splice(i, 1)
    }
    const grant = () => {
      timer.cancel()
      done(true)
    }
    const timer = clock.later(timeoutMs, () => {
      leave()
      done(false)
    })
    this.waiters.push(grant)
    return () => {
      timer.cancel()
      leave()
    }
  }

  /** `request` as an Effect: true once held, false after the timeout; interrupted while waiting, it withdraws. */
  acquire(timeoutMs: number, clock: SimClock): Effect.Effect<boolean> {
    return Effect.callback<boolean>((resume) => {
      const withdraw = this.request(timeoutMs, clock, (held) => resume(Effect.succeed(held)))
      return Effect.sync(withdraw)
    })
  }

  /** Hands the lock to the next waiter, or frees it. */
  release(): void {
    const next = this.waiters.shift()
    if (next === undefined) this.held = false
    else next()
  }
}
