// In-memory GamePanel: seeded panels (nodes, allocations, eggs) that answer as Pterodactyl 1.11 and Wings answer the
// real client (reference/pterodactyl.md), with installs timed on the Effect Clock, a game behind the console, files
// and backups behind the Client API, and a MemoryGamePanelControl surface (seed, install outcomes, faults, counts).
import { Buffer } from "node:buffer"
import { createHash } from "node:crypto"
import { type Cause, Clock, Context, Duration, Effect, Layer, Option, Queue, Random, Ref, Schema, Stream, SynchronizedRef } from "effect"
import {
  type AcceptedValue, type ClientRequest, type ClientResponse, ConsoleEnded, type ConsoleEvent, type ConsoleRequest, type Egg, type GameConsole, GamePanel,
  GamePanelThrottled, type NewServer, type PanelAllocation, type PanelNode, PanelRejected, PanelResourceNotFound, PanelServerNotOurs,
  type PanelServer, type PanelUser, PanelUnknown, PanelValidationFailed, ServerStateConflict, type ValueCheck
} from "../../ports/GamePanel.ts"

/** How a server's install ends once its duration is over; `hang` never reports back (reference §2.4 point 2). */
export type InstallOutcome = "succeed" | "fail" | "hang"

export interface NodeSeed {
  readonly id: number
  readonly name: string
  readonly public?: boolean
  readonly maintenance?: boolean
  readonly memoryMiB: number
  readonly memoryOverallocate?: number
  readonly diskMiB: number
  readonly diskOverallocate?: number
  /** Largest file an upload may carry (the node's `upload_size`, default 100). */
  readonly uploadSizeMiB?: number
}
export interface AllocationSeed {
  readonly node: number
  readonly ip: string
  readonly alias?: string | null
  readonly ports: ReadonlyArray<number>
}
/** An egg as the panel stores it: `docker_images` either shape (a list before panel 1.8, a map after, §2.9). */
export interface EggSeed extends Omit<Egg, "dockerImages"> {
  readonly dockerImages: Readonly<Record<string, string>> | ReadonlyArray<string>
}
export interface PanelSeed {
  readonly name: string
  readonly nodes: ReadonlyArray<NodeSeed>
  readonly allocations: ReadonlyArray<AllocationSeed>
  readonly eggs: ReadonlyArray<EggSeed>
}
export interface Options {
  readonly panels: ReadonlyArray<PanelSeed>
  /** How long an install runs on the Clock before it reports its outcome (default 30 seconds). */
  readonly installDuration?: Duration.Input
  /** The outcome of installs no `setInstallOutcome` named (default succeed). */
  readonly installOutcome?: InstallOutcome
}

const paperJar: AcceptedValue = { required: true, checks: [{ _tag: "Matches", pattern: /^([\w\d._-]+)(\.jar)$/ }] }
const shortText: AcceptedValue = { required: true, checks: [{ _tag: "AtMost", bound: 20, of: "length" }] }
/** The sandbox panel's defaults: one public node, ten ports on loopback, Paper (egg 5) and a list-shaped egg 6. */
export const sandboxPanel: PanelSeed = {
  name: "sandbox",
  nodes: [{ id: 1, name: "node-1", public: true, memoryMiB: 16384, memoryOverallocate: 0, diskMiB: 102400, diskOverallocate: 0 }],
  allocations: [{ node: 1, ip: "127.0.0.1", ports: Array.from({ length: 10 }, (_, i) => 25565 + i) }],
  eggs: [
    {
      id: 5, nest: 1, name: "Paper",
      startup: "java -Xms128M -XX:MaxRAMPercentage=95.0 -Dterminal.jline=false -Dterminal.ansi=true -jar {{SERVER_JARFILE}}",
      dockerImages: { "Java 17": "ghcr.io/pterodactyl/yolks:java_17", "Java 21": "ghcr.io/pterodactyl/yolks:java_21" },
      variables: [
        { name: "Server Jar File", envVariable: "SERVER_JARFILE", defaultValue: "server.jar", userViewable: true, userEditable: true, accepts: paperJar },
        { name: "Minecraft Version", envVariable: "MINECRAFT_VERSION", defaultValue: "latest", userViewable: true, userEditable: true, accepts: shortText },
        { name: "Build Number", envVariable: "BUILD_NUMBER", defaultValue: "latest", userViewable: true, userEditable: true, accepts: shortText }
      ]
    },
    {
      id: 6, nest: 1, name: "Bungeecord",
      startup: "java -Xms128M -XX:MaxRAMPercentage=95.0 -jar {{SERVER_JARFILE}}",
      dockerImages: ["ghcr.io/pterodactyl/yolks:java_11", "ghcr.io/pterodactyl/yolks:java_17"],
      variables: [
        { name: "Bungeecord Version", envVariable: "BUNGEE_VERSION", defaultValue: "latest", userViewable: true, userEditable: true, accepts: shortText },
        { name: "Bungeecord Jar File", envVariable: "SERVER_JARFILE", defaultValue: "bungeecord.jar", userViewable: true, userEditable: true, accepts: paperJar }
      ]
    }
  ]
}
export const defaultOptions: Options = { panels: [sandboxPanel], installDuration: "30 seconds", installOutcome: "succeed" }

type Entry = { readonly kind: "file"; readonly bytes: Uint8Array; readonly modified: number } | {
  readonly kind: "dir"
  readonly modified: number
}
export interface MemoryBackup {
  readonly uuid: string
  readonly name: string
  readonly ignoredFiles: ReadonlyArray<string>
  readonly isLocked: boolean
  readonly checksum: string
  readonly archive: Uint8Array
  readonly createdAt: number
  readonly completedAt: number
}
export type PowerState = "offline" | "starting" | "running" | "stopping"
/** A server as the fake holds it: the port's view, what it was created with, its process, files and backups. */
export interface MemoryServer extends PanelServer, Omit<NewServer, "allocation" | "user" | "name" | "externalId"> {
  readonly install: { readonly completesAt: number; readonly outcome: InstallOutcome } | null
  readonly power: PowerState
  readonly startedAt: number
  readonly files: ReadonlyMap<string, Entry>
  readonly backups: ReadonlyArray<MemoryBackup>
  /** The last console lines, replayed by `send logs`. */
  readonly log: ReadonlyArray<string>
}
interface PanelState {
  readonly name: string
  readonly users: ReadonlyArray<PanelUser>
  readonly nodes: ReadonlyArray<Required<NodeSeed>>
  readonly allocations: ReadonlyArray<Omit<PanelAllocation, "assigned">>
  readonly eggs: ReadonlyArray<Egg>
  readonly servers: ReadonlyArray<MemoryServer>
  readonly outcomes: ReadonlyMap<string, InstallOutcome>
}

type Port = GamePanel["Service"]
export type Operation = keyof Port
export type OperationError<Op extends Operation> = Effect.Error<ReturnType<Port[Op]>>
type Faults = {
  readonly [Op in Operation]?: { readonly next: ReadonlyArray<OperationError<Op>>; readonly always?: OperationError<Op> }
}

