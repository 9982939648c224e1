// The shapes of the panel's answers the adapter reads (reference/pterodactyl.md §1.2, §2.3, §2.8–§2.11, §3.1, §4.1),
// decoded at the edge and turned into the port's values. Only the fields the port needs are declared.
import { Schema } from "effect"
import type { Egg, PanelAllocation, PanelNode, PanelServer, PanelUser, ServerState } from "../../ports/GamePanel.ts"
import { decodeEggRules } from "./eggRules.ts"

const item = <S extends Schema.Top>(attributes: S) => Schema.Struct({ attributes })

const list = <S extends Schema.Top>(attributes: S) =>
  Schema.Struct({
    data: Schema.Array(item(attributes)),
    meta: Schema.optional(Schema.Struct({
      pagination: Schema.optional(Schema.Struct({
        current_page: Schema.Finite,
        total_pages: Schema.Finite
      }))
    }))
  })

export type Page<A> = { readonly items: ReadonlyArray<A>; readonly currentPage: number; readonly totalPages: number }

/** A list answer as a page; a list without pagination meta is its only page. */
export const pageOf = <A>(answer: {
  readonly data: ReadonlyArray<{ readonly attributes: A }>
  readonly meta?: { readonly pagination?: { readonly current_page: number; readonly total_pages: number } | undefined } | undefined
}): Page<A> => ({
  items: answer.data.map((d) => d.attributes),
  currentPage: answer.meta?.pagination?.current_page ?? 1,
  totalPages: answer.meta?.pagination?.total_pages ?? 1
})

const nullableString = Schema.NullOr(Schema.String)

// --- users (§2.8) -----------------------------------------------------------------------------------------------

const UserAttributes = Schema.Struct({
  id: Schema.Int,
  external_id: Schema.optional(nullableString),
  uuid: Schema.String,
  username: Schema.String,
  email: Schema.String
})
export const UserItem = item(UserAttributes)

export const toUser = (u: typeof UserAttributes.Type): PanelUser => ({
  id: u.id,
  externalId: u.external_id ?? null,
  uuid: u.uuid,
  username: u.username,
  email: u.email
})

// --- servers (§2.3, §2.4) -------------------------------------------------------------------------------------------

const Status = Schema.NullOr(
  Schema.Literals(["installing", "install_failed", "reinstall_failed", "suspended", "restoring_backup"])
)

const ServerAttributes = Schema.Struct({
  id: Schema.Int,
  external_id: Schema.optional(nullableString),
  uuid: Schema.String,
  identifier: Schema.String,
  name: Schema.String,
  status: Schema.optional(Status),
  suspended: Schema.Boolean,
  node: Schema.Int,
  allocation: Schema.Int,
  user: Schema.Int
})
export const ServerItem = item(ServerAttributes)
export const ServerList = list(ServerAttributes)

/** `status` null is an installed server in its normal state (§2.4). */
export const toServer = (s: typeof ServerAttributes.Type): PanelServer => {
  const state: ServerState = s.status === null || s.status === undefined ? "installed" : s.status
  return {
    id: s.id,
    externalId: s.external_id ?? null,
    uuid: s.uuid,
    identifier: s.identifier,
    name: s.name,
    state,
    suspended: s.suspended,
    node: s.node,
    allocation: s.allocation,
    user: s.user
  }
}

// --- nodes and allocations (§2.10, §2.11) ---------------------------------------------------------------------------

const NodeAttributes = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  public: Schema.Boolean,
  maintenance_mode: Schema.Boolean,
  memory: Schema.Finite,
  memory_overallocate: Schema.Finite,
  disk: Schema.Finite,
  disk_overallocate: Schema.Finite,
  allocated_resources: Schema.Struct({ memory: Schema.Finite, disk: Schema.Finite })
})
export const NodeList = list(NodeAttributes)

export const toNode = (n: typeof NodeAttributes.Type): PanelNode => ({
  id: n.id,
  name: n.name,
  public: n.public,
  maintenance: n.maintenance_mode,
  memoryMiB: n.memory,
  memoryOverallocate: n.memory_overallocate,
  diskMiB: n.disk,
  diskOverallocate: n.disk_overallocate,
  allocatedMemoryMiB: n.allocated_resources.memory,
  allocatedDiskMiB: n.allocated_resources.disk
})

const AllocationAttributes = Schema.Struct({
  id: Schema.Int,
  ip: Schema.String,
  alias: Schema.optional(nullableString),
  port: Schema.Int,
  assigned: Schema.Boolean
})
export const AllocationList = list(AllocationAttributes)

export const toAllocation = (node: number) => (a: typeof AllocationAttributes.Type): PanelAllocation => ({
  id: a.id,
  node,
  ip: a.ip,
  alias: a.alias ?? null,
  port: a.port,
  assigned: a.assigned
})

// --- nests and eggs (§2.9) --------------------------------------------------------------------------------------

export const NestList = list(Schema.Struct({ id: Schema.Int }))

const VariableAttributes = Schema.Struct({
  name: Schema.String,
  env_variable: Schema.String,
  default_value: Schema.optional(nullableString),
  user_viewable: Schema.Boolean,
  user_editable: Schema.Boolean,
  rules: Schema.optional(nullableString)
})

/** 1.2–1.7 list the images; ≥ 1.8 map a display name to each (§2.9). Both are accepted. */
const DockerImages = Schema.Union([Schema.Record(Schema.String, Schema.String), Schema.Array(Schema.String)])

const EggAttributes = Schema.Struct({
  id: Schema.Int,
  nest: Schema.Int,
  name: Schema.String,
  startup: Schema.String,
  docker_images: Schema.optional(Schema.NullOr(DockerImages)),
  docker_image: Schema.optional(nullableString),
  relationships: Schema.optional(Schema.Struct({
    variables: Schema.optional(Schema.Struct({ data: Schema.Array(item(VariableAttributes)) }))
  }))
})
export const EggItem = item(EggAttributes)

const isImageList = (images: typeof DockerImages.Type): images is ReadonlyArray<string> => Array.isArray(images)

export const dockerImagesOf = (
  images: typeof DockerImages.Type | null | undefined,
  legacy: string | null | undefined
): Readonly<Record<string, string>> => {
  if (images === null || images === undefined) return legacy === null || legacy === undefined ? {} : { [legacy]: legacy }
  if (isImageList(images)) return Object.fromEntries(images.map((image) => [image, image]))
  return { ...images }
}

export const toEgg = (e: typeof EggAttributes.Type): Egg => ({
  id: e.id,
  nest: e.nest,
  name: e.name,
  startup: e.startup,
  dockerImages: dockerImagesOf(e.docker_images, e.docker_image),
  variables: (e.relationships?.variables?.data ?? []).map(({ attributes: v }) => ({
    name: v.name,
    envVariable: v.env_variable,
    defaultValue: v.default_value ?? "",
    userViewable: v.user_viewable,
    userEditable: v.user_editable,
    accepts: decodeEggRules(v.rules ?? "")
  }))
})

// --- Client API (§3.1, §4.1) -------------------------------------------------------------------------------------

/** `{data:{token, socket}}`, no `object` key (§3.1). */
export const WebsocketCredentials = Schema.Struct({
  data: Schema.Struct({ token: Schema.String, socket: Schema.String })
})

/** `{object:"signed_url", attributes:{url}}` (§4.1). */
export const SignedUrl = Schema.Struct({ attributes: Schema.Struct({ url: Schema.String }) })

/** One Wings frame: JSON text `{event, args?}`, every arg a string (§3.3). */
export const WingsFrame = Schema.Struct({
  event: Schema.String,
  args: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))
})
