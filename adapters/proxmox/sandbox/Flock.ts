// qemu-server's per-VM config flock (`/var/lock/qemu-server/lock-<vmid>.conf`): one holder at a time, waiters give up
// after a timeout (10 s in `lock_config`) with "got timeout" (reference/proxmox.md §5.3).
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

  /** Resolves true once held, false after `timeoutMs` of `clock` without getting it. */
  acquire(timeoutMs: number, clock: SimClock): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true)
    return new Promise((resolve) => {
      const grant = () => {
        timer.cancel()
        resolve(true)
      }
      const timer = clock.later(timeoutMs, () => {
        const i = this.waiters.indexOf(grant)
        if (i >= 0) this.waiters.splice(i, 1)
        resolve(false)
      })
      this.waiters.push(grant)
    })
  }

  /** Hands the lock to the next waiter, or frees it. */
  release(): void {
    const next = this.waiters.shift()
    if (next === undefined) this.held = false
    else next()
  }
}
