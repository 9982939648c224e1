// The catalog in Postgres. Each upsert is one INSERT … ON CONFLICT DO UPDATE that only writes a row that differs,
// and says which happened (`xmax = 0` marks a freshly inserted row); a pool and its addresses change together.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Plan } from "../../domain/catalog/Plan.ts"
import { Catalog, type CatalogKind, type UpsertOutcome } from "../../ports/Catalog.ts"

const Outcome = Schema.Array(Schema.Struct({ created: Schema.Boolean }))
const Count = Schema.Array(Schema.Struct({ n: Schema.Int }))

const ClusterRow = Schema.Struct({
  name: Schema.String,
  url: Schema.String,
  username: Schema.NullOr(Schema.String),
  token_id: Schema.NullOr(Schema.String),
  tls_ca: Schema.NullOr(Schema.String),
  tls_fingerprint: Schema.NullOr(Schema.String),
  tls_insecure: Schema.Boolean,
  retired: Schema.Boolean
})
const toCluster = (r: typeof ClusterRow.Type) => ({
  name: r.name,
  url: r.url,
  username: r.username,
  tokenId: r.token_id,
  tls: { ca: r.tls_ca, fingerprint: r.tls_fingerprint, insecure: r.tls_insecure },
  retired: r.retired
})
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
const PlanRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  name: Schema.String,
  price_cents: Schema.Int,
  spec: Schema.Record(Schema.String, Schema.Unknown),
  retired: Schema.Boolean
})
const decodePlan = Schema.decodeUnknownEffect(Plan)
const toPlan = (r: typeof PlanRow.Type) =>
  Effect.map(decodePlan({ ...r.spec, id: r.id, kind: r.kind, name: r.name, priceCents: r.price_cents }), (plan) => ({ ...plan, retired: r.retired }))

