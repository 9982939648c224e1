// The catalog file (API.md "Catalog file"): its schema, and the checks that need nothing but the file itself.
// Every problem is reported with the entry it is about (`ipPools[0].gateway: …`), all of them at once.
import { Effect, Schema, SchemaIssue } from "effect"
import { type Cidr, gatewayProblem, overlaps, parseAddress, parseCidr } from "./ipv4.ts"
import { GamePlan, VpsPlan } from "./Plan.ts"

export class CatalogInvalid extends Schema.TaggedError<CatalogInvalid>()("CatalogInvalid", {
  problems: Schema.Array(Schema.String)
}) {
  override get message() {
    return `The catalog is invalid:\n${this.problems.map((p) => `  - ${p}`).join("\n")}`
  }
}

/** Names and ids end up in secret names (`proxmox:<name>:password`) and URLs: keep them plain. */
const Identifier = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, {
  message: "must be 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit"
}))
const Text = Schema.String.check(Schema.isTrimmed({ message: "must not start or end with spaces" }), Schema.isNonEmpty({ message: "must not be empty" }), Schema.isMaxLength(200))
const Positive = Schema.Int.check(Schema.isGreaterThan(0, { message: "must be a whole number greater than 0" }))
const NonNegative = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0, { message: "must be a whole number, 0 or more" }))
const Secret = Schema.RedactedFromValue(Schema.String.check(Schema.isNonEmpty({ message: "must not be empty" })))

const orNull = <S extends Schema.Top>(schema: S) =>
  Schema.NullOr(schema).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null)))

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"])

/** An origin: https, or http to a loopback address (a local sandbox); no path, query or credentials. */
const Origin = Schema.String.check(Schema.makeFilter((text: string) => {
  if (!URL.canParse(text)) return "must be a URL like https://pve.example:8006"
  const url = new URL(text)
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.has(url.hostname))) {
    return "must use https:// (http:// only on a loopback address)"
  }
  if (url.username !== "" || url.password !== "") return "must not contain credentials"
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") return "must be an origin, without path or query"
  return undefined
}))

const ProxmoxEntry = Schema.Struct({
  name: Identifier,
  url: Origin,
  username: orNull(Schema.String.check(Schema.isPattern(/^[^\s@!]+@[^\s@!]+$/, { message: "must look like user@realm" }))),
  password: orNull(Secret),
  tokenId: orNull(Schema.String.check(Schema.isPattern(/^[^\s@!]+@[^\s@!]+![A-Za-z0-9][A-Za-z0-9._-]*$/, {
    message: "must look like user@realm!tokenid"
  }))),
  tokenSecret: orNull(Secret),
  tls: Schema.Struct({
    caFile: orNull(Schema.String.check(Schema.isNonEmpty({ message: "must not be empty" }))),
    fingerprint: orNull(Schema.String.check(Schema.isPattern(/^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$/, {
      message: "must be a SHA-256 fingerprint like AB:CD:…(32 pairs)"
    }))),
    /** Must be said explicitly, so nobody turns certificate checks off by leaving a key out. */
    insecure: Schema.Boolean
  })
})

const TemplateEntry = Schema.Struct({
  id: Identifier,
  cluster: Identifier,
  node: Identifier,
  vmid: Schema.Int.check(Schema.isBetween({ minimum: 100, maximum: 999_999_999 }, { message: "must be a VMID between 100 and 999999999" })),
  name: Text
})

const IpPoolEntry = Schema.Struct({
  id: Identifier,
  cluster: Identifier,
  cidr: Schema.String,
  gateway: Schema.String,
  bridge: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$/, { message: "must be a Linux bridge name like vmbr0" })),
  nodes: Schema.Array(Identifier).check(
    Schema.isNonEmpty({ message: "must name at least one node" }),
    Schema.isUnique({ message: "must not repeat a node" })
  )
})

const PanelEntry = Schema.Struct({
  name: Identifier,
  url: Origin,
  applicationKey: orNull(Secret),
  clientKey: orNull(Secret)
})

