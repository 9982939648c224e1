// The game panel (Pterodactyl), as the game-server domain needs it: panel users, nodes and their free
// allocations, eggs and what their settings accept, servers and their life (create, install status, suspend,
// unsuspend, delete, power), the live console, and the customer's file and backup operations, relayed without ever
// showing the panel's address.
// Every game-server operation goes through this one port. `panel` is a panel's name from the catalog.
import { Context, type Effect, type Redacted, Schema, type Scope, type Stream } from "effect"

export interface PanelUser {
  readonly id: number
  /** Our user id (the panel's `external_id`). */
  readonly userId: string | null
  readonly uuid: string
  readonly username: string
  readonly email: string
}

export interface PanelNode {
  readonly id: number
  readonly name: string
  /** Only public nodes take new servers. */
  readonly public: boolean
  readonly maintenance: boolean
  readonly memoryMiB: number
  /** Percent over `memoryMiB` the panel lets servers claim (0 = none; negative = no overallocation check). */
  readonly memoryOverallocate: number
  readonly diskMiB: number
  readonly diskOverallocate: number
  /** What the node's servers already claim (the panel's `allocated_resources`). */
  readonly allocatedMemoryMiB: number
  readonly allocatedDiskMiB: number
}

export interface PanelAllocation {
  readonly id: number
  readonly node: number
  readonly ip: string
  /** The address players should use when set (ip_alias). */
  readonly alias: string | null
  readonly port: number
  readonly assigned: boolean
}

export interface EggVariable {
  readonly name: string
  readonly envVariable: string
  readonly defaultValue: string
  readonly userViewable: boolean
  readonly userEditable: boolean
  /** What the panel accepts for it, decoded by the adapter from the panel's own rule language. */
  readonly accepts: AcceptedValue
}

/**
 * What a game setting accepts. `required`: an empty or missing value is refused. `checks` apply to a given value in
 * order, the first one it fails being its problem; what the panel checks that this model cannot say is left to the
 * panel (its refusal arrives as `PanelValidationFailed`).
 */
export interface AcceptedValue {
  readonly required: boolean
  readonly checks: ReadonlyArray<ValueCheck>
}

/** `of`: whether a bound applies to the text's length (in characters) or to its value as a number. */
export type ValueCheck =
  | { readonly _tag: "Number" }
  | { readonly _tag: "WholeNumber" }
  | { readonly _tag: "TrueOrFalse" }
  | { readonly _tag: "LettersAndDigits"; readonly dashes: boolean }
  | { readonly _tag: "AtMost"; readonly bound: number; readonly of: "length" | "value" }
  | { readonly _tag: "AtLeast"; readonly bound: number; readonly of: "length" | "value" }
  | { readonly _tag: "Between"; readonly low: number; readonly high: number; readonly of: "length" | "value" }
  | { readonly _tag: "OneOf"; readonly values: ReadonlyArray<string> }
  | { readonly _tag: "Matches"; readonly pattern: RegExp }

export interface Egg {
  readonly id: number
  readonly nest: number
  readonly name: string
  readonly startup: string
  /** Display name → image (a list-shaped `docker_images` is normalised to image → image). */
  readonly dockerImages: Readonly<Record<string, string>>
  readonly variables: ReadonlyArray<EggVariable>
}

/** The panel's `status`: `installed` stands for its `null`. */
export type ServerState = "installing" | "installed" | "install_failed" | "reinstall_failed" | "suspended" | "restoring_backup"

export interface PanelServer {
  readonly id: number
  /** The order it was made for (the panel's `external_id`), if it carries one. */
  readonly orderId: string | null
  readonly uuid: string
  /** The 8-character short id (Client API, panel URLs). */
  readonly identifier: string
  readonly name: string
  readonly state: ServerState
  readonly suspended: boolean
  readonly node: number
  /** The default allocation's id. */
  readonly allocation: number
  readonly user: number
}

