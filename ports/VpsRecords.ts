// The VPSes we run, one row each, and the snapshot names of each that a request is working on right now.
import { Context, type Effect, type Option } from "effect"
import type { Vps, VpsStatus } from "../domain/vps/Vps.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

/** What a request does to a snapshot: take it, or delete it. */
export type SnapshotWork = "create" | "delete"

/** A request's hold on one snapshot name of a VPS (case-insensitive, as Proxmox compares them) while it works. */
export interface SnapshotClaim {
  readonly id: string
  readonly vpsId: string
  readonly name: string
  readonly work: SnapshotWork
  readonly now: Date
  /** After this, the claim holds nothing: one left by a process that died cannot block the name for ever. */
  readonly expiresAt: Date
}

export type SnapshotClaimOutcome =
  /** The name is ours until released; the names other requests are taking now count toward the plan's limit. */
  | { readonly _tag: "Claimed"; readonly othersBeingTaken: ReadonlyArray<string> }
  /** Another request holds the name (an unexpired claim), to do `by`. */
  | { readonly _tag: "Held"; readonly by: SnapshotWork }

export class VpsRecords extends Context.Service<VpsRecords, {
  /** Idempotent per order: a retried step 6 returns the record created the first time. */
  create(vps: Vps, sealedRootPassword: string): Effect.Effect<Vps, DatabaseUnavailable>
  get(id: string): Effect.Effect<Option.Option<Vps>, DatabaseUnavailable>
  bySubscription(subscriptionId: string): Effect.Effect<Option.Option<Vps>, DatabaseUnavailable>
  forUser(userId: string): Effect.Effect<ReadonlyArray<Vps>, DatabaseUnavailable>
  /** Every VPS not destroyed (for reconciling our records with the clusters). */
  readonly live: Effect.Effect<ReadonlyArray<Vps>, DatabaseUnavailable>
  setStatus(id: string, status: VpsStatus, options?: { readonly graceUntil?: Date | null; readonly destroyedAt?: Date }): Effect.Effect<void, DatabaseUnavailable>
  setSealedRootPassword(id: string, sealed: string): Effect.Effect<void, DatabaseUnavailable>
  /**
   * Claims `claim.name` on the VPS unless an unexpired claim holds it, atomically across every instance. The claims
   * of one VPS are taken one after another, so each creation sees every other creation claimed before it that has
   * not been released (and a released one has finished upstream). Expired claims are dropped.
   */
  claimSnapshotName(claim: SnapshotClaim): Effect.Effect<SnapshotClaimOutcome, DatabaseUnavailable>
  /** The request is done with the name (whatever the outcome); a claim already expired and retaken is left alone. */
  releaseSnapshotClaim(id: string): Effect.Effect<void, DatabaseUnavailable>
}>()("zh/ports/VpsRecords") {}
