// qemu-server's per-VM config flock (`/var/lock/qemu-server/lock-<vmid>.conf`): one holder at a time, waiters give up
// after a timeout (10 s in `lock_config`) with "got timeout" (reference/proxmox.md §5.3).
export class Flock {
  private held = false
  private readonly waiters: Array<() => void> = []

  /** Takes the lock if it is free, without waiting. */
  tryAcquire(): boolean {
    if (this.held) return false
    this.held = true
    return true
  }

  /** Resolves true once held, false after `timeoutMs` without getting it. */
  acquire(timeoutMs: number, timers: Set<NodeJS.Timeout>): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true)
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer)
        timers.delete(timer)
        resolve(true)
      }
      const timer = setTimeout(() => {
        timers.delete(timer)
        const i = this.waiters.indexOf(grant)
        if (i >= 0) this.waiters.splice(i, 1)
        resolve(false)
      }, timeoutMs)
      timers.add(timer)
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