const outcome = (rows: typeof Outcome.Type): UpsertOutcome =>
  rows[0] === undefined ? "unchanged" : rows[0].created ? "created" : "updated"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = <S extends Schema.Top>(schema: S) => Schema.decodeUnknownEffect(Schema.Array(schema))
  const upserted = Effect.flatMap(Schema.decodeUnknownEffect(Outcome))
  const counted = Effect.flatMap((r: unknown) => Effect.map(Schema.decodeUnknownEffect(Count)(r), (c) => c[0]?.n ?? 0))

  const clusterRows = <E>(statement: Effect.Effect<ReadonlyArray<unknown>, E>) =>
    statement.pipe(Effect.flatMap(rows(ClusterRow)), Effect.map((all) => all.map(toCluster)), Effect.orDie)
  const clusterColumns = sql`name, url, username, token_id, tls_ca, tls_fingerprint, tls_insecure, retired_at IS NOT NULL AS retired`
  const panelRows = <E>(statement: Effect.Effect<ReadonlyArray<unknown>, E>) =>
    statement.pipe(Effect.flatMap(rows(PanelRow)), Effect.orDie)
  const planRows = <E>(statement: Effect.Effect<ReadonlyArray<unknown>, E>) =>
    statement.pipe(Effect.flatMap(rows(PlanRow)), Effect.flatMap(Effect.forEach(toPlan)), Effect.orDie)
  const planColumns = sql`id, kind, name, price_cents, spec, retired_at IS NOT NULL AS retired`
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
          RETURNING (xmax = 0) AS created`.pipe(upserted, Effect.map(outcome), Effect.orDie),
    upsertPanel: (p) =>
      sql`INSERT INTO pterodactyl_panels (name, url) VALUES (${p.name}, ${p.url})
          ON CONFLICT (name) DO UPDATE SET url = excluded.url, updated_at = now()
          WHERE pterodactyl_panels.url IS DISTINCT FROM excluded.url
          RETURNING (xmax = 0) AS created`.pipe(upserted, Effect.map(outcome), Effect.orDie),
    upsertTemplate: (t) =>
      sql`INSERT INTO os_templates (id, cluster, node, vmid, name) VALUES (${t.id}, ${t.cluster}, ${t.node}, ${t.vmid}, ${t.name})
          ON CONFLICT (id, cluster, node) DO UPDATE SET vmid = excluded.vmid, name = excluded.name, updated_at = now()
          WHERE (os_templates.vmid, os_templates.name) IS DISTINCT FROM (excluded.vmid, excluded.name)
          RETURNING (xmax = 0) AS created`.pipe(upserted, Effect.map(outcome), Effect.orDie),
    upsertIpPool: (pool, addresses) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = outcome(yield* upserted(sql`
          INSERT INTO ip_pools (id, cluster, cidr, gateway, bridge, nodes)
          VALUES (${pool.id}, ${pool.cluster}, ${pool.cidr}::cidr, ${pool.gateway}::inet, ${pool.bridge}, ${JSON.stringify(pool.nodes)}::jsonb)
          ON CONFLICT (id) DO UPDATE SET cluster = excluded.cluster, cidr = excluded.cidr, gateway = excluded.gateway,
            bridge = excluded.bridge, nodes = excluded.nodes, updated_at = now()
          WHERE (ip_pools.cluster, ip_pools.cidr, ip_pools.gateway, ip_pools.bridge, ip_pools.nodes)
            IS DISTINCT FROM (excluded.cluster, excluded.cidr, excluded.gateway, excluded.bridge, excluded.nodes)
          RETURNING (xmax = 0) AS created`))
        const changed = yield* poolAddresses(pool.id, addresses)
        return row === "unchanged" && changed > 0 ? "updated" as const : row
      })).pipe(Effect.orDie),
    upsertPlan: (plan) => {
      const { id, kind, name, priceCents, ...spec } = plan
      return sql`INSERT INTO plans (id, kind, name, price_cents, spec) VALUES (${id}, ${kind}, ${name}, ${priceCents}, ${JSON.stringify(spec)}::jsonb)
          ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, name = excluded.name, price_cents = excluded.price_cents,
            spec = excluded.spec, updated_at = now()
          WHERE (plans.kind, plans.name, plans.price_cents, plans.spec)
            IS DISTINCT FROM (excluded.kind, excluded.name, excluded.price_cents, excluded.spec)
          RETURNING (xmax = 0) AS created`.pipe(upserted, Effect.map(outcome), Effect.orDie)
    },
    retire: (kind: CatalogKind, id) => {
      const statement = {
        plan: () => sql`UPDATE plans SET retired_at = coalesce(retired_at, now()) WHERE id = ${id} RETURNING 1`,
        template: () => sql`UPDATE os_templates SET retired_at = coalesce(retired_at, now()) WHERE id = ${id} RETURNING 1`,
        ipPool: () => sql`UPDATE ip_pools SET retired_at = coalesce(retired_at, now()) WHERE id = ${id} RETURNING 1`,
        cluster: () => sql`UPDATE proxmox_clusters SET retired_at = coalesce(retired_at, now()) WHERE name = ${id} RETURNING 1`,
        panel: () => sql`UPDATE pterodactyl_panels SET retired_at = coalesce(retired_at, now()) WHERE name = ${id} RETURNING 1`
      }[kind]
      return statement().pipe(Effect.map((r) => r.length > 0), Effect.orDie)
    },
    plans: planRows(sql`SELECT ${planColumns} FROM plans WHERE retired_at IS NULL ORDER BY price_cents, id COLLATE "C"`).pipe(
      Effect.map((all) => all.map(({ retired: _, ...plan }) => plan))
    ),
    allPlans: planRows(sql`SELECT ${planColumns} FROM plans ORDER BY id COLLATE "C"`),
    plan: (id) =>
      Effect.map(planRows(sql`SELECT ${planColumns} FROM plans WHERE id = ${id}`), (found) => Option.fromNullishOr(found[0])),
    templates: (id) =>
      sql`SELECT t.id, t.name, t.cluster, t.node, t.vmid, false AS retired FROM os_templates t
          JOIN proxmox_clusters c ON c.name = t.cluster
          WHERE t.id = ${id} AND t.retired_at IS NULL AND c.retired_at IS NULL
          ORDER BY t.cluster COLLATE "C", t.node COLLATE "C"`.pipe(
        Effect.flatMap(rows(TemplateRow)),
        Effect.map((all) => all.map(({ retired: _, ...template }) => template)),
        Effect.orDie
      ),
    allTemplates: sql`SELECT id, name, cluster, node, vmid, retired_at IS NOT NULL AS retired FROM os_templates
        ORDER BY id COLLATE "C", cluster COLLATE "C", node COLLATE "C"`.pipe(Effect.flatMap(rows(TemplateRow)), Effect.orDie),
    ipPools: sql`SELECT p.id, p.cluster, p.cidr::text AS cidr, host(p.gateway) AS gateway, p.bridge, p.nodes,
          p.retired_at IS NOT NULL AS retired,
          (SELECT count(*)::int FROM ip_addresses a WHERE a.pool_id = p.id AND a.holder IS NULL AND a.withdrawn_at IS NULL) AS free,
          (SELECT count(*)::int FROM ip_addresses a WHERE a.pool_id = p.id AND a.holder IS NOT NULL) AS assigned
        FROM ip_pools p ORDER BY p.id COLLATE "C"`.pipe(Effect.flatMap(rows(PoolRow)), Effect.orDie),
    cluster: (name) =>
      Effect.map(clusterRows(sql`SELECT ${clusterColumns} FROM proxmox_clusters WHERE name = ${name}`), (found) => Option.fromNullishOr(found[0])),
    clusters: clusterRows(sql`SELECT ${clusterColumns} FROM proxmox_clusters ORDER BY name COLLATE "C"`),
    panel: (name) =>
      Effect.map(
        panelRows(sql`SELECT name, url, retired_at IS NOT NULL AS retired FROM pterodactyl_panels WHERE name = ${name}`),
        (found) => Option.fromNullishOr(found[0])
      ),
    panels: panelRows(sql`SELECT name, url, retired_at IS NOT NULL AS retired FROM pterodactyl_panels ORDER BY name COLLATE "C"`)
  })
})

export const layer = Layer.effect(Catalog, make)
