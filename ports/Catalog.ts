// The catalog as stored: plans, OS templates, IP pools, Proxmox clusters and Pterodactyl panels (their credentials
// are sealed elsewhere, in UpstreamSecrets). Applying a catalog file is idempotent; retired entries stay for history.
import { Context, type Effect, type Option } from "effect"
import type { IpPool, OsTemplate, Plan } from "../domain/catalog/Plan.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export interface ClusterEntry {
  readonly name: string
  readonly url: string
  readonly username: string | null
  readonly tokenId: string | null
  readonly tls: { readonly ca: string | null; readonly fingerprint: string | null; readonly insecure: boolean }
}

/** A Pterodactyl panel; its application and client API keys are sealed in UpstreamSecrets. */
export interface PanelEntry {
  readonly name: string
  /** `https://panel.example` (no path). */
  readonly url: string
}

export type CatalogKind = "plan" | "template" | "ipPool" | "cluster" | "panel"

/** What an upsert did: an identical entry is left alone (so applying a file twice changes nothing). */
export type UpsertOutcome = "created" | "updated" | "unchanged"

export class Catalog extends Context.Service<Catalog, {
  upsertCluster(cluster: ClusterEntry): Effect.Effect<UpsertOutcome, DatabaseUnavailable>
  upsertPanel(panel: PanelEntry): Effect.Effect<UpsertOutcome, DatabaseUnavailable>
  /** The template's cluster must exist (a defect otherwise). */
  upsertTemplate(template: OsTemplate): Effect.Effect<UpsertOutcome, DatabaseUnavailable>
  /**
   * Creates or updates the pool (its cluster must exist) and adds its host addresses; assigned addresses are never
   * touched. Free addresses no longer listed are dropped; assigned ones no longer listed are withdrawn: kept by their
   * holder, never assigned again once released.
   */
  upsertIpPool(pool: IpPool, addresses: ReadonlyArray<string>): Effect.Effect<UpsertOutcome, DatabaseUnavailable>
  upsertPlan(plan: Plan): Effect.Effect<UpsertOutcome, DatabaseUnavailable>
  /**
   * Retired entries are no longer sold or chosen, but services using them keep working. False if unknown.
   * Upserting never brings a retired entry back.
   */
  retire(kind: CatalogKind, id: string): Effect.Effect<boolean, DatabaseUnavailable>
  /**
   * Puts a plan on sale or takes it off (an operator's choice, apart from the catalog file: applying the file again
   * leaves it as it is). Answers whether it was on sale before; none for an unknown plan. The plan's row is locked
   * while it changes, so the answer is exact under concurrent calls.
   */
  setOnSale(id: string, onSale: boolean): Effect.Effect<Option.Option<boolean>, DatabaseUnavailable>
  /** The ids of the plans an operator took off sale (retired ones included). */
  readonly offSale: Effect.Effect<ReadonlySet<string>, DatabaseUnavailable>
  /** Active plans (not retired), by price. */
  readonly plans: Effect.Effect<ReadonlyArray<Plan>, DatabaseUnavailable>
  /** Every plan, retired ones included, by id. */
  readonly allPlans: Effect.Effect<ReadonlyArray<Plan & { readonly retired: boolean }>, DatabaseUnavailable>
  /** A plan by id, retired ones included (existing subscriptions renew on them). */
  plan(id: string): Effect.Effect<Option.Option<Plan & { readonly retired: boolean }>, DatabaseUnavailable>
  /** The active template rows with this id (one per node holding a copy), on active clusters. */
  templates(id: string): Effect.Effect<ReadonlyArray<OsTemplate>, DatabaseUnavailable>
  readonly allTemplates: Effect.Effect<ReadonlyArray<OsTemplate & { readonly retired: boolean }>, DatabaseUnavailable>
  readonly ipPools: Effect.Effect<ReadonlyArray<IpPool & { readonly retired: boolean; readonly free: number; readonly assigned: number }>, DatabaseUnavailable>
  cluster(name: string): Effect.Effect<Option.Option<ClusterEntry & { readonly retired: boolean }>, DatabaseUnavailable>
  readonly clusters: Effect.Effect<ReadonlyArray<ClusterEntry & { readonly retired: boolean }>, DatabaseUnavailable>
  panel(name: string): Effect.Effect<Option.Option<PanelEntry & { readonly retired: boolean }>, DatabaseUnavailable>
  readonly panels: Effect.Effect<ReadonlyArray<PanelEntry & { readonly retired: boolean }>, DatabaseUnavailable>
}>()("zh/ports/Catalog") {}
