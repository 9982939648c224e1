// What can be bought: VPS plans (on Proxmox) and game plans (on Pterodactyl), priced monthly in euro cents.
import { Schema } from "effect"
import { PlanId } from "../billing/Billing.ts"
import type { PlanTerms } from "../billing/HostedService.ts"

export const VpsPlan = Schema.Struct({
  kind: Schema.Literal("vps"),
  id: Schema.String,
  name: Schema.String,
  priceCents: Schema.Int,
  vcpu: Schema.Int,
  ramMiB: Schema.Int,
  diskGiB: Schema.Int,
  /** Ids of the OS templates this plan may be installed with. */
  templates: Schema.Array(Schema.String),
  snapshotLimit: Schema.Int
})
export type VpsPlan = typeof VpsPlan.Type

export const GamePlan = Schema.Struct({
  kind: Schema.Literal("game"),
  id: Schema.String,
  name: Schema.String,
  priceCents: Schema.Int,
  panel: Schema.String,
  eggId: Schema.Int,
  dockerImage: Schema.String,
  memoryMiB: Schema.Int,
  diskMiB: Schema.Int,
  cpuPercent: Schema.Int,
  io: Schema.Int,
  databases: Schema.Int,
  backups: Schema.Int,
  allocations: Schema.Int,
  environment: Schema.Record(Schema.String, Schema.String),
  /** Egg variables the customer may set when ordering. */
  userVariables: Schema.Array(Schema.String)
})
export type GamePlan = typeof GamePlan.Type

export const Plan = Schema.Union([VpsPlan, GamePlan])
export type Plan = typeof Plan.Type

export interface OsTemplate {
  readonly id: string
  readonly name: string
  readonly cluster: string
  /** One row per node that holds a copy (a full clone stays on the template's node). */
  readonly node: string
  readonly vmid: number
}

export interface IpPool {
  readonly id: string
  readonly cluster: string
  readonly cidr: string
  readonly gateway: string
  readonly bridge: string
  readonly nodes: ReadonlyArray<string>
}

/** What billing charges for a plan, every month. */
export const termsOf = (plan: Plan): PlanTerms => ({ id: PlanId.make(plan.id), name: plan.name, priceCents: plan.priceCents })
