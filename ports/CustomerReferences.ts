// Who a reference an operator was given belongs to: an invoice or credit-note number, a VPS's IP address, a game
// server's address. Exact matches on unique or indexed columns, for the back-office's search.
import { Context, type Effect } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class CustomerReferences extends Context.Service<CustomerReferences, {
  /** The ids of the accounts `reference` names (none, or a few: an address may have had several holders). */
  holders(reference: string, limit: number): Effect.Effect<ReadonlyArray<string>, DatabaseUnavailable>
}>()("zh/ports/CustomerReferences") {}
