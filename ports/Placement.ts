// Where new VMs go: capacity reservations per node and VMIDs from our own range, both decided atomically.
import { Context, type Effect, type Option } from "effect"
import type { Reservation } from "../domain/vps/Vps.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class Placement extends Context.Service<Placement, {
  /**
   * Under a cluster-wide lock, hands the cluster's pending reservations to `choose` and records what it picks
   * for `holder`, so two concurrent orders never both take a node's last slot. Idempotent per holder.
   */
  reserve(
    cluster: string,
    holder: string,
    choose: (pending: ReadonlyArray<Reservation>) => Option.Option<Omit<Reservation, "holder" | "cluster" | "vmid">>
  ): Effect.Effect<Option.Option<Reservation>, DatabaseUnavailable>
  releaseReservation(holder: string): Effect.Effect<void, DatabaseUnavailable>
  /**
   * The lowest VMID of [from, to) that neither we nor anyone (`taken`) use, recorded for `holder`;
   * the holder's current one if it has one. None when the range is full.
   */
  allocateVmid(cluster: string, holder: string, range: { readonly from: number; readonly to: number }): Effect.Effect<Option.Option<number>, DatabaseUnavailable>
  /** A VMID found in use upstream by something else: never hand it out again; the holder gets a new one. */
  markVmidForeign(cluster: string, vmid: number): Effect.Effect<void, DatabaseUnavailable>
  /** Frees the holder's VMID once its VM is destroyed. */
  releaseVmid(holder: string): Effect.Effect<void, DatabaseUnavailable>
  /** The VMID on the reservation, so the VM stops counting twice once it exists upstream. */
  attachVmid(holder: string, vmid: number): Effect.Effect<void, DatabaseUnavailable>
}>()("zh/ports/Placement") {}
