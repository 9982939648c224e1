// A game server as we record it: who owns it, which panel server it is (id, uuid, identifier), where players
// reach it, and its life state. The panel is never trusted to remember a suspension: this record is the truth.
import { Schema } from "effect"
import { OrderId, SubscriptionId } from "../billing/Billing.ts"

export const GameServerStatus = Schema.Literals([
  "active",
  /** The subscription lapsed: suspended on the panel (and stopped), kept until the grace window ends. */
  "suspended",
  /** Deleted from the panel for good. */
  "deleted"
])
export type GameServerStatus = typeof GameServerStatus.Type

/** A game server's id (a UUID; the service id of its order and subscription). */
export const GameServerId = Schema.String.pipe(Schema.brand("GameServerId"))
export type GameServerId = typeof GameServerId.Type

export class GameServer extends Schema.Class<GameServer>("GameServer")({
  id: GameServerId,
  userId: Schema.String,
  subscriptionId: SubscriptionId,
  orderId: OrderId,
  planId: Schema.String,
  /** The panel's name in the catalog. */
  panel: Schema.String,
  /** The panel's numeric id (Application API). */
  panelServerId: Schema.Int,
  /** The panel's uuid (Client API, Wings). */
  uuid: Schema.String,
  /** The panel's 8-character identifier: the `:id` of the customer's `/api/client/servers/:id/…` routes. */
  identifier: Schema.String,
  name: Schema.String,
  node: Schema.Int,
  allocationId: Schema.Int,
  /** `host:port` players connect to (the allocation's alias when it has one). */
  address: Schema.String,
  status: GameServerStatus,
  /** When a suspended server is deleted unless renewed. */
  graceUntil: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  deletedAt: Schema.NullOr(Schema.Date)
}) {}

/** What an order holds on a panel while its server is built: a node's memory and disk, and one allocation. */
export interface AllocationClaim {
  readonly holder: string
  readonly panel: string
  readonly node: number
  readonly allocationId: number
  readonly memoryMiB: number
  readonly diskMiB: number
  /** True once the server exists on the panel: its resources then count in the node's own figures. */
  readonly created: boolean
}
