// The shapes of the answers the wrapper reads, decoded leniently: PVE's JSON is written by Perl, so numbers may come
// as strings and booleans as 0/1/"1" (reference/proxmox.md §2.1). Only the fields the port needs are declared.
import { Effect, Schema, SchemaGetter } from "effect"
import type { TaskFailed } from "../../ports/Virtualization.ts"
import { CallFailed } from "./failures.ts"

/** A number, or a string holding one. */
export const PveNumber = Schema.Union([Schema.Finite, Schema.NumberFromString])

/** true/false, 0/1 or "0"/"1". */
export const PveBoolean = Schema.Union([
  Schema.Boolean,
  Schema.Literals([0, 1, "0", "1"]).pipe(
    Schema.decodeTo(Schema.Boolean, {
      decode: SchemaGetter.transform((v: 0 | 1 | "0" | "1") => v === 1 || v === "1"),
      encode: SchemaGetter.transform((b: boolean): 0 | 1 | "0" | "1" => (b ? 1 : 0))
    })
  )
])

const optionalNumber = Schema.optional(Schema.NullOr(PveNumber))
const optionalString = Schema.optional(Schema.NullOr(Schema.String))
const optionalBoolean = Schema.optional(Schema.NullOr(PveBoolean))

/** Every `/api2/json` answer; error bodies carry `message` (PVE ≥ 8.3) and `errors` per parameter (§2.1, §2.2). */
export const Envelope = Schema.Struct({
  data: Schema.optional(Schema.Unknown),
  total: optionalNumber,
  message: optionalString,
  errors: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)))
})
export type Envelope = typeof Envelope.Type

export const decodeEnvelope = Schema.decodeUnknownEffect(Schema.fromJsonString(Envelope))

export const Ticket = Schema.Struct({
  username: Schema.String,
  ticket: Schema.String,
  CSRFPreventionToken: Schema.String
})

/** A UPID, or null when a call (e.g. resize before qemu-server 8, config with background_delay) finished at once. */
export const TaskId = Schema.NullOr(Schema.String)

/** One `/cluster/resources` entry; which fields are present depends on `type` and on the caller's rights (§3.1). */
export const Resource = Schema.Struct({
  type: Schema.String,
  node: optionalString,
  status: optionalString,
  vmid: optionalNumber,
  name: optionalString,
  template: optionalBoolean,
  lock: optionalString,
  tags: optionalString,
  maxcpu: optionalNumber,
  maxmem: optionalNumber,
  maxdisk: optionalNumber,
  disk: optionalNumber,
  storage: optionalString
})
export type Resource = typeof Resource.Type

export const Resources = Schema.Array(Resource)

/** The QEMU guests of a `/cluster/resources` answer (`type=vm` lists containers too, §3.1). */
export const qemuOf = (resources: ReadonlyArray<Resource>) =>
  resources.filter((r) => r.type === "qemu" && r.vmid !== undefined && r.vmid !== null)

/** A lock as the port says it: PVE writes none as absent or empty. */
export const lockOf = (lock: string | null | undefined) => (lock === undefined || lock === null || lock === "" ? null : lock)

/** How PVE says a VM's config is not on that node (deleted, or on another node: §5.6). */
export const missingConfig = /configuration file .* does not exist/i

/** Matches a failure's text, synchronous or from the task's exit status. */
export const says = (pattern: RegExp) => (e: CallFailed | TaskFailed) =>
  pattern.test(e._tag === "CallFailed" ? e.detail : e.exitStatus)

export const VmCurrentStatus = Schema.Struct({
  status: Schema.String,
  lock: optionalString,
  agent: optionalBoolean,
  name: optionalString
})

/** The parts of a VM's stored config that say whose it is (§3.5). */
export const VmConfigStamp = Schema.Struct({
  tags: optionalString,
  description: optionalString,
  lock: optionalString
})

export const SnapshotEntry = Schema.Struct({
  name: Schema.String,
  description: optionalString,
  snaptime: optionalNumber
})

export const Snapshots = Schema.Array(SnapshotEntry)

export const TaskStatus = Schema.Struct({
  status: Schema.String,
  exitstatus: optionalString
})

export const TaskLog = Schema.Array(Schema.Struct({ n: optionalNumber, t: Schema.String }))

export const ExecStarted = Schema.Struct({ pid: PveNumber })

export const ExecStatus = Schema.Struct({
  exited: PveBoolean,
  exitcode: optionalNumber,
  signal: optionalNumber,
  "out-data": optionalString,
  "err-data": optionalString
})

export const TermProxy = Schema.Struct({
  port: PveNumber,
  ticket: Schema.String,
  user: Schema.String,
  upid: optionalString
})

/** The envelope's `data` as `schema`; an answer of another shape is a failure of the call, not a defect. */
export const dataAs = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, operation: string) =>
(envelope: Envelope): Effect.Effect<S["Type"], CallFailed> =>
  Schema.decodeUnknownEffect(schema)(envelope.data).pipe(
    Effect.mapError(() =>
      new CallFailed({ operation, status: 200, detail: "unexpected answer shape", outcomeUnknown: false })
    )
  )
