// The catalog in Postgres. Each upsert is one INSERT … ON CONFLICT DO UPDATE that only writes a row that differs,
// and says which happened (`xmax = 0` marks a freshly inserted row); a pool and its addresses change together.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Plan } from "../../domain/catalog/Plan.ts"
import { Catalog, type CatalogKind, type UpsertOutcome } from "../../ports/Catalog.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const Outcome = Schema.Struct({ created: Schema.Boolean })
const Count = Schema.Struct({ n: Schema.Int })

const ClusterRow = snakeColumns(Schema.Struct({
  name: Schema.String,
  url: Schema.String,
  username: Schema.NullOr(Schema.String),
  tokenId: Schema.NullOr(Schema.String),
  tls: Schema.Struct({ ca: Schema.NullOr(Schema.String), fingerprint: Schema.NullOr(Schema.String), insecure: Schema.Boolean }),
  retired: Schema.Boolean
}))
const PanelRow = Schema.Struct({ name: Schema.String, url: Schema.String, retired: Schema.Boolean })
const TemplateRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  cluster: Schema.String,
  node: Schema.String,
  vmid: Schema.Int,
  retired: Schema.Boolean
})
const PoolRow = Schema.Struct({
  id: Schema.String,
  cluster: Schema.String,
  cidr: Schema.String,
  gateway: Schema.String,
  bridge: Schema.String,
  nodes: Schema.Array(Schema.String),
  retired: Schema.Boolean,
  free: Schema.Int,
  assigned: Schema.Int
})
/** A plan is stored as its columns and the rest of its spec in jsonb; the statement puts them back together. */
const PlanRow = Schema.Struct({ plan: Plan, retired: Schema.Boolean })

