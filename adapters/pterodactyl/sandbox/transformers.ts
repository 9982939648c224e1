// The panel's Fractal transformers (reference/pterodactyl.md §2.3, §2.8–2.11, §3.5, §4): what each object's
// `attributes` look like on the Application and Client APIs.
import { type Entry, sizeOf } from "./FileTree.ts"
import type { Sim } from "./Sim.ts"
import type { Allocation, Backup, Egg, EggVariable, PanelNode, Server, User } from "./World.ts"

const installed = (s: Server) => (s.status === "installing" || s.status === "install_failed" ? 0 : 1)

export const appServer = (s: Server) => ({
  id: s.id,
  external_id: s.external_id,
  uuid: s.uuid,
  identifier: s.identifier,
  name: s.name,
  description: s.description,
  status: s.status,
  suspended: s.status === "suspended",
  limits: s.limits,
  feature_limits: s.feature_limits,
  user: s.user,
  node: s.node,
  allocation: s.allocation,
  nest: s.nest,
  egg: s.egg,
  container: {
    startup_command: s.startup,
    image: s.image,
    installed: installed(s),
    environment: {
      ...s.environment,
      STARTUP: s.startup,
      P_SERVER_LOCATION: "sandbox",
      P_SERVER_UUID: s.uuid,
      P_SERVER_ALLOCATION_LIMIT: s.feature_limits.allocations
    }
  },
  updated_at: s.updated_at,
  created_at: s.created_at
})

export const appUser = (u: User) => ({
  id: u.id,
  external_id: u.external_id,
  uuid: u.uuid,
  username: u.username,
  email: u.email,
  first_name: u.first_name,
  last_name: u.last_name,
  language: u.language,
  root_admin: u.root_admin,
  "2fa": false,
  created_at: u.created_at,
  updated_at: u.created_at
})

export const appNode = (sim: Sim, n: PanelNode) => {
  const port = Number(new URL(sim.nodeUrl).port)
  return {
    id: n.id,
    uuid: n.uuid,
    public: n.public,
    name: n.name,
    description: null,
    location_id: n.location_id,
    fqdn: new URL(sim.nodeUrl).hostname,
    scheme: "http",
    behind_proxy: false,
    maintenance_mode: n.maintenance_mode,
    memory: n.memory,
    memory_overallocate: n.memory_overallocate,
    disk: n.disk,
    disk_overallocate: n.disk_overallocate,
    upload_size: n.upload_size,
    daemon_listen: port,
    daemon_sftp: 2022,
    daemon_base: "/var/lib/pterodactyl/volumes",
    created_at: n.created_at,
    updated_at: n.created_at,
    allocated_resources: sim.world.allocatedResources(n.id)
  }
}

export const appAllocation = (a: Allocation) => ({
  id: a.id,
  ip: a.ip,
  alias: a.alias,
  port: a.port,
  notes: null,
  assigned: a.serverId !== null
})

export const eggVariable = (eggId: number, v: EggVariable) => ({
  id: v.id,
  egg_id: eggId,
  name: v.name,
  description: v.description,
  env_variable: v.env_variable,
  default_value: v.default_value,
  user_viewable: v.user_viewable,
  user_editable: v.user_editable,
  rules: v.rules,
  created_at: "2024-01-01T00:00:00+00:00",
  updated_at: "2024-01-01T00:00:00+00:00"
})

