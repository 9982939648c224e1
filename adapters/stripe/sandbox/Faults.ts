// Faults on demand, armed through the control: the API's next calls answer 5xx or hang; the next webhook deliveries
// are sent twice, held back and sent in reverse order, or sent late.
import type { Effect } from "effect"

type Delivery = Effect.Effect<void>
export type ApiFault = { readonly kind: "fail"; readonly status: number } | { readonly kind: "hang" }

export interface DeliveryPlan {
  /** Each delivery of this event is sent this many times (after the first 2xx, the copies go out again). */
  readonly copies: number
  /** Wait this long before the first attempt. */
  readonly delayMs: number
}

export class Faults {
  private api: Array<{ fault: ApiFault; remaining: number; readonly path: RegExp | undefined }> = []
  private duplicates = 0
  private delays: Array<{ remaining: number; readonly ms: number }> = []
  private reorder: { remaining: number; readonly held: Array<Delivery> } | undefined

  /** The next `times` API calls (matching `path` when given) answer `status` (an `api_error`) or never answer. */
  armApi(fault: ApiFault, times: number, path?: RegExp): void {
    if (!Number.isInteger(times) || times < 1) throw new RangeError("times must be a positive integer")
    this.api.push({ fault, remaining: times, path })
  }

  takeApi(path: string): ApiFault | undefined {
    const armed = this.api.find((a) => a.path === undefined || a.path.test(path))
    if (armed === undefined) return undefined
    armed.remaining -= 1
    if (armed.remaining <= 0) this.api = this.api.filter((a) => a !== armed)
    return armed.fault
  }

  duplicateNext(events: number): void {
    this.duplicates += events
  }

  delayNext(events: number, ms: number): void {
    this.delays.push({ remaining: events, ms })
  }

  /** The next `events` events are held until all have happened, then delivered newest first. */
  reorderNext(events: number): void {
    this.reorder = { remaining: events, held: [] }
  }

  /** How the next event is delivered; a held event's delivery starts when `release` is called. */
  planNext(): DeliveryPlan {
    const copies = this.duplicates > 0 ? 2 : 1
    if (this.duplicates > 0) this.duplicates -= 1
    const delay = this.delays[0]
    if (delay !== undefined) {
      delay.remaining -= 1
      if (delay.remaining <= 0) this.delays.shift()
    }
    return { copies, delayMs: delay?.ms ?? 0 }
  }

  /**
   * The deliveries to run now, one after the other: this one alone, none (held while a reorder is armed), or every
   * held one newest first once the last awaited event came.
   */
  hold(delivery: Delivery): ReadonlyArray<Delivery> {
    const reorder = this.reorder
    if (reorder === undefined) return [delivery]
    reorder.held.push(delivery)
    reorder.remaining -= 1
    if (reorder.remaining > 0) return []
    this.reorder = undefined
    return reorder.held.reverse()
  }

  /** Disarms everything; returns the deliveries a reorder was holding, to send now. */
  clear(): ReadonlyArray<Delivery> {
    this.api = []
    this.duplicates = 0
    this.delays = []
    const held = this.reorder?.held ?? []
    this.reorder = undefined
    return held
  }
}