export interface NewServer {
  readonly name: string
  /** The order it is made for: a retried creation finds the first one by this instead of creating a second. */
  readonly orderId: string
  readonly user: number
  readonly egg: number
  readonly dockerImage: string
  readonly startup: string
  /** Every egg variable with `required` must be present. */
  readonly environment: Readonly<Record<string, string>>
  readonly limits: {
    readonly memoryMiB: number
    readonly swapMiB: number
    readonly diskMiB: number
    /** 10–1000. */
    readonly io: number
    readonly cpuPercent: number
  }
  readonly oomDisabled: boolean
  readonly featureLimits: { readonly databases: number; readonly backups: number; readonly allocations: number }
  readonly allocation: number
  readonly startOnCompletion: boolean
}

export type PowerSignal = "start" | "stop" | "restart" | "kill"

/** One Wings console event: `{event, args}` as on the wire (all args are strings). */
export interface ConsoleEvent {
  readonly event: string
  readonly args: ReadonlyArray<string>
  /**
   * The frame's text as received, when it says exactly `{event, args}` (nothing else, every arg a string): a relay
   * forwards an unchanged event as this text instead of encoding it again. Absent on events built in code.
   */
  readonly raw?: string
}

/** What a console is asked to do: run a command, change the power state, replay recent output, report resource use. */
export type ConsoleRequest =
  | { readonly _tag: "Command"; readonly line: string }
  | { readonly _tag: "Power"; readonly signal: PowerSignal }
  | { readonly _tag: "SendLogs" }
  | { readonly _tag: "SendStats" }

/**
 * A live console on a server, authenticated upstream by the adapter (which keeps the Wings token to itself and
 * renews it before it expires: the token lifecycle events never appear in `events`).
 */
export interface GameConsole {
  readonly events: Stream.Stream<ConsoleEvent, ConsoleEnded>
  send(request: ConsoleRequest): Effect.Effect<void, ConsoleEnded>
}

/** A file or backup operation a customer may ask of their server. */
export type FileOperation =
  | { readonly _tag: "ListFiles" }
  | { readonly _tag: "ReadFile" }
  | { readonly _tag: "WriteFile" }
  | { readonly _tag: "RenameFiles" }
  | { readonly _tag: "CopyFile" }
  | { readonly _tag: "DeleteFiles" }
  | { readonly _tag: "CreateFolder" }
  | { readonly _tag: "CompressFiles" }
  | { readonly _tag: "DecompressFile" }
  | { readonly _tag: "ChangeFileModes" }
  | { readonly _tag: "ListBackups" }
  | { readonly _tag: "CreateBackup" }
  | { readonly _tag: "ReadBackup"; readonly backup: string }
  | { readonly _tag: "DeleteBackup"; readonly backup: string }
  | { readonly _tag: "ToggleBackupLock"; readonly backup: string }
  | { readonly _tag: "RestoreBackup"; readonly backup: string }

/**
 * A file or backup operation relayed for a customer: its query and body are theirs, in the formats our API shares
 * with the panel's (`directory=%2F`, `{root, files}`), passed on as they are.
 */
export interface FileCall {
  readonly operation: FileOperation
  /** The raw query string without `?` (may be empty). */
  readonly query: string
  readonly body: { readonly contentType: string; readonly bytes: Uint8Array } | null
}

export interface FileCallResponse {
  readonly status: number
  readonly contentType: string | null
  readonly body: Uint8Array
}

/** Bytes streamed from a node (a file or a backup): never buffered whole. */
export interface Download {
  readonly contentLength: number | null
  readonly filename: string | null
  readonly contentType: string | null
  /**
   * The bytes, for one reader, as they arrive. An async iterable rather than an Effect Stream: a relay moves most
   * bytes per CPU second when the source reaches the HTTP edge as it is (a Node stream is one, and the edge pipes
   * it natively). Iteration throws if the node stops part-way; ending it early, or closing the download's scope,
   * releases the upstream.
   */
  readonly body: AsyncIterable<Uint8Array>
}

export type DownloadTarget =
  | { readonly _tag: "File"; readonly path: string }
  | { readonly _tag: "Backup"; readonly uuid: string }

// --- errors -----------------------------------------------------------------------------------------------

