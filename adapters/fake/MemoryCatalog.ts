// In-memory Catalog, with the same contract as the Postgres one. Its state is a service of its own so that
// MemoryIpAddresses assigns from the same pools. Each operation runs synchronously, so each is atomic.
import { Context, Effect, Layer, Option } from "effect"
import { compareAddresses } from "../../domain/catalog/ipv4.ts"
import type { IpPool, OsTemplate, Plan } from "../../domain/catalog/Plan.ts"
import { Catalog, type ClusterEntry, type PanelEntry, type UpsertOutcome } from "../../ports/Catalog.ts"

interface Row<A> {
  readonly value: A
  retired: boolean
}

export interface AddressRow {
  holder: string | null
  /** No longer listed by its pool while held: kept by its holder, never assigned again. */
  withdrawn: boolean
}

export interface PoolRow extends Row<IpPool> {
  /** By address; iterate through `sortedAddresses` for numeric order. */
  readonly addresses: Map<string, AddressRow>
}

export interface CatalogState {
  readonly clusters: Map<string, Row<ClusterEntry>>
  readonly panels: Map<string, Row<PanelEntry>>
  readonly templates: Map<string, Row<OsTemplate>>
  readonly pools: Map<string, PoolRow>
  readonly plans: Map<string, Row<Plan>>
  /** The plans an operator took off sale. */
  readonly offSale: Set<string>
}

export class MemoryCatalogState extends Context.Service<MemoryCatalogState, CatalogState>()("zh/fake/MemoryCatalogState") {}

export const sortedAddresses = (pool: PoolRow) => [...pool.addresses.keys()].sort(compareAddresses)

/** JSON with sorted keys: equal values compare equal whatever their key order, as jsonb does. */
const canonical = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v)

const byKey = <A>(key: (a: A) => string) => (a: A, b: A) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)

const upsert = <A>(rows: Map<string, Row<A>>, key: string, value: A): UpsertOutcome => {
  const current = rows.get(key)
  if (current !== undefined && canonical(current.value) === canonical(value)) return "unchanged"
  rows.set(key, { value: structuredClone(value), retired: current?.retired ?? false })
  return current === undefined ? "created" : "updated"
}

const withRetired = <A>(row: Row<A>) => ({ ...row.value, retired: row.retired })

// Only the port's fields are kept, as the table's columns would: a caller's extra properties are not stored.
const clusterOf = (c: ClusterEntry): ClusterEntry => ({
  name: c.name, url: c.url, username: c.username, tokenId: c.tokenId,
  tls: { ca: c.tls.ca, fingerprint: c.tls.fingerprint, insecure: c.tls.insecure }
})
const templateOf = (t: OsTemplate): OsTemplate => ({ id: t.id, name: t.name, cluster: t.cluster, node: t.node, vmid: t.vmid })
const poolOf = (p: IpPool): IpPool => ({ id: p.id, cluster: p.cluster, cidr: p.cidr, gateway: p.gateway, bridge: p.bridge, nodes: [...p.nodes] })
const templateKey = (t: OsTemplate) => `${t.id}\u0000${t.cluster}\u0000${t.node}`

const requireCluster = (state: CatalogState, cluster: string) =>
  state.clusters.has(cluster) ? Effect.void : Effect.die(new Error(`unknown cluster "${cluster}" (foreign key)`))

/** Adds the listed addresses, drops free unlisted ones, withdraws held unlisted ones. True if anything changed. */
const syncAddresses = (state: CatalogState, pool: PoolRow, addresses: ReadonlyArray<string>) => {
  const wanted = new Set(addresses)
  const taken = new Set([...state.pools.values()].filter((p) => p !== pool).flatMap((p) => [...p.addresses.keys()]))
  let changed = false
  for (const [address, row] of pool.addresses) {
    if (!wanted.has(address) && row.holder === null) pool.addresses.delete(address)
    else if (wanted.has(address) === row.withdrawn) row.withdrawn = !row.withdrawn
    else continue
    changed = true
  }
  for (const address of addresses) {
    if (pool.addresses.has(address) || taken.has(address)) continue
    pool.addresses.set(address, { holder: null, withdrawn: false })
    changed = true
  }
  return changed
}

