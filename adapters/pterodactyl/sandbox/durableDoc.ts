// The state file's document (the `stateFile` option): its schema, version 1, and the checks a saved file must pass
// before it replaces the seeded world — decoded with Effect Schema, then checked for what a schema cannot say (unique
// ids, records pointing at records that exist, file bytes matching their hash).
import { createHash } from "node:crypto"
import { Result, Schema, SchemaIssue } from "effect"
import { normalizePath } from "./FileTree.ts"

export const FORMAT = "sandbox-pterodactyl-state"

const Id = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Mode = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 0o7777 }))

/** One entry of a file tree. A file's bytes are a blob (by its SHA-256) or, for a synthetic file, only its size. */
export interface EntryDoc {
  readonly kind: "dir" | "file"
  readonly mode: number
  readonly modifiedAt: number
  readonly createdAt: number
  readonly blob?: string
  readonly syntheticBytes?: number
  /** The entries `compress` packed, so a restored archive still decompresses. */
  readonly archive?: { readonly [path: string]: EntryDoc }
}

const EntryDoc: Schema.Codec<EntryDoc> = Schema.Struct({
  kind: Schema.Literals(["dir", "file"]),
  mode: Mode,
  modifiedAt: Schema.Finite,
  createdAt: Schema.Finite,
  blob: Schema.optionalKey(Schema.String),
  syntheticBytes: Schema.optionalKey(Count),
  archive: Schema.optionalKey(Schema.Record(Schema.String, Schema.suspend((): Schema.Codec<EntryDoc> => EntryDoc)))
})

/** Paths (normalized, absolute) to entries. */
const TreeDoc = Schema.Record(Schema.String, EntryDoc)
export type TreeDoc = typeof TreeDoc.Type

const UserDoc = Schema.Struct({
  id: Id,
  uuid: Schema.String,
  username: Schema.String,
  email: Schema.String,
  first_name: Schema.String,
  last_name: Schema.String,
  external_id: Schema.NullOr(Schema.String),
  language: Schema.String,
  root_admin: Schema.Boolean,
  created_at: Schema.String
})

/** A node without its daemon secret: a restart gives every node a new one (its JWTs died with the old URLs anyway). */
const NodeDoc = Schema.Struct({
  id: Id,
  uuid: Schema.String,
  name: Schema.String,
  public: Schema.Boolean,
  location_id: Id,
  memory: Schema.Finite,
  memory_overallocate: Schema.Finite,
  disk: Schema.Finite,
  disk_overallocate: Schema.Finite,
  upload_size: Schema.Finite,
  maintenance_mode: Schema.Boolean,
  created_at: Schema.String
})

const AllocationDoc = Schema.Struct({
  id: Id,
  node: Id,
  ip: Schema.String,
  port: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65_535 })),
  alias: Schema.NullOr(Schema.String),
  serverId: Schema.NullOr(Id)
})

const EggDoc = Schema.Struct({
  id: Id,
  uuid: Schema.String,
  nest: Id,
  name: Schema.String,
  startup: Schema.String,
  docker_images: Schema.Union([Schema.Record(Schema.String, Schema.String), Schema.Array(Schema.String)]),
  variables: Schema.Array(Schema.Struct({
    id: Id,
    name: Schema.String,
    description: Schema.String,
    env_variable: Schema.String,
    default_value: Schema.String,
    user_viewable: Schema.Boolean,
    user_editable: Schema.Boolean,
    rules: Schema.String
  }))
})

const BackupDoc = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  ignored_files: Schema.Array(Schema.String),
  is_successful: Schema.Boolean,
  is_locked: Schema.Boolean,
  checksum: Schema.NullOr(Schema.String),
  bytes: Count,
  created_at: Schema.String,
  /** Null: the archive was being made; the load completes it from `files`. */
  completed_at: Schema.NullOr(Schema.String),
  files: TreeDoc
})

