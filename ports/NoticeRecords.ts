// The customer notices recorded before their e-mail is sent, one per event key: the record is what makes a notice
// sent once, and what a later pass retries when the mail server was down.
import { Context, type Effect, type Option } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

/** A recorded notice whose e-mail is still to be sent. */
export interface PendingNotice {
  readonly key: string
  readonly userId: string
  /** The notice as recorded: the same JSON value (not necessarily the same text). */
  readonly payload: string
  /** Attempts made so far, this one included. */
  readonly attempts: number
}

/** A recorded notice whose e-mail has not gone out, as an operator reads it. */
export interface UnsentNotice {
  readonly key: string
  readonly tag: string
  readonly createdAt: Date
  readonly attempts: number
  readonly lastError: string | null
  /** When it is tried next; null once it is given up. */
  readonly nextAttemptAt: Date | null
}

/** A recorded notice as an operator reads it in a customer's list, sent or not. */
export interface NoticeEntry {
  readonly key: string
  readonly userId: string
  readonly tag: string
  readonly createdAt: Date
  readonly sentAt: Date | null
  readonly attempts: number
  readonly lastError: string | null
}

export class NoticeRecords extends Context.Service<NoticeRecords, {
  /**
   * Records the notice unless its key is already recorded, in one statement (two racing senders: one wins). The
   * winner gets it back, as its first attempt, leased to it until `leaseUntil` (no retry pass takes it before).
   */
  record(entry: {
    readonly key: string
    readonly userId: string
    readonly tag: string
    readonly payload: string
    readonly createdAt: Date
    readonly leaseUntil: Date
  }): Effect.Effect<PendingNotice | null, DatabaseUnavailable>
  /**
   * Takes up to `limit` unsent notices due at `now`, each leased until `leaseUntil` with one more attempt counted;
   * two passes at once never take the same notice.
   */
  claimDue(now: Date, leaseUntil: Date, limit: number): Effect.Effect<ReadonlyArray<PendingNotice>, DatabaseUnavailable>
  /**
   * Runs `effect` once what the caller recorded is committed: at once outside a transaction, after the commit inside
   * one (outside it), never when it rolls back. A notice is sent only once its record is there for good.
   */
  afterCommit(effect: Effect.Effect<void>): Effect.Effect<void>
  markSent(key: string, at: Date): Effect.Effect<void, DatabaseUnavailable>
  /** One recorded notice with its payload (an operator resends it). */
  find(key: string): Effect.Effect<Option.Option<NoticeEntry & { readonly payload: string }>, DatabaseUnavailable>
  /** A customer's notices, newest first. */
  ofUser(userId: string, limit: number): Effect.Effect<ReadonlyArray<NoticeEntry>, DatabaseUnavailable>
  /** The notices not sent yet (waiting, failing, given up), newest first. */
  unsent(limit: number): Effect.Effect<ReadonlyArray<UnsentNotice>, DatabaseUnavailable>
  /** A failed attempt: tried again from `retryAt`, or never when it is null (given up). */
  markFailed(key: string, error: string, retryAt: Date | null): Effect.Effect<void, DatabaseUnavailable>
}>()("zh/ports/NoticeRecords") {}