export class MemoryGamePanelControl extends Context.Service<MemoryGamePanelControl, {
  readonly seed: Options
  addPanel(panel: PanelSeed): Effect.Effect<void>
  addNode(panel: string, node: NodeSeed): Effect.Effect<void, PanelUnknown>
  addAllocations(panel: string, allocations: AllocationSeed): Effect.Effect<ReadonlyArray<PanelAllocation>, PanelUnknown>
  addEgg(panel: string, egg: EggSeed): Effect.Effect<void, PanelUnknown>
  setNodeMaintenance(panel: string, node: number, maintenance: boolean): Effect.Effect<void, PanelUnknown>
  /** Someone edits the server's external id on the panel (null clears it), outside our control. */
  setExternalId(panel: string, server: number, externalId: string | null): Effect.Effect<void, PanelUnknown>
  /** How the install of the server with this external id ends: the one installing now, or the next one created. */
  setInstallOutcome(panel: string, externalId: string, outcome: InstallOutcome): Effect.Effect<void, PanelUnknown>
  /** The next call of `operation` fails with `error` before doing anything; queued (twice = the next two). */
  failNext<Op extends Operation>(operation: Op, error: OperationError<Op>): Effect.Effect<void>
  /** Every call of `operation` fails with `error` until `clearFaults` (queued `failNext` faults come first). */
  failAlways<Op extends Operation>(operation: Op, error: OperationError<Op>): Effect.Effect<void>
  readonly clearFaults: Effect.Effect<void>
  /** How many times `operation` was called, failed calls included. */
  calls(operation: Operation): Effect.Effect<number>
  servers(panel: string): Effect.Effect<ReadonlyArray<MemoryServer>, PanelUnknown>
  /** The server's files by absolute path (directories left out). */
  files(panel: string, uuid: string): Effect.Effect<ReadonlyMap<string, Uint8Array>, PanelUnknown | PanelResourceNotFound>
  putFile(panel: string, uuid: string, path: string, bytes: Uint8Array): Effect.Effect<void, PanelUnknown | PanelResourceNotFound>
  openConsoles(panel: string, uuid: string): Effect.Effect<number>
}>()("zh/fake/MemoryGamePanelControl") {}

const MiB = 1024 ** 2
const encoder = new TextEncoder()
const decoder = new TextDecoder()
const USERNAME = /^[a-z0-9][a-z0-9_.-]*[a-z0-9]$/
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/
const DOCKER_IMAGE = /^[~\w./\-:@ ]+$/
/** The panel's backup throttle (`BACKUP_THROTTLE_LIMIT` per `…_PERIOD`, §4.3). */
const BACKUP_THROTTLE = { limit: 2, periodMs: 600_000 }
/** `PTERODACTYL_FILES_MAX_EDIT_SIZE` (§4.1). */
const MAX_EDIT_BYTES = 4 * MiB
const LOG_LINES = 150
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00")
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19)

const normaliseImages = (images: EggSeed["dockerImages"]): Readonly<Record<string, string>> =>
  Array.isArray(images) ? Object.fromEntries(images.map((i: string) => [i, i])) : images as Readonly<Record<string, string>>
const seedPanel = (seed: PanelSeed): PanelState =>
  addAllocationsTo({
    name: seed.name, users: [], allocations: [], servers: [], outcomes: new Map(),
    nodes: seed.nodes.map(nodeOf),
    eggs: seed.eggs.map((e) => ({ ...e, dockerImages: normaliseImages(e.dockerImages) }))
  }, seed.allocations)[1]
const nodeOf = (n: NodeSeed): Required<NodeSeed> => ({
  public: true, maintenance: false, memoryOverallocate: 0, diskOverallocate: 0, uploadSizeMiB: 100, ...n
})
/** Existing ip:port pairs are ignored, as the panel's insert-ignore does (§2.11). */
function addAllocationsTo(p: PanelState, seeds: ReadonlyArray<AllocationSeed>) {
  let next = Math.max(0, ...p.allocations.map((a) => a.id)) + 1
  const added: Array<PanelState["allocations"][number]> = []
  for (const { alias = null, ip, node, ports } of seeds) {
    for (const port of ports) {
      if ([...p.allocations, ...added].some((a) => a.ip === ip && a.port === port)) continue
      added.push({ id: next++, node, ip, alias, port })
    }
  }
  return [added, { ...p, allocations: [...p.allocations, ...added] }] as const
}

// --- validation (the panel's 422 for egg variables, §2.2 and §2.9, over what each variable accepts) ----------

type Failure = { readonly field: string; readonly rule: string; readonly detail: string }
/** The Laravel rule the panel names for a failed check, and the end of its message. */
const refusal = (check: ValueCheck, value: string): readonly [string, string] | undefined => {
  const size = "of" in check && check.of === "value" ? Number(value) : [...value].length
  switch (check._tag) {
    case "Number":
      return Number.isFinite(Number(value)) ? undefined : ["numeric", "must be a number."]
    case "WholeNumber":
      return /^-?\d+$/.test(value) ? undefined : ["integer", "must be an integer."]
    case "TrueOrFalse":
      return ["0", "1", "true", "false"].includes(value) ? undefined : ["boolean", "must be true or false."]
    case "LettersAndDigits":
      return (check.dashes ? /^[\p{L}\p{N}_-]+$/u : /^[\p{L}\p{N}]+$/u).test(value)
        ? undefined
        : [check.dashes ? "alpha_dash" : "alpha_num", "format is invalid."]
    case "AtMost":
      return size > check.bound ? ["max", `must not be greater than ${check.bound}.`] : undefined
    case "AtLeast":
      return size < check.bound ? ["min", `must be at least ${check.bound}.`] : undefined
    case "Between":
      return size < check.low || size > check.high ? ["between", `must be between ${check.low} and ${check.high}.`] : undefined
    case "OneOf":
      return check.values.includes(value) ? undefined : ["in", "is invalid."]
    case "Matches":
      return check.pattern.test(value) ? undefined : ["regex", "format is invalid."]
  }
}
const checkVariable = (field: string, label: string, value: string | undefined, accepts: AcceptedValue): Array<Failure> => {
  const fail = (rule: string, detail: string) => [{ field, rule, detail: `The ${label} variable field ${detail}` }]
  if (value === undefined || value === "") return accepts.required ? fail("required", "is required.") : []
  for (const check of accepts.checks) {
    const refused = refusal(check, value)
    if (refused !== undefined) return fail(...refused)
  }
  return []
}

// --- files (Wings paths are relative to the server root and never leave it) -----------------------------------

