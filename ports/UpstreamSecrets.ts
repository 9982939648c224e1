// Sealed upstream credentials (Proxmox passwords and tokens, panel API keys), by name.
import { Context, type Effect, type Option } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export interface StoredSecret {
  readonly name: string
  readonly sealed: string
  readonly updatedAt: Date
}

export class UpstreamSecrets extends Context.Service<UpstreamSecrets, {
  /** Inserts or replaces. */
  put(name: string, sealed: string, now: Date): Effect.Effect<void, DatabaseUnavailable>
  get(name: string): Effect.Effect<Option.Option<StoredSecret>, DatabaseUnavailable>
  /** Names and dates only, ordered by name. */
  list: Effect.Effect<ReadonlyArray<{ readonly name: string; readonly updatedAt: Date }>, DatabaseUnavailable>
  /** True when something was removed. */
  remove(name: string): Effect.Effect<boolean, DatabaseUnavailable>
  /** Every stored secret, for key rotation. */
  all: Effect.Effect<ReadonlyArray<StoredSecret>, DatabaseUnavailable>
}>()("zh/ports/UpstreamSecrets") {}
