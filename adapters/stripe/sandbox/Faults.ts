// Faults on demand, armed through the control: the API's next calls answer 5xx or hang; the next webhook deliveries
// are sent twice, held back and sent in reverse order, or sent late.
import type { Effect } from "effect"

type Delivery = Effect.Effect<void>
export type ApiFault =
  | { readonly kind: "fail"; readonly status: number }
  | { readonly kind: "hang" }
  /** The call is done, and answered `ms` late (a slow network: the caller may give up or die meanwhile). */
  | { readonly kind: "slow"; readonly ms: number }

export interface DeliveryPlan {
  /** Each delivery of this event is sent this many times (after the first 2xx, the copies go out again). */
  readonly copies: number
  /** Wait this long before the first attempt. */
  readonly delayMs: number
}

export class Faults {
  private api: Array<{ fault: ApiFault; remaining: number; readonly path: RegExp | undefined }> = []
  private duplicates: Array<{ remaining: number; readonly copies: number }> = []
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

  /** The next `events` deliveries are each sent `copies` times (2 by default). */
  duplicateNext(events: number, copies = 2): void {
    if (!Number.isInteger(copies) || copies < 1) throw new RangeError("copies must be a positive integer")
    this.duplicates.push({ remaining: events, copies })
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
    const duplicate = this.duplicates[0]
    if (duplicate !== undefined) {
      duplicate.remaining -= 1
      if (duplicate.remaining <= 0) this.duplicates.shift()
    }
    const copies = duplicate?.copies ?? 1
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
    this.duplicates = []
    this.delays = []
    const held = this.reorder?.held ?? []
    this.reorder = undefined
    return held
  }
}