export const makeCatalog = (state: CatalogState) =>
  Catalog.of({
    upsertCluster: (cluster) => Effect.sync(() => upsert(state.clusters, cluster.name, clusterOf(cluster))),
    upsertPanel: (panel) => Effect.sync(() => upsert(state.panels, panel.name, { name: panel.name, url: panel.url })),
    upsertTemplate: (template) =>
      Effect.andThen(requireCluster(state, template.cluster), Effect.sync(() => upsert(state.templates, templateKey(template), templateOf(template)))),
    upsertIpPool: (given, addresses) =>
      Effect.andThen(requireCluster(state, given.cluster), Effect.sync((): UpsertOutcome => {
        const pool = poolOf(given)
        const before = state.pools.get(pool.id)
        const same = before !== undefined && canonical(before.value) === canonical(pool)
        const row: PoolRow = { value: same ? before.value : pool, retired: before?.retired ?? false, addresses: before?.addresses ?? new Map() }
        state.pools.set(pool.id, row)
        const changed = syncAddresses(state, row, addresses)
        return before === undefined ? "created" : !same || changed ? "updated" : "unchanged"
      })),
    upsertPlan: (plan) => Effect.sync(() => upsert(state.plans, plan.id, plan)),
    retire: (kind, id) =>
      Effect.sync(() => {
        const rows: ReadonlyArray<Row<unknown>> = kind === "template"
          ? [...state.templates.values()].filter((t) => t.value.id === id)
          : [{ plan: state.plans, ipPool: state.pools, cluster: state.clusters, panel: state.panels }[kind].get(id)].filter((r) => r !== undefined)
        for (const row of rows) row.retired = true
        return rows.length > 0
      }),
    setOnSale: (id, onSale) =>
      Effect.sync(() => {
        if (!state.plans.has(id)) return Option.none()
        const before = !state.offSale.has(id)
        if (onSale) state.offSale.delete(id)
        else state.offSale.add(id)
        return Option.some(before)
      }),
    offSale: Effect.sync(() => new Set(state.offSale)),
    plans: Effect.sync(() =>
      [...state.plans.values()].filter((p) => !p.retired).map((p) => p.value)
        .sort((a, b) => a.priceCents - b.priceCents || byKey((p: Plan) => p.id)(a, b))
    ),
    allPlans: Effect.sync(() => [...state.plans.values()].map(withRetired).sort(byKey((p) => p.id))),
    plan: (id) => Effect.sync(() => Option.map(Option.fromNullishOr(state.plans.get(id)), withRetired)),
    templates: (id) =>
      Effect.sync(() =>
        [...state.templates.values()]
          .filter((t) => t.value.id === id && !t.retired && state.clusters.get(t.value.cluster)?.retired === false)
          .map((t) => t.value)
          .sort(byKey((t) => `${t.cluster}\u0000${t.node}`))
      ),
    allTemplates: Effect.sync(() => [...state.templates.values()].map(withRetired).sort(byKey(templateKey))),
    ipPools: Effect.sync(() =>
      [...state.pools.values()].map((p) => {
        const rows = [...p.addresses.values()]
        return {
          ...withRetired(p),
          free: rows.filter((a) => a.holder === null && !a.withdrawn).length,
          assigned: rows.filter((a) => a.holder !== null).length
        }
      }).sort(byKey((p) => p.id))
    ),
    cluster: (name) => Effect.sync(() => Option.map(Option.fromNullishOr(state.clusters.get(name)), withRetired)),
    clusters: Effect.sync(() => [...state.clusters.values()].map(withRetired).sort(byKey((c) => c.name))),
    panel: (name) => Effect.sync(() => Option.map(Option.fromNullishOr(state.panels.get(name)), withRetired)),
    panels: Effect.sync(() => [...state.panels.values()].map(withRetired).sort(byKey((p) => p.name)))
  })

export const makeState = Effect.sync((): CatalogState => ({
  clusters: new Map(),
  panels: new Map(),
  templates: new Map(),
  pools: new Map(),
  plans: new Map(),
  offSale: new Set()
}))

/** A catalog over fresh state (for tests that keep one instance across several layers). */
export const make = Effect.map(makeState, makeCatalog)

export const layerState = Layer.effect(MemoryCatalogState, makeState)

/** Catalog and its state, which MemoryIpAddresses.layer needs. */
export const layer = Layer.effect(Catalog, Effect.map(MemoryCatalogState, makeCatalog)).pipe(Layer.provideMerge(layerState))
