// The figures of the back-office's dashboard that our own records give, each read by one aggregate statement
// (never a row per customer or service in the process).
import { Context, type Effect } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export interface RecordedFigures {
  /** Monthly recurring revenue of the active subscriptions, in cents. */
  readonly mrr: {
    readonly activeSubscriptions: number
    /** The sum of their plans' monthly prices (prices are excluding VAT). */
    readonly excludingVatCents: number
    /** Of those, the ones with an invoice, and the sum of each one's latest invoice including VAT. */
    readonly invoicedSubscriptions: number
    readonly lastInvoicedIncludingVatCents: number
  }
  /** Active and suspended subscriptions by kind and plan. */
  readonly services: ReadonlyArray<{
    readonly kind: string
    readonly planId: string
    readonly planName: string | null
    readonly active: number
    readonly suspended: number
  }>
  /** Orders placed in [start, end), and those of them that failed. */
  readonly orders: { readonly placed: number; readonly failed: number }
  /** Renewals whose charge was declined and will be tried again, or that wait for the bank's approval. */
  readonly failedPayments: { readonly retrying: number; readonly awaitingAuthentication: number; readonly amountCents: number }
  /**
   * Refunds not done yet: operators' refund requests the gateway has not confirmed, and failed orders whose clean-up
   * (the refund of what was charged, the release of what was built) is pending; the oldest of them since when.
   */
  readonly openRefunds: { readonly requests: number; readonly requestedCents: number; readonly orders: number; readonly oldestSince: Date | null }
  /** Panel allocations our game servers hold (or are claiming), by panel. */
  readonly allocationsHeld: ReadonlyArray<{ readonly panel: string; readonly held: number }>
  /** What our VPS (not destroyed) take on each node, from their plans. */
  readonly committed: ReadonlyArray<{
    readonly cluster: string
    readonly node: string
    readonly vcpus: number
    readonly memoryMiB: number
    readonly diskGiB: number
  }>
}

export class BackOfficeFigures extends Context.Service<BackOfficeFigures, {
  recorded(day: { readonly start: Date; readonly end: Date }): Effect.Effect<RecordedFigures, DatabaseUnavailable>
}>()("zh/ports/BackOfficeFigures") {}
