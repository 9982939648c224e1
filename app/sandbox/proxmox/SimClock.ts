// The simulator's own clock: real time plus an offset that tests move forward, so ticket and console-ticket ages
// (reference/proxmox.md §1.3, §4.2) can be aged without waiting.
export class SimClock {
  private offsetMs = 0

  /** Milliseconds since the epoch, as the simulated PVE sees them. */
  now(): number {
    return Date.now() + this.offsetMs
  }

  /** Whole seconds since the epoch: what PVE writes into tickets and UPIDs. */
  nowSeconds(): number {
    return Math.floor(this.now() / 1000)
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advanceClock expects a non-negative duration, got ${ms}`)
    this.offsetMs += ms
  }
}
