// Typed reads of the sandbox panel's and Wings' JSON answers: each shape describes only the parts the tests read, and
// a read throws (failing the test) when the answer does not have them. A read returns the answer itself, narrowed, so
// whole-object assertions (toEqual, toMatchObject) still see every key the sandbox sent.
import { Schema } from "effect"

/** `json` narrowed to what `schema` describes; throws the decoding error naming the mismatch when it does not fit. */
export const read = <S extends Schema.ConstraintDecoder<unknown>>(schema: S) => {
  const fits = Schema.is(schema)
  const decode = Schema.decodeUnknownSync(schema)
  return (json: unknown): S["Type"] => (fits(json) ? json : decode(json))
}

/** A JSON text (a console frame, a frame's payload, a token's claims, a file) read as `schema` describes it. */
export const readJson = <S extends Schema.ConstraintDecoder<unknown>>(schema: S) => {
  const fit = read(schema)
  return (text: string): S["Type"] => fit(JSON.parse(text))
}

// The panel's envelopes (reference/pterodactyl.md §1.3).

const ErrorMeta = Schema.Struct({ source_field: Schema.String, rule: Schema.String })
const ErrorItem = Schema.Struct({
  code: Schema.String,
  status: Schema.String,
  detail: Schema.String,
  meta: Schema.optionalKey(ErrorMeta)
})

const ErrorEnvelope = Schema.Struct({ errors: Schema.NonEmptyArray(ErrorItem) })
const ValidationEnvelope = Schema.Struct({
  errors: Schema.NonEmptyArray(Schema.Struct({ ...ErrorItem.fields, meta: ErrorMeta }))
})

/** The errors of `{ errors: [{ code, status, detail, meta? }, ...] }`, at least one. */
export const errorsOf = (json: unknown) => read(ErrorEnvelope)(json).errors

/** The errors of a 422, each with its `meta: { source_field, rule }`. */
export const validationErrorsOf = (json: unknown) => read(ValidationEnvelope)(json).errors

const Item = <A extends Schema.ConstraintDecoder<unknown>>(attributes: A) =>
  Schema.Struct({ object: Schema.String, attributes })

/** `{ object, attributes }`: one resource. */
export const itemOf = <A extends Schema.ConstraintDecoder<unknown>>(attributes: A) => read(Item(attributes))

/** `{ object: "list", data: [{ object, attributes }, ...] }`. */
export const listOf = <A extends Schema.ConstraintDecoder<unknown>>(attributes: A) =>
  read(Schema.Struct({ object: Schema.String, data: Schema.Array(Item(attributes)) }))

export const Pagination = Schema.Struct({
  total: Schema.Number,
  count: Schema.Number,
  per_page: Schema.Number,
  current_page: Schema.Number,
  total_pages: Schema.Number,
  links: Schema.Struct({ next: Schema.optionalKey(Schema.String), previous: Schema.optionalKey(Schema.String) })
})

/** A list with its `meta: { pagination }`. */
export const pageOf = <A extends Schema.ConstraintDecoder<unknown>>(attributes: A) =>
  read(Schema.Struct({
    object: Schema.String,
    data: Schema.Array(Item(attributes)),
    meta: Schema.Struct({ pagination: Pagination })
  }))

// Attributes, as far as the tests read them.

export const Allocation = Schema.Struct({ id: Schema.Number, port: Schema.Number, assigned: Schema.Boolean })

export const Node = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  daemon_listen: Schema.Number,
  allocated_resources: Schema.Struct({ memory: Schema.Number })
})

export const User = Schema.Struct({ id: Schema.Number, username: Schema.String, email: Schema.String })

/** A created user: `meta.resource` is the user's absolute URL. */
export const createdUserOf = read(Schema.Struct({ attributes: User, meta: Schema.Struct({ resource: Schema.String }) }))

/** A server on the Application API. */
export const AppServer = Schema.Struct({
  id: Schema.Number,
  uuid: Schema.String,
  identifier: Schema.String,
  external_id: Schema.NullOr(Schema.String),
  status: Schema.NullOr(Schema.String),
  suspended: Schema.Boolean,
  node: Schema.Number,
  allocation: Schema.Number,
  limits: Schema.Struct({ oom_disabled: Schema.Boolean }),
  container: Schema.Struct({ installed: Schema.Number })
})

/** A server on the Client API. */
export const ClientServer = Schema.Struct({ is_installing: Schema.Boolean })

/** An egg: `docker_images` is an object or a list depending on the egg. */
export const Egg = Schema.Struct({ docker_images: Schema.Unknown })

const EggVariable = Schema.Struct({ env_variable: Schema.String, default_value: Schema.String, user_editable: Schema.Boolean })

/** An egg read with `?include=variables`. */
export const EggWithVariables = Schema.Struct({
  ...Egg.fields,
  relationships: Schema.Struct({ variables: Schema.Struct({ data: Schema.Array(Item(EggVariable)) }) })
})

export const Backup = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  is_successful: Schema.Boolean,
  is_locked: Schema.Boolean,
  checksum: Schema.NullOr(Schema.String),
  bytes: Schema.Number,
  completed_at: Schema.NullOr(Schema.String)
})
export const CompletedBackup = Schema.Struct({ ...Backup.fields, checksum: Schema.String, completed_at: Schema.String })

/** The backups list: its pagination and the count of backups against the server's limit. */
export const backupPageOf = read(Schema.Struct({ meta: Schema.Struct({ backup_count: Schema.Number, pagination: Pagination }) }))

export const FileObject = Schema.Struct({ name: Schema.String, size: Schema.Number, mode_bits: Schema.String })

/** A signed URL to Wings (`object: "signed_url"`). */
export const SignedUrl = Schema.Struct({ url: Schema.String })

/** The Client API's `resources` (`object: "stats"`). */
export const Resources = Schema.Struct({ current_state: Schema.String })

/** The console token: `{ data: { token, socket } }`. */
export const websocketOf = read(Schema.Struct({ data: Schema.Struct({ token: Schema.String, socket: Schema.String }) }))

// Wings' console (reference/pterodactyl.md §3).

/** A console frame. */
export const Frame = Schema.Struct({ event: Schema.String, args: Schema.optionalKey(Schema.Array(Schema.String)) })
export type Frame = typeof Frame.Type

/** The claims of a console token. */
export const Claims = Schema.Struct({ aud: Schema.Array(Schema.String) })

/** The payload of a `stats` frame. */
export const Stats = Schema.Struct({ state: Schema.String })

/** The payload of a `backup completed:<uuid>` frame. */
export const BackupCompleted = Schema.Struct({ checksum: Schema.String, file_size: Schema.Number })
