// The VMIDs the Proxmox adapter gives our machines, kept where every instance sees them (reference/proxmox.md: nextid
// reserves nothing, so we allocate from our own range): one per order, claimed atomically, and the ones something else
// holds set aside for good. Only the Proxmox adapter uses it; the domain asks Virtualization for an order's machine.
import { Context, type Effect, type Option } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export interface VmidRange {
  readonly from: number
  /** Exclusive. */
  readonly to: number
}

export class ProxmoxVmids extends Context.Service<ProxmoxVmids, {
  /**
   * The lowest VMID of the range that neither we nor anyone (set aside) use, recorded for `order`; the order's current
   * one if it has one. None when the range is full.
   */
  allocate(cluster: string, order: string, range: VmidRange): Effect.Effect<Option.Option<number>, DatabaseUnavailable>
  /** A VMID found in use upstream by something else: never handed out again; its holder (if any) loses it. */
  setAside(cluster: string, vmid: number): Effect.Effect<void, DatabaseUnavailable>
  /** Frees the order's VMID (its machine is gone, or was never made). */
  release(order: string): Effect.Effect<void, DatabaseUnavailable>
  /** The orders holding VMIDs on the cluster, by VMID. */
  holders(cluster: string): Effect.Effect<ReadonlyMap<number, string>, DatabaseUnavailable>
}>()("zh/ports/ProxmoxVmids") {}