const VpsPlanEntry = Schema.Struct({
  kind: VpsPlan.fields.kind,
  id: Identifier,
  name: Text,
  priceCents: NonNegative,
  vcpu: Positive,
  ramMiB: Positive,
  diskGiB: Positive,
  templates: Schema.Array(Identifier).check(
    Schema.isNonEmpty({ message: "must name at least one template" }),
    Schema.isUnique({ message: "must not repeat a template" })
  ),
  snapshotLimit: NonNegative
})

const Variable = Schema.String.check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: "must be an egg variable name like MINECRAFT_VERSION" }))

const GamePlanEntry = Schema.Struct({
  kind: GamePlan.fields.kind,
  id: Identifier,
  name: Text,
  priceCents: NonNegative,
  panel: Identifier,
  eggId: Positive,
  dockerImage: Schema.String.check(Schema.isPattern(/^\S+$/, { message: "must be an image reference without spaces" })),
  memoryMiB: Positive,
  diskMiB: Positive,
  /** 0 means no limit, as in Pterodactyl. */
  cpuPercent: NonNegative,
  io: Schema.Int.check(Schema.isBetween({ minimum: 10, maximum: 1000 }, { message: "must be between 10 and 1000 (Pterodactyl's block I/O weight)" })),
  databases: NonNegative,
  backups: NonNegative,
  allocations: NonNegative,
  environment: Schema.Record(Variable, Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed({}))),
  userVariables: Schema.Array(Variable).check(Schema.isUnique({ message: "must not repeat a variable" })).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed([]))
  )
})

const section = <S extends Schema.Top>(entry: S) =>
  Schema.Array(entry).pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))

export const CatalogFile = Schema.Struct({
  proxmox: section(ProxmoxEntry),
  templates: section(TemplateEntry),
  ipPools: section(IpPoolEntry),
  pterodactyl: section(PanelEntry),
  plans: section(Schema.Union([VpsPlanEntry, GamePlanEntry]).annotate({ expected: `a plan of kind "vps" or "game"` }))
})
export type CatalogFile = typeof CatalogFile.Type

/** `["plans", 2, "templates"]` → `plans[2].templates` */
export const formatPath = (path: ReadonlyArray<PropertyKey>) =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join("")

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** JSON.parse messages may quote the text around the error (a password, say): keep only the position. */
const jsonProblem = (text: string, error: unknown) => {
  const position = Number(/at position (\d+)/.exec(error instanceof Error ? error.message : "")?.[1])
  if (!Number.isInteger(position)) return "the file is not valid JSON"
  const before = text.slice(0, position).split("\n")
  return `the file is not valid JSON (line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1})`
}

/** Decodes the text of a catalog file; unknown keys are refused, so a misspelt field cannot pass silently. */
export const decodeCatalogFile = (text: string): Effect.Effect<CatalogFile, CatalogInvalid> =>
  Effect.try({ try: (): unknown => JSON.parse(text), catch: (e) => new CatalogInvalid({ problems: [jsonProblem(text, e)] }) }).pipe(
    Effect.flatMap((json) =>
      Schema.decodeUnknownEffect(CatalogFile)(json, { errors: "all", onExcessProperty: "error" }).pipe(
        Effect.mapError((error) =>
          new CatalogInvalid({
            problems: formatter(error.issue).issues.map((issue) => {
              const path = formatPath((issue.path ?? []).map((p) => (typeof p === "object" ? p.key : p)))
              return path === "" ? issue.message : `${path}: ${issue.message}`
            })
          })
        )
      )
    )
  )

/** Calls `problem(earlierIndex)` for every entry whose key an earlier entry already had. */
const duplicates = <A>(entries: ReadonlyArray<A>, key: (a: A) => string, problem: (i: number, first: number) => string) => {
  const seen = new Map<string, number>()
  return entries.flatMap((entry, i) => {
    const k = key(entry)
    const first = seen.get(k)
    if (first === undefined) seen.set(k, i)
    return first === undefined ? [] : [problem(i, first)]
  })
}

/** A shorter prefix (a block larger than a /16) would mean tens of thousands of rows for one pool: surely a typo. */
export const LARGEST_POOL_PREFIX = 16

