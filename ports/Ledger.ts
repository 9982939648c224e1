// The record of money taken and given back.
import { Context, type Effect, type Option } from "effect"
import type { LedgerEntry } from "../domain/billing/Billing.ts"
import type { Keyset } from "../domain/billing/keyset.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class Ledger extends Context.Service<Ledger, {
  /** Records the entry; false when one of its kind and reference was already recorded (a replay: nothing written). */
  record(entry: LedgerEntry): Effect.Effect<boolean, DatabaseUnavailable>
  /** One entry by its id. */
  entry(id: string): Effect.Effect<Option.Option<LedgerEntry>, DatabaseUnavailable>
  forOrder(orderId: string): Effect.Effect<ReadonlyArray<LedgerEntry>, DatabaseUnavailable>
  /**
   * When each of the orders was paid: its charge that started its subscription (a payment it could not use, refunded,
   * does not count); an order not paid is absent. One read for a page of orders.
   */
  paidAt(orderIds: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, Date>, DatabaseUnavailable>
  forSubscription(subscriptionId: string): Effect.Effect<ReadonlyArray<LedgerEntry>, DatabaseUnavailable>
  /** A customer's charges and refunds, newest first (at most `limit`), after `after` (the last one of the page before). */
  forUser(userId: string, after: Keyset | null, limit: number): Effect.Effect<ReadonlyArray<LedgerEntry>, DatabaseUnavailable>
}>()("zh/ports/Ledger") {}
