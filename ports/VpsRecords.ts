// The VPSes we run, one row each.
import { Context, type Effect, type Option } from "effect"
import type { Vps, VpsStatus } from "../domain/vps/Vps.ts"

export class VpsRecords extends Context.Service<VpsRecords, {
  /** Idempotent per order: a retried step 6 returns the record created the first time. */
  create(vps: Vps, sealedRootPassword: string): Effect.Effect<Vps>
  get(id: string): Effect.Effect<Option.Option<Vps>>
  bySubscription(subscriptionId: string): Effect.Effect<Option.Option<Vps>>
  forUser(userId: string): Effect.Effect<ReadonlyArray<Vps>>
  /** Every VPS not destroyed (for reconciling our records with the clusters). */
  readonly live: Effect.Effect<ReadonlyArray<Vps>>
  setStatus(id: string, status: VpsStatus, options?: { readonly graceUntil?: Date | null; readonly destroyedAt?: Date }): Effect.Effect<void>
  setSealedRootPassword(id: string, sealed: string): Effect.Effect<void>
}>()("zh/ports/VpsRecords") {}