const outcome = (row: Option.Option<typeof Outcome.Type>): UpsertOutcome =>
  Option.match(row, { onNone: () => "unchanged", onSome: (r) => r.created ? "created" : "updated" })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /** An upsert that writes only a row that differs, `RETURNING (xmax = 0) AS created`. */
  const upsert = <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    SqlSchema.findOneOption({ Request: Schema.Void, Result: Outcome, execute: () => statement })(undefined).pipe(
      Effect.map(outcome)
    )
  const counted = <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    SqlSchema.findOne({ Request: Schema.Void, Result: Count, execute: () => statement })(undefined).pipe(
      Effect.map((c) => c.n)
    )
  const all = <S extends Schema.Top>(Result: S) =>
  <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    SqlSchema.findAll({ Request: Schema.Void, Result, execute: () => statement })(undefined)

  const clusterRows = all(ClusterRow)
  const clusterColumns = sql`name, url, username, token_id,
    json_build_object('ca', tls_ca, 'fingerprint', tls_fingerprint, 'insecure', tls_insecure) AS tls,
    retired_at IS NOT NULL AS retired`
  const panelRows = all(PanelRow)
  const planRows = <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    all(PlanRow)(statement).pipe(Effect.map((rows) => rows.map(({ plan, retired }) => ({ ...plan, retired }))))
  const planColumns = sql`spec || jsonb_build_object('id', id, 'kind', kind, 'name', name, 'priceCents', price_cents) AS plan,
    retired_at IS NOT NULL AS retired`
  const poolAddresses = (id: string, addresses: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const wanted = sql`SELECT a::inet FROM jsonb_array_elements_text(${JSON.stringify(addresses)}::jsonb) AS a`
      // Free addresses no longer listed go; held ones stay with their holder but are withdrawn from assignment.
      const dropped = yield* counted(sql`WITH d AS (DELETE FROM ip_addresses WHERE pool_id = ${id} AND holder IS NULL
        AND address NOT IN (${wanted}) RETURNING 1) SELECT count(*)::int AS n FROM d`)
      const withdrawn = yield* counted(sql`WITH w AS (UPDATE ip_addresses SET withdrawn_at = now() WHERE pool_id = ${id}
        AND holder IS NOT NULL AND withdrawn_at IS NULL AND address NOT IN (${wanted}) RETURNING 1) SELECT count(*)::int AS n FROM w`)
      const restored = yield* counted(sql`WITH r AS (UPDATE ip_addresses SET withdrawn_at = NULL WHERE pool_id = ${id}
        AND withdrawn_at IS NOT NULL AND address IN (${wanted}) RETURNING 1) SELECT count(*)::int AS n FROM r`)
      // An address already in another pool is skipped (UNIQUE (address)): a public address has one pool.
      const added = yield* counted(sql`WITH i AS (INSERT INTO ip_addresses (pool_id, address) SELECT ${id}, a FROM (${wanted}) AS w(a)
        ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*)::int AS n FROM i`)
      return dropped + withdrawn + restored + added
    })

  return Catalog.of({
    upsertCluster: (c) =>
      sql`INSERT INTO proxmox_clusters (name, url, username, token_id, tls_ca, tls_fingerprint, tls_insecure)
          VALUES (${c.name}, ${c.url}, ${c.username}, ${c.tokenId}, ${c.tls.ca}, ${c.tls.fingerprint}, ${c.tls.insecure})
          ON CONFLICT (name) DO UPDATE SET url = excluded.url, username = excluded.username, token_id = excluded.token_id,
            tls_ca = excluded.tls_ca, tls_fingerprint = excluded.tls_fingerprint, tls_insecure = excluded.tls_insecure,
            updated_at = now()
          WHERE (proxmox_clusters.url, proxmox_clusters.username, proxmox_clusters.token_id, proxmox_clusters.tls_ca,
                 proxmox_clusters.tls_fingerprint, proxmox_clusters.tls_insecure)
            IS DISTINCT FROM (excluded.url, excluded.username, excluded.token_id, excluded.tls_ca,
                 excluded.tls_fingerprint, excluded.tls_insecure)
          RETURNING (xmax = 0) AS created`.pipe(upsert, stored),
    upsertPanel: (p) =>
      sql`INSERT INTO pterodactyl_panels (name, url) VALUES (${p.name}, ${p.url})
          ON CONFLICT (name) DO UPDATE SET url = excluded.url, updated_at = now()
          WHERE pterodactyl_panels.url IS DISTINCT FROM excluded.url
          RETURNING (xmax = 0) AS created`.pipe(upsert, stored),
    upsertTemplate: (t) =>
      sql`INSERT INTO os_templates (id, cluster, node, vmid, name) VALUES (${t.id}, ${t.cluster}, ${t.node}, ${t.vmid}, ${t.name})
          ON CONFLICT (id, cluster, node) DO UPDATE SET vmid = excluded.vmid, name = excluded.name, updated_at = now()
          WHERE (os_templates.vmid, os_templates.name) IS DISTINCT FROM (excluded.vmid, excluded.name)
          RETURNING (xmax = 0) AS created`.pipe(upsert, stored),
    upsertIpPool: (pool, addresses) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = yield* upsert(sql`
          INSERT INTO ip_pools (id, cluster, cidr, gateway, bridge, nodes)
          VALUES (${pool.id}, ${pool.cluster}, ${pool.cidr}::cidr, ${pool.gateway}::inet, ${pool.bridge}, ${JSON.stringify(pool.nodes)}::jsonb)
          ON CONFLICT (id) DO UPDATE SET cluster = excluded.cluster, cidr = excluded.cidr, gateway = excluded.gateway,
            bridge = excluded.bridge, nodes = excluded.nodes, updated_at = now()
          WHERE (ip_pools.cluster, ip_pools.cidr, ip_pools.gateway, ip_pools.bridge, ip_pools.nodes)
            IS DISTINCT FROM (excluded.cluster, excluded.cidr, excluded.gateway, excluded.bridge, excluded.nodes)
          RETURNING (xmax = 0) AS created`)
        const changed = yield* poolAddresses(pool.id, addresses)
        return row === "unchanged" && changed > 0 ? "updated" as const : row
      })).pipe(stored),
    upsertPlan: (plan) => {
      const { id, kind, name, priceCents, ...spec } = plan
      return sql`INSERT INTO plans (id, kind, name, price_cents, spec) VALUES (${id}, ${kind}, ${name}, ${priceCents}, ${JSON.stringify(spec)}::jsonb)
          ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, name = excluded.name, price_cents = excluded.price_cents,
            spec = excluded.spec, updated_at = now()
          WHERE (plans.kind, plans.name, plans.price_cents, plans.spec)
            IS DISTINCT FROM (excluded.kind, excluded.name, excluded.price_cents, excluded.spec)
          RETURNING (xmax = 0) AS created`.pipe(upsert, stored)
    },
    retire: (kind: CatalogKind, id) => {
      const statement = {
        plan: () => sql`UPDATE plans SET retired_at = coalesce(retired_at, now()) WHERE id = ${id} RETURNING 1`,
        template: () => sql`UPDATE os_templates SET retired_at = coalesce(retired_at, now()) WHERE id = ${id} RETURNING 1`,
        ipPool: () => sql`UPDATE ip_pools SET retired_at = coalesce(retired_at, now()) WHERE id = ${id} RETURNING 1`,
        cluster: () => sql`UPDATE proxmox_clusters SET retired_at = coalesce(retired_at, now()) WHERE name = ${id} RETURNING 1`,
        panel: () => sql`UPDATE pterodactyl_panels SET retired_at = coalesce(retired_at, now()) WHERE name = ${id} RETURNING 1`
      }[kind]
      return statement().pipe(Effect.map((r) => r.length > 0), stored)
    },
    setOnSale: (id, onSale) =>
      sql`WITH old AS (SELECT id, off_sale FROM plans WHERE id = ${id} FOR UPDATE)
          UPDATE plans SET off_sale = ${!onSale}, updated_at = now() FROM old WHERE plans.id = old.id
          RETURNING NOT old.off_sale AS "onSale"`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => row["onSale"] === true)),
        stored
      ),
    offSale: sql`SELECT id FROM plans WHERE off_sale`.pipe(
      Effect.map((rows) => new Set(rows.map((row) => String(row["id"])))),
      stored
    ),
    plans: planRows(sql`SELECT ${planColumns} FROM plans WHERE retired_at IS NULL ORDER BY price_cents, id COLLATE "C"`).pipe(
      Effect.map((all) => all.map(({ retired: _, ...plan }) => plan)),
      stored
    ),
    allPlans: planRows(sql`SELECT ${planColumns} FROM plans ORDER BY id COLLATE "C"`).pipe(stored),
    plan: (id) =>
      planRows(sql`SELECT ${planColumns} FROM plans WHERE id = ${id}`).pipe(
        Effect.map((found) => Option.fromNullishOr(found[0])),
        stored
      ),
    templates: (id) =>
      sql`SELECT t.id, t.name, t.cluster, t.node, t.vmid, false AS retired FROM os_templates t
          JOIN proxmox_clusters c ON c.name = t.cluster
          WHERE t.id = ${id} AND t.retired_at IS NULL AND c.retired_at IS NULL
          ORDER BY t.cluster COLLATE "C", t.node COLLATE "C"`.pipe(
        all(TemplateRow),
        Effect.map((all) => all.map(({ retired: _, ...template }) => template)),
        stored
      ),
    allTemplates: sql`SELECT id, name, cluster, node, vmid, retired_at IS NOT NULL AS retired FROM os_templates
        ORDER BY id COLLATE "C", cluster COLLATE "C", node COLLATE "C"`.pipe(all(TemplateRow), stored),
    ipPools: sql`SELECT p.id, p.cluster, p.cidr::text AS cidr, host(p.gateway) AS gateway, p.bridge, p.nodes,
          p.retired_at IS NOT NULL AS retired,
          (SELECT count(*)::int FROM ip_addresses a WHERE a.pool_id = p.id AND a.holder IS NULL AND a.withdrawn_at IS NULL) AS free,
          (SELECT count(*)::int FROM ip_addresses a WHERE a.pool_id = p.id AND a.holder IS NOT NULL) AS assigned
        FROM ip_pools p ORDER BY p.id COLLATE "C"`.pipe(all(PoolRow), stored),
    cluster: (name) =>
      clusterRows(sql`SELECT ${clusterColumns} FROM proxmox_clusters WHERE name = ${name}`).pipe(
        Effect.map((found) => Option.fromNullishOr(found[0])),
        stored
      ),
    clusters: clusterRows(sql`SELECT ${clusterColumns} FROM proxmox_clusters ORDER BY name COLLATE "C"`).pipe(stored),
    panel: (name) =>
      panelRows(sql`SELECT name, url, retired_at IS NOT NULL AS retired FROM pterodactyl_panels WHERE name = ${name}`).pipe(
        Effect.map((found) => Option.fromNullishOr(found[0])),
        stored
      ),
    panels: panelRows(sql`SELECT name, url, retired_at IS NOT NULL AS retired FROM pterodactyl_panels ORDER BY name COLLATE "C"`)
      .pipe(stored)
  })
})

export const layer = Layer.effect(Catalog, make)