/** The panel (or its node) could not be reached, timed out, or kept failing with 5xx after bounded retries. */
export class GamePanelUnavailable extends Schema.TaggedError<GamePanelUnavailable>()("GamePanelUnavailable", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** The panel's rate limit is exhausted: retry after `retryAfterSeconds`. */
export class GamePanelThrottled extends Schema.TaggedError<GamePanelThrottled>()("GamePanelThrottled", {
  operation: Schema.String,
  retryAfterSeconds: Schema.Int
}) {
  override get message() {
    return `${this.operation}: throttled for ${this.retryAfterSeconds} s`
  }
}

/** 422: one entry per failed rule per field, as the panel reports them (`environment.SERVER_JARFILE`, `required`). */
export class PanelValidationFailed extends Schema.TaggedError<PanelValidationFailed>()("PanelValidationFailed", {
  operation: Schema.String,
  fields: Schema.Array(Schema.Struct({ field: Schema.String, rule: Schema.String, detail: Schema.String }))
}) {
  override get message() {
    return `${this.operation}: ${this.fields.map((f) => `${f.field} (${f.rule})`).join(", ")}`
  }
}

/** 409: the server's state forbids it (suspended, installing, restoring a backup, node in maintenance). */
export class ServerStateConflict extends Schema.TaggedError<ServerStateConflict>()("ServerStateConflict", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** 404 from the panel: the server, user, node, file or backup does not exist. */
export class PanelResourceNotFound extends Schema.TaggedError<PanelResourceNotFound>()("PanelResourceNotFound", {
  operation: Schema.String
}) {}

/** The server already holds as many backups as its plan allows: one must be deleted first. */
export class BackupLimitReached extends Schema.TaggedError<BackupLimitReached>()("BackupLimitReached", {
  operation: Schema.String
}) {}

/** The backup is locked: it cannot be deleted until it is unlocked. */
export class BackupLocked extends Schema.TaggedError<BackupLocked>()("BackupLocked", { operation: Schema.String }) {}

/** The file is too large to be opened as text (it can still be downloaded). */
export class FileTooLarge extends Schema.TaggedError<FileTooLarge>()("FileTooLarge", { operation: Schema.String }) {}

/** A file or folder with that name is already there. */
export class FileAlreadyExists extends Schema.TaggedError<FileAlreadyExists>()("FileAlreadyExists", {
  operation: Schema.String
}) {}

/**
 * Any other refusal of a request (a 4xx the panel gives no more meaning to). `detail` is for logs only: it may hold
 * the upstream's own words.
 */
export class PanelRefused extends Schema.TaggedError<PanelRefused>()("PanelRefused", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** What a refused request of a customer's means, in our words. */
export type PanelRefusal = BackupLimitReached | BackupLocked | FileTooLarge | FileAlreadyExists | PanelRefused

/**
 * The panel server with this id does not carry our external id for the expected order (it was replaced or re-marked
 * outside our control): nothing is done to it.
 */
export class PanelServerNotOurs extends Schema.TaggedError<PanelServerNotOurs>()("PanelServerNotOurs", {
  panel: Schema.String,
  id: Schema.Int,
  expected: Schema.String,
  found: Schema.NullOr(Schema.String)
}) {
  override get message() {
    return `server ${this.id} on panel ${this.panel} is not ours: its external id is ${this.found ?? "empty"}, not ${this.expected}`
  }
}

/** No such panel in the catalog (or its keys are missing). */
export class PanelUnknown extends Schema.TaggedError<PanelUnknown>()("PanelUnknown", { panel: Schema.String }) {}

export class ConsoleEnded extends Schema.TaggedError<ConsoleEnded>()("ConsoleEnded", { reason: Schema.String }) {}

/** Failures every call can have. */
export type GamePanelError = GamePanelUnavailable | GamePanelThrottled | PanelUnknown

/** Failures of the customer-facing calls, which the relay maps onto its own envelope. */
export type ClientCallError =
  | GamePanelError
  | PanelValidationFailed
  | ServerStateConflict
  | PanelResourceNotFound
  | PanelRefusal

export class GamePanel extends Context.Service<GamePanel, {
  // --- panel accounts, capacity, and our servers' life ---
  /** The panel account of our user (exact lookup), if they have one. */
  userFor(panel: string, userId: string): Effect.Effect<PanelUser | null, GamePanelError>
  /** Once per user: a creation for a user who already has their panel account answers that account. */
  createUser(panel: string, user: {
    readonly userId: string
    readonly email: string
    readonly username: string
    readonly firstName: string
    readonly lastName: string
  }): Effect.Effect<PanelUser, GamePanelError | PanelValidationFailed>
  readonly nodes: (panel: string) => Effect.Effect<ReadonlyArray<PanelNode>, GamePanelError>
  /** The node's allocations that no server holds. */
  freeAllocations(panel: string, node: number): Effect.Effect<ReadonlyArray<PanelAllocation>, GamePanelError>
  /** The egg with its variables (nest found by the adapter). */
  egg(panel: string, eggId: number): Effect.Effect<Egg, GamePanelError | PanelResourceNotFound>
  /** Once per order: a creation for an order that already has its server answers that server. */
  createServer(panel: string, server: NewServer): Effect.Effect<PanelServer, GamePanelError | PanelValidationFailed | PanelRefused>
  server(panel: string, id: number): Effect.Effect<PanelServer, GamePanelError | PanelResourceNotFound>
  /** Every server of the panel (for reconciling it with our records). */
  servers(panel: string): Effect.Effect<ReadonlyArray<PanelServer>, GamePanelError>
  /** The server made for this order (exact lookup, never a partial filter), if any. */
  serverForOrder(panel: string, orderId: string): Effect.Effect<PanelServer | null, GamePanelError>
  /** Idempotent: suspending a suspended server succeeds. */
  suspend(panel: string, id: number): Effect.Effect<void, GamePanelError | PanelResourceNotFound | ServerStateConflict>
  unsuspend(panel: string, id: number): Effect.Effect<void, GamePanelError | PanelResourceNotFound | ServerStateConflict>
  /**
   * A server that no longer exists is success. Refused (PanelServerNotOurs, nothing done) unless the server was made
   * for `orderId`: it is read first, so a server id that now names something else is never deleted.
   */
  deleteOurServer(panel: string, id: number, orderId: string): Effect.Effect<void, GamePanelError | PanelServerNotOurs>

  // --- what a customer does on their server (`server` is its 36-character uuid) ---
  power(panel: string, server: string, signal: PowerSignal): Effect.Effect<
    void,
    GamePanelError | PanelValidationFailed | ServerStateConflict | PanelResourceNotFound | PanelRefused
  >
  /** The live console (closed with the scope). */
  openConsole(panel: string, server: string): Effect.Effect<GameConsole, ClientCallError | ConsoleEnded, Scope.Scope>
  /** A customer's file or backup operation, answered as the panel answered it when it succeeded (2xx). */
  relayFileCall(panel: string, server: string, call: FileCall): Effect.Effect<FileCallResponse, ClientCallError>
  /** Streams a file or a backup from the node through a fresh single-use signed URL (closed with the scope). */
  download(panel: string, server: string, target: DownloadTarget): Effect.Effect<Download, ClientCallError, Scope.Scope>
  /**
   * Streams a `multipart/form-data` body (parts named `files`) to the node through a fresh signed upload URL,
   * into `directory`. `contentType` carries the boundary.
   */
  upload(panel: string, server: string, upload: {
    readonly directory: string
    readonly contentType: string
    readonly contentLength: number | null
    readonly body: Stream.Stream<Uint8Array, UploadAborted>
  }): Effect.Effect<void, ClientCallError | UploadAborted>
}>()("zh/ports/GamePanel") {}

/** The customer's upload stopped (too large, or the connection dropped): nothing was written. */
export class UploadAborted extends Schema.TaggedError<UploadAborted>()("UploadAborted", { reason: Schema.String }) {}

/** Where a panel of the catalog is and its two keys (opened from the sealed secrets), as the adapter needs them. */
export interface PanelConnection {
  readonly name: string
  /** `https://panel.example` (no path): also the `Origin` Wings expects on its console socket. */
  readonly url: string
  /** `ptla_…`: Application API. */
  readonly applicationKey: Redacted.Redacted<string>
  /** `ptlc_…` of a root-admin panel account: Client API. */
  readonly clientKey: Redacted.Redacted<string>
}

export class GamePanels extends Context.Service<GamePanels, {
  get(name: string): Effect.Effect<PanelConnection, PanelUnknown>
}>()("zh/ports/GamePanels") {}
