// A checked catalog file, ready to apply: CA files read (as PEM), URLs normalised, pools expanded to addresses.
import { Effect, type Redacted } from "effect"
import type { ClusterEntry, PanelEntry } from "../../ports/Catalog.ts"
import { CatalogInvalid, type CatalogFile, fileProblems, poolBlock } from "./CatalogFile.ts"
import { formatAddress, hostAddresses } from "./ipv4.ts"
import type { IpPool, OsTemplate, Plan } from "./Plan.ts"

/** A cluster and its credentials; a null credential means "keep the one stored" (e.g. by `secrets put`). */
export interface ClusterSpec extends ClusterEntry {
  readonly password: Redacted.Redacted<string> | null
  readonly tokenSecret: Redacted.Redacted<string> | null
}

export interface PanelSpec extends PanelEntry {
  readonly applicationKey: Redacted.Redacted<string> | null
  readonly clientKey: Redacted.Redacted<string> | null
}

export interface PoolSpec {
  readonly pool: IpPool
  /** The host addresses, in numeric order. */
  readonly addresses: ReadonlyArray<string>
}

/** Every list keeps the order (and so the indexes) of the file, for messages. */
export interface CatalogSpec {
  readonly clusters: ReadonlyArray<ClusterSpec>
  readonly panels: ReadonlyArray<PanelSpec>
  readonly templates: ReadonlyArray<OsTemplate>
  readonly ipPools: ReadonlyArray<PoolSpec>
  readonly plans: ReadonlyArray<Plan>
}

/** Reads a file's text; the app supplies it (the domain touches no file system). */
export type ReadFile = (path: string) => Effect.Effect<string, { readonly message: string }>

/** `caFile` paths are relative to the catalog file's folder, like includes in most configuration formats. */
export const resolveBeside = (catalogPath: string, path: string) => {
  if (path.startsWith("/")) return path
  const slash = catalogPath.lastIndexOf("/")
  return slash < 0 ? path : `${catalogPath.slice(0, slash + 1)}${path}`
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/

const origin = (url: string) => new URL(url).origin

type Read<A> = { readonly value: A } | { readonly problem: string }

const readCa = (caFile: string | null, at: string, readCaFile: ReadFile): Effect.Effect<Read<string | null>> =>
  caFile === null
    ? Effect.succeed({ value: null })
    : readCaFile(caFile).pipe(
      Effect.map((text): Read<string | null> =>
        PEM.test(text) ? { value: text.trim() } : { problem: `${at}: "${caFile}" holds no PEM certificate` }
      ),
      Effect.catch((e) => Effect.succeed({ problem: `${at}: cannot read "${caFile}": ${e.message}` }))
    )

/** Checks the file on its own and reads its CA files; fails with every problem found. */
export const loadCatalog = Effect.fn("loadCatalog")(function*(file: CatalogFile, readCaFile: ReadFile) {
  const problems = [...fileProblems(file)]
  const cas = yield* Effect.forEach(file.proxmox, (c, i) => readCa(c.tls.caFile, `proxmox[${i}].tls.caFile`, readCaFile))
  const clusters = file.proxmox.map((c, i): ClusterSpec => {
    const ca = cas[i]
    if (ca !== undefined && "problem" in ca) problems.push(ca.problem)
    return {
      name: c.name,
      url: origin(c.url),
      username: c.username,
      tokenId: c.tokenId,
      password: c.password,
      tokenSecret: c.tokenSecret,
      tls: {
        ca: ca !== undefined && "value" in ca ? ca.value : null,
        fingerprint: c.tls.fingerprint?.toUpperCase() ?? null,
        insecure: c.tls.insecure
      }
    }
  })
  const ipPools = file.ipPools.flatMap((p, i): Array<PoolSpec> => {
    const block = poolBlock(p, `ipPools[${i}]`)
    if (block.cidr === undefined || block.gateway === undefined) return []
    const pool = { id: p.id, cluster: p.cluster, cidr: p.cidr, gateway: formatAddress(block.gateway), bridge: p.bridge, nodes: p.nodes }
    return [{ pool, addresses: hostAddresses(block.cidr, block.gateway) }]
  })
  if (problems.length > 0) return yield* new CatalogInvalid({ problems })
  return {
    clusters,
    panels: file.pterodactyl.map((p) => ({ ...p, url: origin(p.url) })),
    templates: file.templates,
    ipPools,
    plans: file.plans
  } satisfies CatalogSpec
})
