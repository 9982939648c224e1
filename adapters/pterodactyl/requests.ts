// The bodies and paths of the Application-API calls, as pure builders with the exact upstream field names
// (reference/pterodactyl.md §2.1, §2.2, §2.8, §2.11).
import type { FileOperation, NewServer } from "../../ports/GamePanel.ts"
import type { CallSpec } from "./calls.ts"

const id = (value: string | number) => encodeURIComponent(String(value))

export const requests = {
  /** Exact lookup; `filter[external_id]` would be a partial LIKE match (§2.8). */
  userByExternalId: (externalId: string): CallSpec => ({ method: "GET", path: `/users/external/${id(externalId)}` }),

  /** The caller's e-mail is sent as given (a synthetic one keeps the panel's mails away from customers, §2.8). */
  createUser: (user: {
    readonly userId: string
    readonly email: string
    readonly username: string
    readonly firstName: string
    readonly lastName: string
  }): CallSpec => ({
    method: "POST",
    path: "/users",
    json: {
      email: user.email,
      username: user.username,
      first_name: user.firstName,
      last_name: user.lastName,
      external_id: user.userId
    }
  }),

  nodes: (page: number, perPage: number): CallSpec => ({ method: "GET", path: `/nodes?page=${page}&per_page=${perPage}` }),

  /** `filter[server_id]` with a non-numeric value lists unassigned allocations only (≥ 1.8.0, §2.11). */
  freeAllocations: (node: number, page: number, perPage: number): CallSpec => ({
    method: "GET",
    path: `/nodes/${id(node)}/allocations?${new URLSearchParams({
      "filter[server_id]": "false",
      page: String(page),
      per_page: String(perPage)
    }).toString()}`
  }),

  nests: (page: number, perPage: number): CallSpec => ({ method: "GET", path: `/nests?page=${page}&per_page=${perPage}` }),

  egg: (nest: number, egg: number): CallSpec => ({
    method: "GET",
    path: `/nests/${id(nest)}/eggs/${id(egg)}?include=variables`
  }),

  /**
   * §2.2: `oom_disabled` at the top level (not under `limits`), `threads` null (no pinning), `feature_limits` always
   * present, one explicit default allocation (placement is ours, never the panel's `deploy`).
   */
  createServer: (server: NewServer): CallSpec => ({
    method: "POST",
    path: "/servers",
    json: {
      name: server.name,
      user: server.user,
      egg: server.egg,
      docker_image: server.dockerImage,
      startup: server.startup,
      environment: server.environment,
      limits: {
        memory: server.limits.memoryMiB,
        swap: server.limits.swapMiB,
        disk: server.limits.diskMiB,
        io: server.limits.io,
        cpu: server.limits.cpuPercent,
        threads: null
      },
      oom_disabled: server.oomDisabled,
      feature_limits: {
        databases: server.featureLimits.databases,
        backups: server.featureLimits.backups,
        allocations: server.featureLimits.allocations
      },
      allocation: { default: server.allocation },
      external_id: server.orderId,
      start_on_completion: server.startOnCompletion,
      description: ""
    }
  }),

  server: (serverId: number): CallSpec => ({ method: "GET", path: `/servers/${id(serverId)}` }),
  servers: (page: number, perPage: number): CallSpec => ({ method: "GET", path: `/servers?page=${page}&per_page=${perPage}` }),

  serverByExternalId: (externalId: string): CallSpec => ({ method: "GET", path: `/servers/external/${id(externalId)}` }),

  suspension: (serverId: number, action: "suspend" | "unsuspend"): CallSpec => ({
    method: "POST",
    path: `/servers/${id(serverId)}/${action}`
  }),

  /** Not `/force`: a node that cannot delete the files must stop the deletion (§2.6). */
  deleteServer: (serverId: number): CallSpec => ({ method: "DELETE", path: `/servers/${id(serverId)}` })
} as const

/** Client-API paths below `/api/client` (§3, §4). */
export const clientPaths = {
  server: (uuid: string) => `/servers/${id(uuid)}`,
  power: (uuid: string) => `/servers/${id(uuid)}/power`,
  websocket: (uuid: string) => `/servers/${id(uuid)}/websocket`
} as const

/** The Client-API route (§4) below the server for each file or backup operation; `{backup}` is the backup's uuid. */
const FILE_CALLS: { readonly [K in FileOperation["_tag"]]: readonly [CallSpec["method"], string] } = {
  ListFiles: ["GET", "files/list"],
  ReadFile: ["GET", "files/contents"],
  WriteFile: ["POST", "files/write"],
  RenameFiles: ["PUT", "files/rename"],
  CopyFile: ["POST", "files/copy"],
  DeleteFiles: ["POST", "files/delete"],
  CreateFolder: ["POST", "files/create-folder"],
  CompressFiles: ["POST", "files/compress"],
  DecompressFile: ["POST", "files/decompress"],
  ChangeFileModes: ["POST", "files/chmod"],
  ListBackups: ["GET", "backups"],
  CreateBackup: ["POST", "backups"],
  ReadBackup: ["GET", "backups/{backup}"],
  DeleteBackup: ["DELETE", "backups/{backup}"],
  ToggleBackupLock: ["POST", "backups/{backup}/lock"],
  RestoreBackup: ["POST", "backups/{backup}/restore"]
}

/** The Client-API call that performs a file or backup operation on a server. */
export const fileCall = (uuid: string, operation: FileOperation): { readonly method: CallSpec["method"]; readonly path: string } => {
  const [method, route] = FILE_CALLS[operation._tag]
  const below = "backup" in operation ? route.replace("{backup}", () => id(operation.backup)) : route
  return { method, path: `${clientPaths.server(uuid)}/${below}` }
}
