// Applying a catalog file: the one use case behind `catalog apply FILE` and CATALOG_FILE at start. Idempotent:
// applying the same file twice changes nothing; entries missing from a later file stay (retiring is explicit).
import { Effect } from "effect"
import { Catalog, type UpsertOutcome } from "../../ports/Catalog.ts"
import { UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"
import { clusterSecretNames, panelSecretNames, syncSecret } from "./catalogSecrets.ts"
import { CatalogInvalid, decodeCatalogFile } from "./CatalogFile.ts"
import { type CatalogSpec, loadCatalog, type ReadFile, resolveBeside } from "./CatalogSpec.ts"
import { crossReferences } from "./crossReferences.ts"

export interface Counts {
  readonly created: number
  readonly updated: number
  readonly unchanged: number
}

export interface ApplySummary {
  readonly clusters: Counts
  readonly panels: Counts
  readonly templates: Counts
  readonly ipPools: Counts
  readonly plans: Counts
  readonly warnings: ReadonlyArray<string>
}

const count = (outcomes: ReadonlyArray<UpsertOutcome>): Counts => ({
  created: outcomes.filter((o) => o === "created").length,
  updated: outcomes.filter((o) => o === "updated").length,
  unchanged: outcomes.filter((o) => o === "unchanged").length
})

/** An entry whose credentials changed was updated, even if its row did not. */
const withSecrets = (outcome: UpsertOutcome, changed: ReadonlyArray<boolean>): UpsertOutcome =>
  outcome === "unchanged" && changed.some((c) => c) ? "updated" : outcome

const storedCatalog = Effect.gen(function*() {
  const catalog = yield* Catalog
  const [clusters, panels, templates, ipPools, plans, secrets] = yield* Effect.all([
    catalog.clusters,
    catalog.panels,
    catalog.allTemplates,
    catalog.ipPools,
    catalog.allPlans,
    Effect.flatMap(UpstreamSecrets, (s) => s.list)
  ])
  return { clusters, panels, templates, ipPools, plans, secrets: new Set(secrets.map((s) => s.name)) }
})

/**
 * Checks `spec` against the stored catalog, then upserts clusters (credentials sealed), panels, templates, pools
 * and plans, in that order (later entries refer to earlier ones). Nothing is written when a check fails.
 */
export const applyCatalog = Effect.fn("applyCatalog")(function*(spec: CatalogSpec) {
  const catalog = yield* Catalog
  const findings = crossReferences(spec, yield* storedCatalog)
  if (findings.problems.length > 0) return yield* new CatalogInvalid({ problems: findings.problems })

  const clusters = yield* Effect.forEach(spec.clusters, (c) =>
    Effect.gen(function*() {
      const { password, tokenSecret, ...entry } = c
      const outcome = yield* catalog.upsertCluster(entry)
      const names = clusterSecretNames(c.name)
      return withSecrets(outcome, [yield* syncSecret(names.password, password), yield* syncSecret(names.tokenSecret, tokenSecret)])
    }))
  const panels = yield* Effect.forEach(spec.panels, (p) =>
    Effect.gen(function*() {
      const outcome = yield* catalog.upsertPanel({ name: p.name, url: p.url })
      const names = panelSecretNames(p.name)
      return withSecrets(outcome, [yield* syncSecret(names.applicationKey, p.applicationKey), yield* syncSecret(names.clientKey, p.clientKey)])
    }))
  const templates = yield* Effect.forEach(spec.templates, (t) => catalog.upsertTemplate(t))
  const ipPools = yield* Effect.forEach(spec.ipPools, ({ addresses, pool }) => catalog.upsertIpPool(pool, addresses))
  const plans = yield* Effect.forEach(spec.plans, (plan) => catalog.upsertPlan(plan))
  return {
    clusters: count(clusters),
    panels: count(panels),
    templates: count(templates),
    ipPools: count(ipPools),
    plans: count(plans),
    warnings: findings.warnings
  } satisfies ApplySummary
})

/**
 * Reads, checks and applies the catalog file at `path`: what the CLI's `catalog apply FILE` and the server's
 * CATALOG_FILE both run. `readFile` is the app's file reader; `caFile` paths resolve beside the catalog file.
 */
export const applyCatalogFile = Effect.fn("applyCatalogFile")(function*(path: string, readFile: ReadFile) {
  const text = yield* readFile(path).pipe(
    Effect.mapError((e) => new CatalogInvalid({ problems: [`cannot read the catalog file "${path}": ${e.message}`] }))
  )
  const file = yield* decodeCatalogFile(text)
  const spec = yield* loadCatalog(file, (caFile) => readFile(resolveBeside(path, caFile)))
  return yield* applyCatalog(spec)
})

const SECTIONS = [
  ["clusters", "Proxmox clusters"],
  ["panels", "Pterodactyl panels"],
  ["templates", "OS templates"],
  ["ipPools", "IP pools"],
  ["plans", "plans"]
] as const

/** One line per section, then the warnings: for the CLI's output and the server's start log. */
export const formatSummary = (summary: ApplySummary): ReadonlyArray<string> => [
  ...SECTIONS.map(([key, label]) => {
    const c = summary[key]
    return `${label}: ${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged`
  }),
  ...summary.warnings.map((w) => `warning: ${w}`)
]
