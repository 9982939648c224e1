// Checks of a catalog file against what is already stored: references resolve (in the file or the store), a plan
// keeps its kind, pools never overlap, credentials left out of the file were stored beforehand.
import type { ClusterEntry, PanelEntry } from "../../ports/Catalog.ts"
import { clusterSecretNames, panelSecretNames } from "./catalogSecrets.ts"
import type { CatalogSpec } from "./CatalogSpec.ts"
import { overlaps, parseCidr } from "./ipv4.ts"
import type { IpPool, OsTemplate, Plan } from "./Plan.ts"

type Retirable<A> = A & { readonly retired: boolean }

/** The stored catalog, as far as the checks need it. */
export interface StoredCatalog {
  readonly clusters: ReadonlyArray<Retirable<ClusterEntry>>
  readonly panels: ReadonlyArray<Retirable<PanelEntry>>
  readonly templates: ReadonlyArray<Retirable<OsTemplate>>
  readonly ipPools: ReadonlyArray<Retirable<IpPool>>
  readonly plans: ReadonlyArray<Retirable<Plan>>
  /** Names of the stored upstream secrets. */
  readonly secrets: ReadonlySet<string>
}

export interface Findings {
  /** Stop the apply. */
  readonly problems: ReadonlyArray<string>
  /** Worth saying, harmless: mostly retired entries, which a file never brings back. */
  readonly warnings: ReadonlyArray<string>
}

/** Whether a name is unknown, active or retired, given what the file declares and what is stored. */
const lookup = (declared: Iterable<string>, stored: ReadonlyArray<{ readonly key: string; readonly retired: boolean }>) => {
  const inFile = new Set(declared)
  return (key: string): "unknown" | "active" | "retired" => {
    const rows = stored.filter((s) => s.key === key)
    if (rows.some((r) => !r.retired)) return "active"
    if (rows.length > 0) return "retired"
    return inFile.has(key) ? "active" : "unknown"
  }
}

const templateKey = (t: OsTemplate) => `${t.id} ${t.cluster} ${t.node}`

export const crossReferences = (spec: CatalogSpec, stored: StoredCatalog): Findings => {
  const problems: Array<string> = []
  const warnings: Array<string> = []
  const retiredInStore = (label: string, at: string, retired: boolean) => {
    if (retired) warnings.push(`${at}: ${label} is retired; applying the file does not bring it back`)
  }
  const reference = (status: "unknown" | "active" | "retired", at: string, label: string) => {
    if (status === "unknown") problems.push(`${at}: unknown ${label}`)
    if (status === "retired") warnings.push(`${at}: ${label} is retired`)
  }

  const cluster = lookup(spec.clusters.map((c) => c.name), stored.clusters.map((c) => ({ key: c.name, retired: c.retired })))
  const panel = lookup(spec.panels.map((p) => p.name), stored.panels.map((p) => ({ key: p.name, retired: p.retired })))
  // A template id is orderable while any of its copies is; a copy declared again keeps its stored retirement.
  const storedCopies = new Map(stored.templates.map((t) => [templateKey(t), t.retired]))
  const template = lookup([], [
    ...stored.templates.map((t) => ({ key: t.id, retired: t.retired })),
    ...spec.templates.map((t) => ({ key: t.id, retired: storedCopies.get(templateKey(t)) ?? false }))
  ])

  spec.clusters.forEach((c, i) => {
    const at = `proxmox[${i}]`
    retiredInStore(`cluster "${c.name}"`, at, stored.clusters.some((s) => s.name === c.name && s.retired))
    const names = clusterSecretNames(c.name)
    if (c.username !== null && c.password === null && !stored.secrets.has(names.password)) {
      problems.push(`${at}.password: required with username (or stored beforehand: secrets put ${names.password})`)
    }
    if (c.tokenId !== null && c.tokenSecret === null && !stored.secrets.has(names.tokenSecret)) {
      problems.push(`${at}.tokenSecret: required with tokenId (or stored beforehand: secrets put ${names.tokenSecret})`)
    }
  })
  spec.panels.forEach((p, i) => {
    const at = `pterodactyl[${i}]`
    retiredInStore(`panel "${p.name}"`, at, stored.panels.some((s) => s.name === p.name && s.retired))
    const names = panelSecretNames(p.name)
    if (p.applicationKey === null && !stored.secrets.has(names.applicationKey)) {
      problems.push(`${at}.applicationKey: required (or stored beforehand: secrets put ${names.applicationKey})`)
    }
    if (p.clientKey === null && !stored.secrets.has(names.clientKey)) {
      problems.push(`${at}.clientKey: required (or stored beforehand: secrets put ${names.clientKey})`)
    }
  })
  spec.templates.forEach((t, i) => {
    retiredInStore(`template "${t.id}" on ${t.cluster}/${t.node}`, `templates[${i}]`, storedCopies.get(templateKey(t)) === true)
    if (!spec.clusters.some((c) => c.name === t.cluster)) reference(cluster(t.cluster), `templates[${i}].cluster`, `cluster "${t.cluster}"`)
  })
  spec.ipPools.forEach(({ pool }, i) => {
    const at = `ipPools[${i}]`
    retiredInStore(`pool "${pool.id}"`, at, stored.ipPools.some((s) => s.id === pool.id && s.retired))
    if (!spec.clusters.some((c) => c.name === pool.cluster)) reference(cluster(pool.cluster), `${at}.cluster`, `cluster "${pool.cluster}"`)
    // Node names cannot be checked against Proxmox from here; template copies are the nodes the catalog knows.
    const known = new Set([...stored.templates, ...spec.templates].filter((t) => t.cluster === pool.cluster).map((t) => t.node))
    for (const node of pool.nodes) {
      if (known.size > 0 && !known.has(node)) warnings.push(`${at}.nodes: node "${node}" holds no template of cluster "${pool.cluster}"`)
    }
    const block = parseCidr(pool.cidr)
    for (const other of stored.ipPools) {
      const otherBlock = parseCidr(other.cidr)
      if (other.id === pool.id || block._tag === "Failure" || otherBlock._tag === "Failure") continue
      // Retired pools count too: their addresses may still be held by running services.
      if (overlaps(block.success, otherBlock.success)) problems.push(`${at}.cidr: ${pool.cidr} overlaps stored pool "${other.id}" (${other.cidr})`)
    }
  })
  spec.plans.forEach((plan, i) => {
    const at = `plans[${i}]`
    const before = stored.plans.find((p) => p.id === plan.id)
    retiredInStore(`plan "${plan.id}"`, at, before?.retired === true)
    if (before !== undefined && before.kind !== plan.kind) {
      problems.push(`${at}.kind: plan "${plan.id}" is a ${before.kind} plan; a plan's kind cannot change (retire it, use a new id)`)
    }
    if (plan.kind === "vps") {
      for (const id of plan.templates) reference(template(id), `${at}.templates`, `template "${id}"`)
    } else if (!spec.panels.some((p) => p.name === plan.panel)) {
      reference(panel(plan.panel), `${at}.panel`, `panel "${plan.panel}"`)
    }
  })
  return { problems, warnings }
}
