// Public IPv4 addresses of the catalog's pools: each assigned to at most one holder, atomically.
import { Context, type Effect, Schema } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class PoolExhausted extends Schema.TaggedError<PoolExhausted>()("PoolExhausted", {
  pools: Schema.Array(Schema.String)
}) {}

export interface AssignedAddress {
  readonly pool: string
  /** Dotted quad, e.g. `203.0.113.10`. */
  readonly address: string
  /** Prefix length of the pool, e.g. 28. */
  readonly prefixLength: number
  readonly gateway: string
  readonly bridge: string
}

export class IpAddresses extends Context.Service<IpAddresses, {
  /**
   * Assigns a free address of the first pool (in the given order) that has one, to `holder` (an order id).
   * Idempotent per holder: a holder that already has an address gets the same one back. Never assigns an
   * address twice, also under concurrent calls.
   */
  assign(holder: string, pools: ReadonlyArray<string>): Effect.Effect<AssignedAddress, PoolExhausted | DatabaseUnavailable>
  /** Frees whatever `holder` holds; nothing held is fine. */
  release(holder: string): Effect.Effect<void, DatabaseUnavailable>
  /** What `holder` holds, if anything. */
  held(holder: string): Effect.Effect<AssignedAddress | undefined, DatabaseUnavailable>
}>()("zh/ports/IpAddresses") {}