const ServerDoc = Schema.Struct({
  id: Id,
  uuid: Schema.String.check(Schema.isPattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)),
  identifier: Schema.String,
  external_id: Schema.NullOr(Schema.String),
  name: Schema.String,
  description: Schema.String,
  // `restoring_backup` is never saved: a running restore is saved finished.
  status: Schema.NullOr(Schema.Literals(["installing", "install_failed", "reinstall_failed", "suspended"])),
  user: Id,
  node: Id,
  allocation: Id,
  additional: Schema.Array(Id),
  nest: Id,
  egg: Id,
  limits: Schema.Struct({
    memory: Schema.Finite,
    swap: Schema.Finite,
    disk: Schema.Finite,
    io: Schema.Finite,
    cpu: Schema.Finite,
    threads: Schema.NullOr(Schema.String),
    oom_disabled: Schema.Boolean
  }),
  feature_limits: Schema.Struct({ databases: Schema.Finite, allocations: Schema.Finite, backups: Schema.Finite }),
  startup: Schema.String,
  image: Schema.String,
  environment: Schema.Record(Schema.String, Schema.NullOr(Schema.String)),
  created_at: Schema.String,
  updated_at: Schema.String,
  /** A running install, due at an epoch-ms time; a `hang` install has none and stays `installing`. */
  install: Schema.NullOr(Schema.Struct({
    dueAt: Schema.Finite,
    outcome: Schema.Literals(["succeed", "fail"]),
    reinstall: Schema.Boolean
  })),
  files: TreeDoc,
  backups: Schema.Array(BackupDoc),
  /** Epoch-ms creation times within the throttle period (deleted backups too). */
  backupCreations: Schema.Array(Schema.Finite)
})

const StateDoc = Schema.Struct({
  format: Schema.Literal(FORMAT),
  version: Schema.Literal(1),
  counters: Schema.Struct({ user: Id, node: Id, allocation: Id, server: Id }),
  users: Schema.Array(UserDoc),
  nodes: Schema.Array(NodeDoc),
  allocations: Schema.Array(AllocationDoc),
  nests: Schema.Array(Schema.Struct({ id: Id, name: Schema.String })),
  eggs: Schema.Array(EggDoc),
  servers: Schema.Array(ServerDoc),
  /** File bytes, base64, by their SHA-256 (hex): a file and its copies in backups are stored once. */
  blobs: Schema.Record(Schema.String, Schema.String)
})

export type StateDoc = typeof StateDoc.Type
export type ServerDoc = typeof ServerDoc.Type
export type BackupDoc = typeof BackupDoc.Type

/** A decoded document with its blobs as bytes. */
export interface DecodedState {
  readonly doc: StateDoc
  readonly blobs: ReadonlyMap<string, Buffer>
}

export const blobKey = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex")

const duplicates = <T>(items: ReadonlyArray<T>): ReadonlyArray<T> => {
  const seen = new Set<T>()
  const twice = new Set<T>()
  for (const item of items) (seen.has(item) ? twice : seen).add(item)
  return [...twice]
}

const treeProblems = (tree: TreeDoc, where: string, blobs: ReadonlyMap<string, Buffer>, problems: Array<string>) => {
  for (const [path, entry] of Object.entries(tree)) {
    if (normalizePath(path) !== path) problems.push(`${where}: path '${path}' is not normalized`)
    if (entry.kind === "file" && (entry.blob === undefined) === (entry.syntheticBytes === undefined)) {
      problems.push(`${where}: file '${path}' needs exactly one of blob and syntheticBytes`)
    }
    if (entry.blob !== undefined && !blobs.has(entry.blob)) problems.push(`${where}: file '${path}' has no blob ${entry.blob}`)
    if (entry.archive !== undefined) treeProblems(entry.archive, `${where} archive '${path}'`, blobs, problems)
  }
}

