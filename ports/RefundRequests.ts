// Refunds operators ask for, reserved against their charge before the gateway is called: what is reserved or given
// back never exceeds what was taken, however many operators click at once.
import { Context, type Effect } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export interface RefundRequest {
  readonly id: string
  /** The ledger's charge entry it gives money back from. */
  readonly chargeId: string
  readonly idempotencyKey: string
  readonly amountCents: number
  readonly reason: string
  readonly requestedBy: string
  readonly requestedAt: Date
  /** The ledger's refund entry once the gateway gave the money back; null while pending. */
  readonly refundEntryId: string | null
}

export type Reservation =
  /** Reserved now. */
  | { readonly _tag: "Reserved"; readonly request: RefundRequest }
  /** The same key was reserved before, for the same charge and amount: the same refund (maybe pending still). */
  | { readonly _tag: "Replayed"; readonly request: RefundRequest }
  /** The key was used for another charge or amount. */
  | { readonly _tag: "KeyReused" }
  /** More than is left to give back of the charge (refunds given and reserved counted). */
  | { readonly _tag: "Exceeds"; readonly refundableCents: number }
  /** No charge has that id. */
  | { readonly _tag: "NoSuchCharge" }

export class RefundRequests extends Context.Service<RefundRequests, {
  /** Reserves `amountCents` of the charge under the key, in one transaction that holds the charge (see Reservation). */
  reserve(request: Omit<RefundRequest, "refundEntryId">): Effect.Effect<Reservation, DatabaseUnavailable>
  /**
   * The refund is recorded in the ledger as `refundEntryId` (call it in the same transaction, after the entry): a
   * compare-and-set on a pending request, false when another completed it first.
   */
  complete(id: string, refundEntryId: string): Effect.Effect<boolean, DatabaseUnavailable>
  /** What is left to give back of the charge: its amount less every refund of it and every pending request. */
  refundable(chargeId: string): Effect.Effect<number, DatabaseUnavailable>
}>()("zh/ports/RefundRequests") {}
