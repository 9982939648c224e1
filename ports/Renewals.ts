// The automatic renewal of a subscription's periods, one record per subscription and period: the charge's attempts,
// the last failure, when the next one is due, the hosted page when the bank wants the customer present. Every move is
// a compare-and-set, so two passes at once (two instances, a cron run twice) act once.
import { Context, type Effect, type Option } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export type RenewalStatus =
  /** Not charged yet: the first attempt is at `nextAttemptAt` (the period's start). */
  | "scheduled"
  /** Declined; tried again at `nextAttemptAt`. */
  | "retrying"
  /** The bank wants the customer present: paid on the hosted page (`payUrl`), or from the panel. */
  | "awaiting_authentication"
  /** Declined and no automatic attempt left: the customer can still pay from the panel until the service ends. */
  | "failed"
  | "paid"

export interface RenewalRecord {
  readonly subscriptionId: string
  /** The period being paid for starts where the previous one ended. */
  readonly periodStart: Date
  readonly amountCents: number
  readonly status: RenewalStatus
  /** Failed attempts recorded so far. */
  readonly attempts: number
  readonly lastFailure: string | null
  readonly nextAttemptAt: Date | null
  readonly payUrl: string | null
  readonly chargeReference: string | null
  readonly remindedAt: Date | null
  readonly paidAt: Date | null
}

export class Renewals extends Context.Service<Renewals, {
  /** The period's record, created (scheduled at `periodStart`) the first time it is asked for. */
  open(request: {
    readonly subscriptionId: string
    readonly periodStart: Date
    readonly amountCents: number
    readonly now: Date
  }): Effect.Effect<RenewalRecord, DatabaseUnavailable>
  get(subscriptionId: string, periodStart: Date): Effect.Effect<Option.Option<RenewalRecord>, DatabaseUnavailable>
  /** Each subscription's latest period record. */
  latest(subscriptionIds: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<RenewalRecord>, DatabaseUnavailable>
  /** Marks the reminder sent; false when it already was (the caller sends nothing). */
  markReminded(subscriptionId: string, periodStart: Date, now: Date): Effect.Effect<boolean, DatabaseUnavailable>
  /**
   * Takes the period's next automatic attempt when it is due and nobody holds it: until `until`, no other pass does.
   * None when it is not due, already held, or settled.
   */
  claim(subscriptionId: string, periodStart: Date, now: Date, until: Date): Effect.Effect<Option.Option<RenewalRecord>, DatabaseUnavailable>
  /**
   * Records the outcome of the attempt made after `attempts` failures (a compare-and-set on that count: a second
   * recording of the same attempt changes nothing and answers false). Releases the claim.
   */
  recordFailure(request: {
    readonly subscriptionId: string
    readonly periodStart: Date
    readonly attempts: number
    readonly status: Exclude<RenewalStatus, "paid">
    readonly reason: string
    readonly nextAttemptAt: Date | null
    readonly payUrl: string | null
    readonly now: Date
  }): Effect.Effect<boolean, DatabaseUnavailable>
  /** The period is paid (once: false when it already was). */
  markPaid(subscriptionId: string, periodStart: Date, chargeReference: string, now: Date): Effect.Effect<boolean, DatabaseUnavailable>
  /** Lets go of a claim without an outcome (the gateway could not be reached): the next pass tries again. */
  release(subscriptionId: string, periodStart: Date): Effect.Effect<void, DatabaseUnavailable>
}>()("zh/ports/Renewals") {}
