// Where new machines go: capacity reserved on a node for an order until its machine counts in the node's own figures,
// decided atomically so two orders never both take a node's last room.
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
    choose: (pending: ReadonlyArray<Reservation>) => Option.Option<Omit<Reservation, "holder" | "cluster">>
  ): Effect.Effect<Option.Option<Reservation>, DatabaseUnavailable>
  releaseReservation(holder: string): Effect.Effect<void, DatabaseUnavailable>
  /** The cluster's reservations, in the order they were made (what `choose` would be shown now). */
  pending(cluster: string): Effect.Effect<ReadonlyArray<Reservation>, DatabaseUnavailable>
}>()("zh/ports/Placement") {}