/** A pool's block and gateway, each when usable, and the problems found with them. */
export const poolBlock = (pool: { readonly cidr: string; readonly gateway: string }, at: string) => {
  const problems: Array<string> = []
  const parsed = parseCidr(pool.cidr)
  const address = parseAddress(pool.gateway)
  let cidr: Cidr | undefined
  if (parsed._tag === "Failure") problems.push(`${at}.cidr: ${parsed.failure}`)
  else if (parsed.success.prefixLength < LARGEST_POOL_PREFIX) {
    problems.push(`${at}.cidr: /${parsed.success.prefixLength} is larger than a /${LARGEST_POOL_PREFIX}; split it into several pools`)
  } else if (parsed.success.prefixLength === 32) {
    problems.push(`${at}.cidr: a /32 has no address left beside its gateway`)
  } else cidr = parsed.success
  if (address === undefined) problems.push(`${at}.gateway: "${pool.gateway}" is not an IPv4 address`)
  const gatewayIssue = cidr === undefined || address === undefined ? undefined : gatewayProblem(cidr, address)
  if (gatewayIssue !== undefined) problems.push(`${at}.gateway: ${gatewayIssue}`)
  const gateway = cidr === undefined || gatewayIssue !== undefined ? undefined : address
  return { problems, cidr, gateway }
}

/** Checks that need only the file: uniqueness, credentials that go together, pool arithmetic. */
export const fileProblems = (file: CatalogFile): ReadonlyArray<string> => {
  const problems: Array<string> = []
  file.proxmox.forEach((c, i) => {
    const at = `proxmox[${i}]`
    if (c.password !== null && c.username === null) problems.push(`${at}.password: given without username`)
    if (c.tokenSecret !== null && c.tokenId === null) problems.push(`${at}.tokenSecret: given without tokenId`)
    if (c.username === null && c.tokenId === null) {
      problems.push(`${at}: needs username and password, or tokenId and tokenSecret`)
    }
    if (c.tls.insecure && (c.tls.caFile !== null || c.tls.fingerprint !== null)) {
      problems.push(`${at}.tls.insecure: true contradicts caFile/fingerprint, which would not be checked`)
    }
  })
  problems.push(...duplicates(file.proxmox, (c) => c.name, (i, first) =>
    `proxmox[${i}].name: "${file.proxmox[i]?.name}" is already declared by proxmox[${first}]`))
  problems.push(...duplicates(file.pterodactyl, (p) => p.name, (i, first) =>
    `pterodactyl[${i}].name: "${file.pterodactyl[i]?.name}" is already declared by pterodactyl[${first}]`))
  problems.push(...duplicates(file.templates, (t) => `${t.id} ${t.cluster} ${t.node}`, (i, first) =>
    `templates[${i}]: template "${file.templates[i]?.id}" on ${file.templates[i]?.cluster}/${file.templates[i]?.node} is already declared by templates[${first}]`))
  problems.push(...duplicates(file.templates, (t) => `${t.cluster} ${t.vmid}`, (i, first) =>
    `templates[${i}].vmid: VMID ${file.templates[i]?.vmid} on cluster "${file.templates[i]?.cluster}" is already used by templates[${first}]`))
  const names = new Map<string, number>()
  file.templates.forEach((t, i) => {
    const first = names.get(t.id)
    if (first === undefined) names.set(t.id, i)
    else if (file.templates[first]?.name !== t.name) {
      problems.push(`templates[${i}].name: "${t.name}" differs from templates[${first}].name for the same template "${t.id}"`)
    }
  })
  problems.push(...duplicates(file.ipPools, (p) => p.id, (i, first) =>
    `ipPools[${i}].id: "${file.ipPools[i]?.id}" is already declared by ipPools[${first}]`))
  const blocks: Array<{ readonly index: number; readonly cidr: Cidr }> = []
  file.ipPools.forEach((pool, i) => {
    const { cidr, problems: found } = poolBlock(pool, `ipPools[${i}]`)
    problems.push(...found)
    if (cidr === undefined) return
    const clash = blocks.find((b) => overlaps(b.cidr, cidr))
    if (clash !== undefined) problems.push(`ipPools[${i}].cidr: ${pool.cidr} overlaps ipPools[${clash.index}]`)
    blocks.push({ index: i, cidr })
  })
  problems.push(...duplicates(file.plans, (p) => p.id, (i, first) =>
    `plans[${i}].id: "${file.plans[i]?.id}" is already declared by plans[${first}]`))
  return problems
}