/** What the schema cannot say. `seededEggs`: eggs the sandbox seeds, which a server may use though the file lacks them. */
const consistencyProblems = (doc: StateDoc, blobs: ReadonlyMap<string, Buffer>, seededEggs: ReadonlySet<number>) => {
  const problems: Array<string> = []
  const unique = (what: string, values: ReadonlyArray<string | number>) => {
    for (const value of duplicates(values)) problems.push(`${what} ${value} appears twice`)
  }
  unique("user", doc.users.map((u) => u.id))
  unique("node", doc.nodes.map((n) => n.id))
  unique("allocation", doc.allocations.map((a) => a.id))
  unique("allocation address", doc.allocations.map((a) => `${a.node}:${a.ip}:${a.port}`))
  unique("nest", doc.nests.map((n) => n.id))
  unique("egg", doc.eggs.map((e) => e.id))
  unique("server", doc.servers.map((s) => s.id))
  unique("server uuid", doc.servers.map((s) => s.uuid))
  unique("server external_id", doc.servers.flatMap((s) => (s.external_id === null ? [] : [s.external_id])))
  if (!doc.users.some((u) => u.root_admin)) problems.push("no root admin user")
  const users = new Set(doc.users.map((u) => u.id))
  const nodes = new Set(doc.nodes.map((n) => n.id))
  const servers = new Set(doc.servers.map((s) => s.id))
  const eggs = new Set([...seededEggs, ...doc.eggs.map((e) => e.id)])
  const allocations = new Map(doc.allocations.map((a) => [a.id, a]))
  for (const a of doc.allocations) {
    if (!nodes.has(a.node)) problems.push(`allocation ${a.id} is on unknown node ${a.node}`)
    if (a.serverId !== null && !servers.has(a.serverId)) problems.push(`allocation ${a.id} is held by unknown server ${a.serverId}`)
  }
  for (const [key, bytes] of blobs) if (blobKey(bytes) !== key) problems.push(`blob ${key} does not match its hash`)
  for (const s of doc.servers) {
    const where = `server ${s.id}`
    if (s.identifier !== s.uuid.slice(0, 8)) problems.push(`${where}: identifier is not the start of its uuid`)
    if (!users.has(s.user)) problems.push(`${where}: unknown user ${s.user}`)
    if (!nodes.has(s.node)) problems.push(`${where}: unknown node ${s.node}`)
    if (!eggs.has(s.egg)) problems.push(`${where}: unknown egg ${s.egg}`)
    for (const id of [s.allocation, ...s.additional]) {
      if (allocations.get(id)?.serverId !== s.id) problems.push(`${where}: allocation ${id} is not held by it`)
    }
    if (s.files["/"]?.kind !== "dir") problems.push(`${where}: its files have no root directory`)
    treeProblems(s.files, where, blobs, problems)
    unique(`${where}: backup`, s.backups.map((b) => b.uuid))
    for (const b of s.backups) treeProblems(b.files, `${where} backup ${b.uuid}`, blobs, problems)
  }
  return problems
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** The JSON document as StateDoc, or the first schema complaints with their paths (one warning line). */
const decodeDocument = (text: string): Result.Result<StateDoc, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Result.fail("not valid JSON")
  }
  const decoded = Schema.decodeUnknownResult(StateDoc)(json, { errors: "all" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  return Result.fail(formatter(decoded.failure.issue).issues.slice(0, 5).map((i) => {
    const at = (i.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join(".")
    return at === "" ? i.message : `${at}: ${i.message}`
  }).join("; "))
}

/** Parses and checks a state file's text; the failure lists what is wrong (at most 5 problems), for the warning. */
export const decodeDurableState = (text: string, seededEggs: ReadonlySet<number>): Result.Result<DecodedState, string> => {
  const decoded = decodeDocument(text)
  if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
  const doc = decoded.success
  const blobs = new Map(Object.entries(doc.blobs).map(([key, base64]) => [key, Buffer.from(base64, "base64")]))
  const problems = consistencyProblems(doc, blobs, seededEggs)
  return problems.length === 0 ? Result.succeed({ doc, blobs }) : Result.fail(problems.slice(0, 5).join("; "))
}