const normalise = (path: string) => {
  const parts: Array<string> = []
  for (const seg of path.split("/")) {
    if (seg === "..") parts.pop()
    else if (seg !== "" && seg !== ".") parts.push(seg)
  }
  return `/${parts.join("/")}`
}
const join = (root: string, name: string) => normalise(`${root}/${name}`)
const parentOf = (path: string) => normalise(`${path}/..`)
const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1)
const isDir = (files: ReadonlyMap<string, Entry>, path: string) => path === "/" || files.get(path)?.kind === "dir"
const within = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`)
const writeFile = (files: ReadonlyMap<string, Entry>, path: string, bytes: Uint8Array, now: number) => {
  const next = new Map(files)
  for (let dir = parentOf(path); dir !== "/" && !isDir(next, dir); dir = parentOf(dir)) next.set(dir, { kind: "dir", modified: now })
  return next.set(path, { kind: "file", bytes, modified: now })
}
const isText = (bytes: Uint8Array) => {
  try {
    return !new TextDecoder("utf-8", { fatal: true }).decode(bytes).includes("\0")
  } catch {
    return false
  }
}
const fileObject = (path: string, entry: Entry) => ({
  object: "file_object",
  attributes: {
    name: baseName(path),
    mode: entry.kind === "dir" ? "drwxr-xr-x" : "-rw-r--r--",
    mode_bits: entry.kind === "dir" ? "755" : "644",
    size: entry.kind === "dir" ? 4096 : entry.bytes.length,
    is_file: entry.kind === "file",
    is_symlink: false,
    mimetype: entry.kind === "dir"
      ? "inode/directory"
      : entry.bytes.length === 0
      ? "inode/x-empty"
      : isText(entry.bytes)
      ? "text/plain; charset=utf-8"
      : "application/octet-stream",
    created_at: iso(entry.modified),
    modified_at: iso(entry.modified)
  }
})
const diskBytes = (s: MemoryServer) =>
  [...s.files.values()].reduce((n, e) => n + (e.kind === "file" ? e.bytes.length : 0), 0)

/** The fake's archive: each file as `path\nlength\n` then its bytes (enough to be downloaded and checksummed). */
const archiveOf = (files: ReadonlyMap<string, Entry>, ignored: ReadonlyArray<string>) =>
  Buffer.concat([...files].flatMap(([path, e]) =>
    e.kind === "file" && !ignored.some((pattern) => within(path, join("/", pattern)))
      ? [Buffer.from(`${path}\n${e.bytes.length}\n`), e.bytes]
      : []
  ))
const backupObject = (b: MemoryBackup, created: boolean) => ({
  object: "backup",
  attributes: {
    uuid: b.uuid,
    is_successful: !created,
    is_locked: b.isLocked,
    name: b.name,
    ignored_files: b.ignoredFiles,
    checksum: created ? null : `sha1:${b.checksum}`,
    bytes: created ? 0 : b.archive.length,
    created_at: iso(b.createdAt),
    completed_at: created ? null : iso(b.completedAt)
  }
})

/** The `files` parts of a multipart/form-data body, as Wings reads an upload (§4.1). */
const filesParts = (contentType: string, body: Buffer) => {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1]
  if (boundary === undefined) return null
  const text = body.toString("latin1")
  return text.split(`--${boundary}`).slice(1, -1).flatMap((part) => {
    const end = part.indexOf("\r\n\r\n")
    const headers = part.slice(0, end)
    const name = /name="([^"]*)"/i.exec(headers)?.[1]
    const filename = /filename="([^"]*)"/i.exec(headers)?.[1]
    if (end < 0 || name !== "files" || filename === undefined || filename === "") return []
    return [{ filename: baseName(filename.replaceAll("\\", "/")), bytes: Buffer.from(part.slice(end + 4, -2), "latin1") }]
  })
}

// --- the game behind the console ---------------------------------------------------------------------------

const event = (name: string, ...args: ReadonlyArray<string>): ConsoleEvent => ({ event: name, args })
const statsOf = (s: MemoryServer, now: number) => ({
  memory_bytes: s.power === "running" ? Math.min(s.limits.memoryMiB || 4096, 768) * MiB : 0,
  memory_limit_bytes: s.limits.memoryMiB * MiB,
  cpu_absolute: s.power === "running" ? 12.5 : 0,
  network: { rx_bytes: 0, tx_bytes: 0 },
  uptime: s.power === "running" ? now - s.startedAt : 0,
  state: s.power,
  disk_bytes: diskBytes(s)
})
const stats = (s: MemoryServer, now: number) => event("stats", JSON.stringify(statsOf(s, now)))
type Step = readonly [MemoryServer, ReadonlyArray<ConsoleEvent>]
const say = (s: MemoryServer, now: number, lines: ReadonlyArray<string>): Step => {
  const stamped = lines.map((l) => l.startsWith("[Pterodactyl") || l.startsWith(">") ? l : `[${clock(now)} INFO]: ${l}`)
  return [{ ...s, log: [...s.log, ...stamped].slice(-LOG_LINES) }, stamped.map((l) => event("console output", l))]
}
const then = (first: Step, f: (s: MemoryServer) => Step): Step => {
  const [s, more] = f(first[0])
  return [s, [...first[1], ...more]]
}
const setPower = (s: MemoryServer, power: PowerState, now: number): Step => {
  const next = { ...s, power, startedAt: power === "starting" ? now : s.startedAt }
  return [next, [event("status", power), ...(power === "running" || power === "offline" ? [stats(next, now)] : [])]]
}
/** Power actions as Wings runs them, compressed in time: a start ends running, a stop ends offline. */
const powerStep = (s: MemoryServer, signal: string, now: number): Step => {
  const start = (x: MemoryServer): Step =>
    x.power !== "offline" ? [x, []] : then(
      then(setPower(x, "starting", now), (y) =>
        say(y, now, [
          "[Pterodactyl Daemon]: Updating process configuration files...",
          `Starting minecraft server version ${x.environment["MINECRAFT_VERSION"] ?? "latest"}`,
          `Done (1.042s)! For help, type "help"`
        ])),
      (y) => setPower(y, "running", now)
    )
  const stop = (x: MemoryServer): Step =>
    x.power === "offline" ? [x, []] : then(
      then(setPower(x, "stopping", now), (y) => say(y, now, ["Stopping the server", "Saving worlds"])),
      (y) => setPower(y, "offline", now)
    )
  if (signal === "start") return start(s)
  if (signal === "stop") return stop(s)
  if (signal === "restart") return then(stop(s), start)
  if (signal === "kill") return s.power === "offline" ? [s, []] : setPower(s, "offline", now)
  return [s, []]
}
/** A Paper-like answer to a console command; Wings ignores commands to a server that is not running (§3.3). */
const commandStep = (s: MemoryServer, command: string, now: number): Step => {
  if (s.power !== "running") return [s, []]
  const [verb = "", ...rest] = command.trim().split(/\s+/)
  const echo = say(s, now, [`> ${command}`])
  if (verb === "stop") return then(echo, (x) => powerStep(x, "stop", now))
  const answers: Record<string, () => ReadonlyArray<string>> = {
    say: () => [`[Server] ${rest.join(" ")}`],
    list: () => ["There are 0 of a max of 20 players online: "],
    help: () => ["--------- Help: Index ----------------------------", "Use /help [n] to get page n of help."],
    version: () => [`This server is running Paper version ${s.environment["MINECRAFT_VERSION"] ?? "latest"}`]
  }
  return then(echo, (x) => say(x, now, answers[verb]?.() ?? [`Unknown command. Type "/help" for help.`]))
}

/** Reports every install whose time is up; a suspended server keeps `suspended` and the outcome is lost (§2.4). */
const settle = (p: PanelState, now: number): PanelState => {
  const due = (s: MemoryServer) => s.install !== null && s.install.outcome !== "hang" && s.install.completesAt <= now
  if (!p.servers.some(due)) return p
  return {
    ...p,
    servers: p.servers.map((s): MemoryServer => {
      if (!due(s) || s.install === null) return s
      const done = { ...s, install: null }
      if (s.state === "suspended") return done
      if (s.install.outcome === "fail") return { ...done, state: "install_failed" }
      const jar = s.environment["SERVER_JARFILE"]
      const files = jar === undefined ? s.files : writeFile(s.files, join("/", jar), encoder.encode("PK\x03\x04"), now)
      const installed = { ...done, state: "installed" as const, files }
      return s.startOnCompletion ? { ...installed, power: "running", startedAt: s.install.completesAt } : installed
    })
  }
}
const view = (s: MemoryServer): PanelServer => ({
  id: s.id, externalId: s.externalId, uuid: s.uuid, identifier: s.identifier, name: s.name, state: s.state,
  suspended: s.state === "suspended", node: s.node, allocation: s.allocation, user: s.user
})
/** Why the Client API answers 409 (§3.4); the console token is refused only for suspension and maintenance. */
const conflict = (p: PanelState, s: MemoryServer, console: boolean) => {
  if (s.state === "suspended") return "This server is currently suspended and the functionality requested is unavailable."
  if (p.nodes.find((n) => n.id === s.node)?.maintenance === true) {
    return "The node of this server is currently under maintenance and the functionality requested is unavailable."
  }
  if (console) return null
  if (s.state === "installing" || s.state === "install_failed") {
    return "This server has not yet completed its installation process, please try again later."
  }
  return s.state === "restoring_backup" ? "This server is currently restoring from a backup, please try again later." : null
}

// --- the Client API routes a relay forwards (§3.5, §4) --------------------------------------------------------

type Answer = readonly [ClientResponse, MemoryServer]
type ClientFailure = PanelRejected | PanelResourceNotFound | PanelValidationFailed | GamePanelThrottled
const json = (status: number, value: unknown): ClientResponse => ({
  status, contentType: "application/json", body: encoder.encode(JSON.stringify(value))
})
const noContent: ClientResponse = { status: 204, contentType: null, body: new Uint8Array(0) }
const rejected = (operation: string, status: number, code: string, detail: string) =>
  Effect.fail(new PanelRejected({ operation, status, code, detail }))
const notFound = (operation: string) => Effect.fail(new PanelResourceNotFound({ operation }))

const Root = Schema.optional(Schema.String)
const RenameBody = Schema.Struct({ root: Root, files: Schema.Array(Schema.Struct({ from: Schema.String, to: Schema.String })) })
const DeleteBody = Schema.Struct({ root: Root, files: Schema.Array(Schema.String) })
const FolderBody = Schema.Struct({ root: Root, name: Schema.String })
const BackupBody = Schema.Struct({
  name: Schema.optional(Schema.NullOr(Schema.String)),
  ignored: Schema.optional(Schema.NullOr(Schema.String)),
  is_locked: Schema.optional(Schema.NullOr(Schema.Boolean))
})
/** A JSON body as Laravel reads it: malformed → 400 (§1.1), empty → `{}`, failing the rules → 422. */
const jsonBody = <A>(
  schema: Schema.Decoder<A>,
  request: ClientRequest,
  operation: string
): Effect.Effect<A, PanelRejected | PanelValidationFailed> => {
  const text = request.body === null ? "" : decoder.decode(request.body.bytes)
  let value: unknown = {}
  try {
    value = text.trim() === "" ? {} : JSON.parse(text)
  } catch (e) {
    return rejected(operation, 400, "BadRequestHttpException", `The JSON data passed in the request appears to be malformed: ${String(e)}`)
  }
  return Option.match(Schema.decodeUnknownOption(schema)(value), {
    onNone: () => Effect.fail(new PanelValidationFailed({ operation, fields: [{ field: "body", rule: "required", detail: "The given data was invalid." }] })),
    onSome: Effect.succeed
  })
}

const filesRoutes = (s: MemoryServer, req: ClientRequest, op: string, now: number) => {
  const q = new URLSearchParams(req.query)
  const files = (next: ReadonlyMap<string, Entry>): Answer => [noContent, { ...s, files: next }]
  return {
    "GET files/list": () => {
      const dir = normalise(q.get("directory") ?? "/")
      if (!isDir(s.files, dir)) return notFound(op)
      const items = [...s.files].filter(([path]) => path !== dir && parentOf(path) === dir)
        .sort(([a, x], [b, y]) => x.kind === y.kind ? a.localeCompare(b) : x.kind === "dir" ? -1 : 1)
      return Effect.succeed<Answer>([json(200, { object: "list", data: items.map(([p, e]) => fileObject(p, e)) }), s])
    },
    "GET files/contents": () => {
      const entry = s.files.get(normalise(q.get("file") ?? ""))
      if (entry === undefined) return notFound(op)
      if (entry.kind === "dir") return rejected(op, 400, "BadRequestHttpException", "Cannot perform that action: file is a directory.")
      if (entry.bytes.length > MAX_EDIT_BYTES) return rejected(op, 400, "FileSizeTooLargeException", "The file is too large to edit.")
      return Effect.succeed<Answer>([{ status: 200, contentType: "text/plain", body: entry.bytes }, s])
    },
    "POST files/write": () => {
      const path = normalise(q.get("file") ?? "")
      if (path === "/" || isDir(s.files, path)) return rejected(op, 400, "BadRequestHttpException", "Cannot write to a directory.")
      return Effect.succeed(files(writeFile(s.files, path, req.body?.bytes ?? new Uint8Array(0), now)))
    },
    "PUT files/rename": () =>
      Effect.flatMap(jsonBody(RenameBody, req, op), ({ files: moves, root = "/" }): Effect.Effect<Answer, ClientFailure> => {
        const next = new Map(s.files)
        for (const move of moves) {
          const [from, to] = [join(root, move.from), join(root, move.to)]
          if (!next.has(from)) return notFound(op)
          if (next.has(to)) return rejected(op, 400, "DaemonConnectionException", "Cannot move or rename file, destination already exists.")
          for (const [path, entry] of [...next].filter(([path]) => within(path, from))) {
            next.delete(path)
            next.set(to + path.slice(from.length), entry)
          }
        }
        return Effect.succeed(files(next))
      }),
    "POST files/delete": () =>
      Effect.map(jsonBody(DeleteBody, req, op), ({ files: names, root = "/" }) => {
        const gone = names.map((name) => join(root, name)).filter((path) => path !== "/")
        return files(new Map([...s.files].filter(([path]) => !gone.some((g) => within(path, g)))))
      }),
    "POST files/create-folder": () =>
      Effect.flatMap(jsonBody(FolderBody, req, op), ({ name, root = "/" }): Effect.Effect<Answer, ClientFailure> => {
        const dir = join(root, name)
        if (s.files.get(dir)?.kind === "file") return rejected(op, 400, "DaemonConnectionException", "A file already exists at that path.")
        const next = writeFile(s.files, join(dir, ".keep"), new Uint8Array(0), now)
        next.delete(join(dir, ".keep"))
        return Effect.succeed(files(next.set(dir, next.get(dir) ?? { kind: "dir", modified: now })))
      })
  } satisfies Record<string, () => Effect.Effect<Answer, ClientFailure>>
}

const backupRoutes = (s: MemoryServer, req: ClientRequest, op: string, now: number, fresh: string) => {
  const q = new URLSearchParams(req.query)
  const list = () => {
    const perPage = Math.min(50, Math.max(1, Number(q.get("per_page") ?? 20) || 20))
    const page = Math.max(1, Number(q.get("page") ?? 1) || 1)
    const data = s.backups.slice((page - 1) * perPage, page * perPage).map((b) => backupObject(b, false))
    const pagination = {
      total: s.backups.length, count: data.length, per_page: perPage, current_page: page,
      total_pages: Math.max(1, Math.ceil(s.backups.length / perPage)), links: {}
    }
    return Effect.succeed<Answer>([json(200, { object: "list", data, meta: { pagination, backup_count: s.backups.length } }), s])
  }
  const create = () =>
    Effect.flatMap(jsonBody(BackupBody, req, op), (body): Effect.Effect<Answer, ClientFailure> => {
      const recent = s.backups.filter((b) => now - b.createdAt < BACKUP_THROTTLE.periodMs)
      const [oldest] = recent
      if (oldest !== undefined && recent.length >= BACKUP_THROTTLE.limit) {
        const retryAfterSeconds = Math.ceil((oldest.createdAt + BACKUP_THROTTLE.periodMs - now) / 1000)
        return Effect.fail(new GamePanelThrottled({ operation: op, retryAfterSeconds }))
      }
      const limit = s.featureLimits.backups
      if (s.backups.length >= limit) {
        return rejected(op, 400, "TooManyBackupsException", `Cannot create a new backup, this server has reached its limit of ${limit} backups.`)
      }
      const ignoredFiles = (body.ignored ?? "").split("\n").map((l) => l.trim()).filter((l) => l !== "")
      const archive = archiveOf(s.files, ignoredFiles)
      const backup: MemoryBackup = {
        uuid: fresh, name: body.name?.trim() || `Backup at ${iso(now).slice(0, 19).replace("T", " ")}`, ignoredFiles,
        isLocked: body.is_locked ?? false, checksum: createHash("sha1").update(archive).digest("hex"), archive,
        createdAt: now, completedAt: now
      }
      // Wings archives in the background: the answer shows the backup in progress; the fake finishes at once.
      return Effect.succeed<Answer>([json(200, backupObject(backup, true)), { ...s, backups: [...s.backups, backup] }])
    })
  const one = (uuid: string, f: (b: MemoryBackup) => Effect.Effect<Answer, ClientFailure>) => () => {
    const backup = s.backups.find((b) => b.uuid === uuid)
    return backup === undefined ? notFound(op) : f(backup)
  }
  const replace = (b: MemoryBackup | null, uuid: string) =>
    b === null ? s.backups.filter((x) => x.uuid !== uuid) : s.backups.map((x) => x.uuid === uuid ? b : x)
  const match = /^backups\/([^/]+)(\/lock)?$/.exec(req.path)
  const uuid = match?.[1] ?? ""
  const routes: Record<string, () => Effect.Effect<Answer, ClientFailure>> = {
    "GET backups": list,
    "POST backups": create,
    [`GET backups/${uuid}`]: one(uuid, (b) => Effect.succeed<Answer>([json(200, backupObject(b, false)), s])),
    [`POST backups/${uuid}/lock`]: one(uuid, (b) => {
      const locked = { ...b, isLocked: !b.isLocked }
      return Effect.succeed<Answer>([json(200, backupObject(locked, false)), { ...s, backups: replace(locked, uuid) }])
    }),
    [`DELETE backups/${uuid}`]: one(uuid, (b) =>
      b.isLocked
        ? rejected(op, 400, "BackupLockedException", "This backup cannot be deleted while it is marked as locked.")
        : Effect.succeed<Answer>([noContent, { ...s, backups: replace(null, uuid) }]))
  }
  return routes
}

/** The client server object (§3.4: readable in every state) and its resources. */
const serverRoutes = (p: PanelState, s: MemoryServer, now: number) => ({
  "GET ": () =>
    Effect.succeed<Answer>([json(200, {
      object: "server",
      attributes: {
        server_owner: false, identifier: s.identifier, internal_id: s.id, uuid: s.uuid, name: s.name,
        node: p.nodes.find((n) => n.id === s.node)?.name ?? "", status: s.state === "installed" ? null : s.state,
        is_suspended: s.state === "suspended", is_installing: s.state === "installing", is_transferring: false,
        limits: { memory: s.limits.memoryMiB, swap: s.limits.swapMiB, disk: s.limits.diskMiB, io: s.limits.io, cpu: s.limits.cpuPercent, threads: null, oom_disabled: s.oomDisabled },
        feature_limits: s.featureLimits
      }
    }), s]),
  "GET resources": () => {
    const st = statsOf(s, now)
    const resources = {
      memory_bytes: st.memory_bytes, cpu_absolute: st.cpu_absolute, disk_bytes: st.disk_bytes,
      network_rx_bytes: st.network.rx_bytes, network_tx_bytes: st.network.tx_bytes, uptime: st.uptime
    }
    return Effect.succeed<Answer>([json(200, {
      object: "stats", attributes: { current_state: s.power, is_suspended: s.state === "suspended", resources }
    }), s])
  }
})

interface ConsoleHandle {
  readonly queue: Queue.Queue<ConsoleEvent, ConsoleEnded | Cause.Done>
  readonly ended: Ref.Ref<string | null>
}
const uuid4 = Effect.map(Effect.forEach(Array.from({ length: 32 }), () => Random.next), (rs) => {
  const hex = rs.map((r, i) => (i === 12 ? 4 : i === 16 ? 8 + Math.floor(r * 4) : Math.floor(r * 16)).toString(16)).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
})
/** A download's body: the bytes in 64 KiB pieces, one per turn, as a node's would arrive. */
async function* chunks(bytes: Uint8Array, size = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}

export const make = (options: Options) =>
  Effect.gen(function*() {
    const installMs = Duration.toMillis(options.installDuration ?? "30 seconds")
    const defaultOutcome = options.installOutcome ?? "succeed"
    const state = yield* SynchronizedRef.make<ReadonlyMap<string, PanelState>>(
      new Map(options.panels.map((p) => [p.name, seedPanel(p)]))
    )
    const consoles = yield* Ref.make<ReadonlyMap<string, ReadonlyArray<ConsoleHandle>>>(new Map())
    const faults = yield* Ref.make<Faults>({})
    const counts = yield* Ref.make<ReadonlyMap<Operation, number>>(new Map())

    /** Counts the call, then fails with an injected fault instead of running `effect`, if there is one. */
    const guard = <Op extends Operation>(operation: Op) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Ref.update(counts, (m) => new Map(m).set(operation, (m.get(operation) ?? 0) + 1)).pipe(
        Effect.andThen(Ref.modify(faults, (all): readonly [OperationError<Op> | undefined, Faults] => {
          const entry = all[operation]
          const [head, ...rest] = entry?.next ?? []
          return head === undefined ? [entry?.always, all] : [head, { ...all, [operation]: { ...entry, next: rest } }]
        })),
        Effect.flatMap((fault): Effect.Effect<A, E | OperationError<Op>, R> =>
          fault === undefined ? effect : Effect.fail(fault))
      )
    const addFault = <Op extends Operation>(operation: Op, error: OperationError<Op>, always: boolean) =>
      Ref.update(faults, (all): Faults => {
        const next = all[operation]?.next ?? []
        return { ...all, [operation]: always ? { next, always: error } : { ...all[operation], next: [...next, error] } }
      })

    /** Changes one panel atomically, after reporting the installs whose time is up. */
    const modify = <A, E>(panel: string, f: (p: PanelState, now: number) => Effect.Effect<readonly [A, PanelState], E>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        SynchronizedRef.modifyEffect(state, (all): Effect.Effect<readonly [A, ReadonlyMap<string, PanelState>], E | PanelUnknown> => {
          const p = all.get(panel)
          if (p === undefined) return Effect.fail(new PanelUnknown({ panel }))
          return Effect.map(f(settle(p, now), now), ([a, next]) => [a, new Map(all).set(panel, next)] as const)
        }))
    const read = <A, E = never>(panel: string, f: (p: PanelState, now: number) => Effect.Effect<A, E>) =>
      modify(panel, (p, now) => Effect.map(f(p, now), (a) => [a, p] as const))
    const withServer = (p: PanelState, s: MemoryServer): PanelState => ({
      ...p, servers: p.servers.map((x) => x.id === s.id ? s : x)
    })
    const byUuid = (p: PanelState, uuid: string, operation: string) => {
      const s = p.servers.find((x) => x.uuid === uuid)
      return s === undefined ? notFound(operation) : Effect.succeed(s)
    }
    const byId = (p: PanelState, id: number, operation: string) => {
      const s = p.servers.find((x) => x.id === id)
      return s === undefined ? notFound(operation) : Effect.succeed(s)
    }
    const gate = (p: PanelState, s: MemoryServer, operation: string, console = false) => {
      const detail = conflict(p, s, console)
      return detail === null ? Effect.void : Effect.fail(new ServerStateConflict({ operation, detail }))
    }
    const assigned = (p: PanelState, allocation: number) => p.servers.some((s) => s.allocation === allocation)
    const consoleKey = (panel: string, uuid: string) => `${panel}/${uuid}`
    const broadcast = (panel: string, uuid: string, events: ReadonlyArray<ConsoleEvent>) =>
      events.length === 0 ? Effect.void : Effect.flatMap(Ref.get(consoles), (m) =>
        Effect.forEach(m.get(consoleKey(panel, uuid)) ?? [], (c) => Queue.offerAll(c.queue, events), { discard: true }))
    const endConsoles = (panel: string, uuid: string, reason: string) =>
      Effect.flatMap(Ref.get(consoles), (m) =>
        Effect.forEach(m.get(consoleKey(panel, uuid)) ?? [], (c) =>
          Effect.andThen(Ref.set(c.ended, reason), Queue.fail(c.queue, new ConsoleEnded({ reason }))), { discard: true }))
    /** Runs a step of the server's process and shows its events on every console open on it. */
    const step = (panel: string, p: PanelState, [next, events]: Step) =>
      Effect.as(broadcast(panel, next.uuid, events), withServer(p, next))

    const createServer = (panel: string, server: NewServer) =>
      Effect.flatMap(uuid4, (uuid) =>
        modify(panel, (p, now) => {
          const fields: Array<Failure> = []
          const add = (field: string, rule: string, detail: string) => fields.push({ field, rule, detail })
          if (server.name.length < 1 || server.name.length > 191) add("name", "between", "The name must be between 1 and 191 characters.")
          if (p.servers.some((s) => s.externalId === server.externalId)) add("external_id", "unique", "The external id has already been taken.")
          if (!p.users.some((u) => u.id === server.user)) add("user", "exists", "The selected user is invalid.")
          const egg = p.eggs.find((e) => e.id === server.egg)
          if (egg === undefined) add("egg", "exists", "The selected egg is invalid.")
          if (server.dockerImage === "") add("docker_image", "required", "The docker image field is required.")
          else if (!DOCKER_IMAGE.test(server.dockerImage) || server.dockerImage.length > 191) add("docker_image", "regex", "The docker image format is invalid.")
          if (server.startup === "") add("startup", "required", "The startup field is required.")
          const { cpuPercent, diskMiB, io, memoryMiB, swapMiB } = server.limits
          for (const [field, value, min] of [["memory", memoryMiB, 0], ["swap", swapMiB, -1], ["disk", diskMiB, 0], ["cpu", cpuPercent, 0]] as const) {
            if (value < min) add(`limits.${field}`, "min", `The limits.${field} must be at least ${min}.`)
          }
          if (io < 10 || io > 1000) add("limits.io", "between", "The limits.io must be between 10 and 1000.")
          for (const [field, value] of Object.entries(server.featureLimits)) {
            if (value < 0) add(`feature_limits.${field}`, "min", `The feature_limits.${field} must be at least 0.`)
          }
          const allocation = p.allocations.find((a) => a.id === server.allocation)
          if (allocation === undefined || assigned(p, allocation.id)) add("allocation.default", "exists", "The selected allocation.default is invalid.")
          for (const v of egg?.variables ?? []) {
            fields.push(...checkVariable(`environment.${v.envVariable}`, v.name, server.environment[v.envVariable], v.accepts))
          }
          if (fields.length > 0 || allocation === undefined) {
            return Effect.fail(new PanelValidationFailed({ operation: "createServer", fields }))
          }
          const created: MemoryServer = {
            ...server, id: Math.max(0, ...p.servers.map((s) => s.id)) + 1, uuid, identifier: uuid.slice(0, 8),
            state: "installing", suspended: false, node: allocation.node, allocation: allocation.id,
            install: { completesAt: now + installMs, outcome: p.outcomes.get(server.externalId) ?? defaultOutcome },
            power: "offline", startedAt: 0, files: new Map(), backups: [], log: []
          }
          return Effect.succeed([view(created), { ...p, servers: [...p.servers, created] }] as const)
        }))

    const createUser: Port["createUser"] = (panel, user) =>
      Effect.flatMap(uuid4, (uuid) =>
        modify(panel, (p) => {
          const username = user.username.toLowerCase()
          const email = user.email.toLowerCase()
          const fields: Array<Failure> = []
          if (!USERNAME.test(username) || username.length < 3 || username.length > 191) {
            fields.push({ field: "username", rule: "p_username", detail: "The username must start and end with alpha-numeric characters and contain only letters, numbers, dashes, underscores, and periods." })
          }
          if (!EMAIL.test(email)) fields.push({ field: "email", rule: "email", detail: "The email must be a valid email address." })
          if (p.users.some((u) => u.email === email)) fields.push({ field: "email", rule: "unique", detail: "The email has already been taken." })
          if (p.users.some((u) => u.username === username)) fields.push({ field: "username", rule: "unique", detail: "The username has already been taken." })
          for (const [field, value] of [["first_name", user.firstName], ["last_name", user.lastName]] as const) {
            if (value.trim() === "") fields.push({ field, rule: "required", detail: `The ${field.replace("_", " ")} field is required.` })
          }
          if (fields.length > 0) return Effect.fail(new PanelValidationFailed({ operation: "createUser", fields }))
          const created: PanelUser = {
            id: Math.max(0, ...p.users.map((u) => u.id)) + 1, externalId: user.externalId, uuid, username, email
          }
          return Effect.succeed([created, { ...p, users: [...p.users, created] }] as const)
        }))

    const clientRequest: Port["clientRequest"] = (panel, uuid, request) =>
      Effect.flatMap(uuid4, (fresh) =>
        modify(panel, (p, now) =>
          Effect.gen(function*() {
            const op = `${request.method} ${request.path}`
            const s = yield* byUuid(p, uuid, op)
            const path = request.path.replace(/^\/+|\/+$/g, "")
            const routes: Record<string, () => Effect.Effect<Answer, ClientFailure>> = {
              ...serverRoutes(p, s, now),
              ...filesRoutes(s, { ...request, path }, op, now),
              ...backupRoutes(s, { ...request, path }, op, now, fresh)
            }
            const route = routes[`${request.method} ${path}`]
            if (route === undefined) return yield* notFound(op)
            if (path !== "") yield* gate(p, s, op)
            const [response, next] = yield* route()
            return [response, withServer(p, next)] as const
          })))

    const openConsole: Port["openConsole"] = (panel, uuid) =>
      Effect.gen(function*() {
        const queue = yield* Queue.unbounded<ConsoleEvent, ConsoleEnded | Cause.Done>()
        const ended = yield* Ref.make<string | null>(null)
        const handle: ConsoleHandle = { queue, ended }
        const key = consoleKey(panel, uuid)
        const register = (f: (all: ReadonlyArray<ConsoleHandle>) => ReadonlyArray<ConsoleHandle>) =>
          Ref.update(consoles, (m) => new Map(m).set(key, f(m.get(key) ?? [])))
        // Registered in the same step as the checks, so a suspension cannot slip in between.
        yield* read(panel, (p, now) =>
          Effect.gen(function*() {
            const s = yield* byUuid(p, uuid, "openConsole")
            yield* gate(p, s, "openConsole", true)
            yield* register((all) => [...all, handle])
            yield* Queue.offerAll(queue, [event("status", s.power), ...(s.power === "offline" ? [stats(s, now)] : [])])
          }))
        yield* Effect.addFinalizer(() =>
          register((all) => all.filter((c) => c !== handle)).pipe(
            Effect.andThen(Ref.update(ended, (r) => r ?? "console closed")),
            Effect.andThen(Queue.end(queue))
          ))
        const send = (inbound: ConsoleRequest) =>
          Effect.gen(function*() {
            const reason = yield* Ref.get(ended)
            if (reason !== null) return yield* new ConsoleEnded({ reason })
            yield* modify(panel, (p, now) =>
              Effect.gen(function*() {
                const s = p.servers.find((x) => x.uuid === uuid)
                if (s === undefined) return yield* new ConsoleEnded({ reason: "server deleted" })
                const busy = s.state !== "installed"
                if (inbound._tag === "SendLogs" && s.power === "running") {
                  yield* Queue.offerAll(queue, s.log.map((line) => event("console output", line)))
                }
                if (inbound._tag === "SendStats") yield* Queue.offer(queue, stats(s, now))
                const next = busy ? null : inbound._tag === "Command"
                  ? commandStep(s, inbound.line, now)
                  : inbound._tag === "Power"
                  ? powerStep(s, inbound.signal, now)
                  : null
                return [undefined, next === null ? p : yield* step(panel, p, next)] as const
              })).pipe(Effect.catchTag("PanelUnknown", (e) => Effect.fail(new ConsoleEnded({ reason: `panel ${e.panel} is gone` }))))
          })
        const live: GameConsole = { events: Stream.fromQueue(queue), send }
        return live
      })

    const download: Port["download"] = (panel, uuid, target) =>
      read(panel, (p) =>
        Effect.gen(function*() {
          const s = yield* byUuid(p, uuid, "download")
          yield* gate(p, s, "download")
          const found = target._tag === "File"
            ? ((entry) => entry?.kind === "file" ? { filename: baseName(normalise(target.path)), bytes: entry.bytes } : entry)(
              s.files.get(normalise(target.path))
            )
            : ((b) => b && { filename: `${b.uuid}.tar.gz`, bytes: b.archive })(s.backups.find((b) => b.uuid === target.uuid))
          if (found === undefined) return yield* notFound("download")
          if (!("bytes" in found)) return yield* rejected("download", 400, "DaemonConnectionException", "Cannot download a directory.")
          return {
            contentLength: found.bytes.length, filename: found.filename, contentType: "application/octet-stream",
            body: chunks(found.bytes)
          }
        }))

    const upload: Port["upload"] = (panel, uuid, { body, contentType, directory }) =>
      Effect.gen(function*() {
        const limit = yield* read(panel, (p) =>
          Effect.flatMap(byUuid(p, uuid, "upload"), (s) =>
            Effect.as(gate(p, s, "upload"), (p.nodes.find((n) => n.id === s.node)?.uploadSizeMiB ?? 100) * MiB)))
        const bytes = Buffer.concat(yield* Stream.runCollect(body))
        const parts = filesParts(contentType, bytes)
        if (parts === null || parts.length === 0) {
          return yield* rejected("upload", 400, "BadRequestHttpException", "No files were found in the request body.")
        }
        if (parts.some((part) => part.bytes.length > limit)) {
          return yield* rejected("upload", 413, "RequestEntityTooLarge", "The uploaded file exceeds the node's upload size.")
        }
        yield* modify(panel, (p, now) =>
          Effect.gen(function*() {
            const s = yield* byUuid(p, uuid, "upload")
            yield* gate(p, s, "upload")
            const files = parts.reduce((all, part) => writeFile(all, join(directory, part.filename), part.bytes, now), s.files)
            return [undefined, withServer(p, { ...s, files })] as const
          }))
      })

    const gamePanel = GamePanel.of({
      findUser: (panel, externalId) =>
        guard("findUser")(read(panel, (p) => Effect.succeed(p.users.find((u) => u.externalId === externalId) ?? null))),
      createUser: (panel, user) => guard("createUser")(createUser(panel, user)),
      nodes: (panel) =>
        guard("nodes")(read(panel, (p) =>
          Effect.succeed(p.nodes.map(({ uploadSizeMiB: _, ...n }): PanelNode => {
            const on = p.servers.filter((s) => s.node === n.id)
            return {
              ...n,
              allocatedMemoryMiB: on.reduce((sum, s) => sum + s.limits.memoryMiB, 0),
              allocatedDiskMiB: on.reduce((sum, s) => sum + s.limits.diskMiB, 0)
            }
          })))),
      freeAllocations: (panel, node) =>
        guard("freeAllocations")(read(panel, (p) =>
          Effect.succeed(p.allocations.filter((a) => a.node === node && !assigned(p, a.id)).map((a) => ({ ...a, assigned: false }))))),
      egg: (panel, eggId) =>
        guard("egg")(read(panel, (p) => {
          const egg = p.eggs.find((e) => e.id === eggId)
          return egg === undefined ? notFound("egg") : Effect.succeed(egg)
        })),
      createServer: (panel, server) => guard("createServer")(createServer(panel, server)),
      server: (panel, id) => guard("server")(read(panel, (p) => Effect.map(byId(p, id, "server"), view))),
      serverByExternalId: (panel, externalId) =>
        guard("serverByExternalId")(read(panel, (p) => {
          const s = p.servers.find((x) => x.externalId === externalId)
          return Effect.succeed(s === undefined ? null : view(s))
        })),
      // Wings stops a server it is told is suspended; newer Wings also closes its sockets (§2.6).
      suspend: (panel, id) =>
        guard("suspend")(modify(panel, (p, now) =>
          Effect.gen(function*() {
            const s = yield* byId(p, id, "suspend")
            if (s.state === "suspended") return [undefined, p] as const
            const [stopped, events] = powerStep(s, "stop", now)
            const next = yield* step(panel, p, [{ ...stopped, state: "suspended", suspended: true }, events])
            yield* endConsoles(panel, s.uuid, "server suspended")
            return [undefined, next] as const
          }))),
      // Unsuspending always writes `status = null`, even mid-install (§2.6).
      unsuspend: (panel, id) =>
        guard("unsuspend")(modify(panel, (p) =>
          Effect.map(byId(p, id, "unsuspend"), (s) =>
            [undefined, s.state === "suspended" ? withServer(p, { ...s, state: "installed", suspended: false }) : p] as const))),
      servers: (panel) => guard("servers")(read(panel, (p) => Effect.succeed(p.servers.map(view)))),
      // Only a server whose external id is still `externalId` is deleted (PanelServerNotOurs otherwise).
      deleteServer: (panel, id, externalId) =>
        guard("deleteServer")(modify(panel, (p) =>
          Effect.gen(function*() {
            const s = p.servers.find((x) => x.id === id)
            if (s === undefined) return [undefined, p] as const
            if (s.externalId !== externalId) {
              return yield* new PanelServerNotOurs({ panel, id, expected: externalId, found: s.externalId })
            }
            yield* broadcast(panel, s.uuid, [event("deleted", "null")])
            yield* endConsoles(panel, s.uuid, "server deleted")
            return [undefined, { ...p, servers: p.servers.filter((x) => x.id !== id) }] as const
          }))),
      power: (panel, uuid, signal) =>
        guard("power")(modify(panel, (p, now) =>
          Effect.gen(function*() {
            const s = yield* byUuid(p, uuid, "power")
            yield* gate(p, s, "power")
            return [undefined, yield* step(panel, p, powerStep(s, signal, now))] as const
          }))),
      openConsole: (panel, uuid) => guard("openConsole")(openConsole(panel, uuid)),
      clientRequest: (panel, uuid, request) => guard("clientRequest")(clientRequest(panel, uuid, request)),
      download: (panel, uuid, target) => guard("download")(download(panel, uuid, target)),
      upload: (panel, uuid, body) => guard("upload")(upload(panel, uuid, body))
    })

    const editPanel = (panel: string, f: (p: PanelState) => PanelState) =>
      modify(panel, (p) => Effect.succeed([undefined, f(p)] as const))
    const control = MemoryGamePanelControl.of({
      seed: options,
      addPanel: (seed) => SynchronizedRef.update(state, (all) => new Map(all).set(seed.name, seedPanel(seed))),
      addNode: (panel, node) => editPanel(panel, (p) => ({ ...p, nodes: [...p.nodes, nodeOf(node)] })),
      addAllocations: (panel, seed) =>
        modify(panel, (p) => {
          const [added, next] = addAllocationsTo(p, [seed])
          return Effect.succeed([added.map((a) => ({ ...a, assigned: false })), next] as const)
        }),
      addEgg: (panel, egg) =>
        editPanel(panel, (p) => ({
          ...p, eggs: [...p.eggs.filter((e) => e.id !== egg.id), { ...egg, dockerImages: normaliseImages(egg.dockerImages) }]
        })),
      setNodeMaintenance: (panel, node, maintenance) =>
        editPanel(panel, (p) => ({ ...p, nodes: p.nodes.map((n) => n.id === node ? { ...n, maintenance } : n) })),
      setExternalId: (panel, server, externalId) =>
        editPanel(panel, (p) => ({ ...p, servers: p.servers.map((x) => x.id === server ? { ...x, externalId } : x) })),
      setInstallOutcome: (panel, externalId, outcome) =>
        editPanel(panel, (p) => ({
          ...p,
          outcomes: new Map(p.outcomes).set(externalId, outcome),
          servers: p.servers.map((s) =>
            s.externalId === externalId && s.install !== null ? { ...s, install: { ...s.install, outcome } } : s)
        })),
      failNext: (operation, error) => addFault(operation, error, false),
      failAlways: (operation, error) => addFault(operation, error, true),
      clearFaults: Ref.set(faults, {}),
      calls: (operation) => Effect.map(Ref.get(counts), (m) => m.get(operation) ?? 0),
      servers: (panel) => read(panel, (p) => Effect.succeed(p.servers)),
      files: (panel, uuid) =>
        read(panel, (p) =>
          Effect.map(byUuid(p, uuid, "files"), (s) =>
            new Map([...s.files].flatMap(([path, e]) => e.kind === "file" ? [[path, e.bytes] as const] : [])))),
      putFile: (panel, uuid, path, bytes) =>
        modify(panel, (p, now) =>
          Effect.map(byUuid(p, uuid, "putFile"), (s) =>
            [undefined, withServer(p, { ...s, files: writeFile(s.files, normalise(path), bytes, now) })] as const)),
      openConsoles: (panel, uuid) => Effect.map(Ref.get(consoles), (m) => m.get(consoleKey(panel, uuid))?.length ?? 0)
    })
    return { gamePanel, control }
  })

/** GamePanel and its MemoryGamePanelControl surface, over one fresh panel state per build (the sandbox's seed by default). */
export const layer = (options: Options = defaultOptions) =>
  Layer.effectContext(Effect.map(make(options), ({ control, gamePanel }) =>
    Context.make(GamePanel, gamePanel).pipe(Context.add(MemoryGamePanelControl, control))))
