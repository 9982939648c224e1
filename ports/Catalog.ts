// The catalog as stored: plans, OS templates, IP pools and Proxmox clusters (their credentials are sealed
// elsewhere, in UpstreamSecrets). Applying a catalog file is idempotent; retired entries stay for history.
import { Context, type Effect, type Option } from "effect"
import type { IpPool, OsTemplate, Plan } from "../domain/catalog/Plan.ts"

export interface ClusterEntry {
  readonly name: string
  readonly url: string
  readonly username: string | null
  readonly tokenId: string | null
  readonly tls: { readonly ca: string | null; readonly fingerprint: string | null; readonly insecure: boolean }
}

export type CatalogKind = "plan" | "template" | "ipPool" | "cluster"

export class Catalog extends Context.Service<Catalog, {
  upsertCluster(cluster: ClusterEntry): Effect.Effect<void>
  upsertTemplate(template: OsTemplate): Effect.Effect<void>
  /** Creates or updates the pool and adds its host addresses; assigned addresses are never touched. */
  upsertIpPool(pool: IpPool, addresses: ReadonlyArray<string>): Effect.Effect<void>
  upsertPlan(plan: Plan): Effect.Effect<void>
  /** Retired entries are no longer sold or chosen, but services using them keep working. False if unknown. */
  retire(kind: CatalogKind, id: string): Effect.Effect<boolean>
  /** Active plans (not retired), by price. */
  readonly plans: Effect.Effect<ReadonlyArray<Plan>>
  /** A plan by id, retired ones included (existing subscriptions renew on them). */
  plan(id: string): Effect.Effect<Option.Option<Plan & { readonly retired: boolean }>>
  /** The active template rows with this id (one per node holding a copy). */
  templates(id: string): Effect.Effect<ReadonlyArray<OsTemplate>>
  readonly allTemplates: Effect.Effect<ReadonlyArray<OsTemplate & { readonly retired: boolean }>>
  readonly ipPools: Effect.Effect<ReadonlyArray<IpPool & { readonly retired: boolean; readonly free: number; readonly assigned: number }>>
  cluster(name: string): Effect.Effect<Option.Option<ClusterEntry & { readonly retired: boolean }>>
  readonly clusters: Effect.Effect<ReadonlyArray<ClusterEntry & { readonly retired: boolean }>>
}>()("zh/ports/Catalog") {}
