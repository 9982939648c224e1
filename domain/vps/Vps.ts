// A VPS as we record it: who owns it, where it runs, its address, and its life state.
import { Schema } from "effect"
import { OrderId, SubscriptionId } from "../billing/Billing.ts"

export const VpsStatus = Schema.Literals([
  "running",
  "stopped",
  /** The subscription lapsed: stopped, final snapshot taken, kept until the grace window ends. */
  "suspended",
  "destroyed"
])
export type VpsStatus = typeof VpsStatus.Type

/** A VPS's id (a UUID; the service id of its order and subscription). */
export const VpsId = Schema.String.pipe(Schema.brand("VpsId"))
export type VpsId = typeof VpsId.Type

export class Vps extends Schema.Class<Vps>("Vps")({
  id: VpsId,
  userId: Schema.String,
  subscriptionId: SubscriptionId,
  orderId: OrderId,
  planId: Schema.String,
  cluster: Schema.String,
  node: Schema.String,
  vmid: Schema.Int,
  hostname: Schema.String,
  templateId: Schema.String,
  address: Schema.String,
  status: VpsStatus,
  /** When a suspended VPS is destroyed unless renewed. */
  graceUntil: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  destroyedAt: Schema.NullOr(Schema.Date)
}) {}

/** Room held on a node for an order (its holder) until the order's machine counts in the node's own figures. */
export interface Reservation {
  readonly holder: string
  readonly cluster: string
  readonly node: string
  readonly cpus: number
  readonly memoryMiB: number
  readonly diskGiB: number
}