export const appEgg = (e: Egg, includeVariables: boolean) => ({
  id: e.id,
  uuid: e.uuid,
  name: e.name,
  nest: e.nest,
  author: "support@pterodactyl.io",
  description: `${e.name} (sandbox egg)`,
  docker_image: Array.isArray(e.docker_images) ? e.docker_images[0] : Object.values(e.docker_images)[0],
  docker_images: e.docker_images,
  config: { files: {}, startup: { done: ")! For help, type " }, stop: "stop", logs: {}, file_denylist: [], extends: null },
  startup: e.startup,
  script: { privileged: true, install: "#!/bin/bash\necho sandbox", entry: "bash", container: "ghcr.io/pterodactyl/installers:debian", extends: null },
  created_at: "2024-01-01T00:00:00+00:00",
  updated_at: "2024-01-01T00:00:00+00:00",
  ...(includeVariables
    ? { relationships: { variables: { object: "list", data: e.variables.map((v) => ({ object: "egg_variable", attributes: eggVariable(e.id, v) })) } } }
    : {})
})

export const clientServer = (sim: Sim, s: Server, owner: boolean) => {
  const node = sim.world.nodes.get(s.node)
  const egg = sim.world.eggs.get(s.egg)
  const allocations = [s.allocation, ...s.additional].flatMap((id) => {
    const a = sim.world.allocations.get(id)
    return a === undefined ? [] : [{ object: "allocation", attributes: { id: a.id, ip: a.ip, ip_alias: a.alias, port: a.port, notes: null, is_default: a.id === s.allocation } }]
  })
  return {
    server_owner: owner,
    identifier: s.identifier,
    internal_id: s.id,
    uuid: s.uuid,
    name: s.name,
    node: node?.name ?? "",
    is_node_under_maintenance: node?.maintenance_mode ?? false,
    sftp_details: { ip: new URL(sim.nodeUrl).hostname, port: 2022 },
    description: s.description,
    limits: s.limits,
    invocation: s.startup.replace(/\{\{(\w+)\}\}/g, (_, k: string) => (k === "SERVER_MEMORY" ? String(s.limits.memory) : s.environment[k] ?? "")),
    docker_image: s.image,
    egg_features: ["eula", "java_version", "pid_limit"],
    feature_limits: s.feature_limits,
    status: s.status,
    is_suspended: s.status === "suspended",
    is_installing: s.status === "installing",
    is_transferring: false,
    relationships: {
      allocations: { object: "list", data: allocations },
      variables: {
        object: "list",
        data: (egg?.variables ?? []).filter((v) => v.user_viewable).map((v) => ({
          object: "egg_variable",
          attributes: {
            name: v.name,
            description: v.description,
            env_variable: v.env_variable,
            default_value: v.default_value,
            server_value: s.environment[v.env_variable] ?? null,
            is_editable: v.user_editable,
            rules: v.rules
          }
        }))
      }
    }
  }
}

export const clientBackup = (b: Backup) => ({
  uuid: b.uuid,
  is_successful: b.is_successful,
  is_locked: b.is_locked,
  name: b.name,
  ignored_files: b.ignored_files,
  checksum: b.checksum,
  bytes: b.bytes,
  created_at: b.created_at,
  completed_at: b.completed_at
})

const modeString = (e: Entry) => {
  const bits = e.mode.toString(8).padStart(3, "0").slice(-3)
  const rwx = [...bits].map((d) => {
    const n = Number(d)
    return `${n & 4 ? "r" : "-"}${n & 2 ? "w" : "-"}${n & 1 ? "x" : "-"}`
  }).join("")
  return `${e.kind === "dir" ? "d" : "-"}${rwx}`
}

export const fileObject = (name: string, e: Entry) => ({
  name,
  mode: modeString(e),
  mode_bits: e.mode.toString(8).padStart(3, "0").slice(-3),
  size: e.kind === "file" ? sizeOf(e.data) : 4096,
  is_file: e.kind === "file",
  is_symlink: false,
  mimetype: e.kind === "dir"
    ? "inode/directory"
    : /\.(gz|tgz)$/.test(name)
    ? "application/gzip"
    : /\.(txt|properties|log|yml|json|sh)$/.test(name)
    ? "text/plain"
    : "application/octet-stream",
  created_at: new Date(e.createdAt).toISOString(),
  modified_at: new Date(e.modifiedAt).toISOString()
})
