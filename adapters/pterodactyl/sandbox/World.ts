// The panel's data as one sandbox holds it: users and their API keys, locations, nodes, allocations, nests and eggs,
// servers (with their files, backups and Wings process) — plus the seed of the brief (node 1, ports 25565–25574,
// egg 5 "Paper" in nest 1, egg 6 "Vanilla Bedrock" in nest 2, one root admin).
import { randomBytes, randomUUID } from "node:crypto"
import type { Console } from "./Console.ts"
import type { Entry, FileTree } from "./FileTree.ts"

export interface User {
  readonly id: number
  readonly uuid: string
  readonly username: string
  readonly email: string
  readonly first_name: string
  readonly last_name: string
  readonly external_id: string | null
  readonly language: string
  readonly root_admin: boolean
  readonly created_at: string
}

export interface ApiKey {
  readonly identifier: string
  readonly secret: string
  readonly kind: "application" | "client"
  readonly userId: number
}

export interface PanelNode {
  readonly id: number
  readonly uuid: string
  readonly name: string
  readonly public: boolean
  readonly location_id: number
  readonly memory: number
  readonly memory_overallocate: number
  readonly disk: number
  readonly disk_overallocate: number
  readonly upload_size: number
  maintenance_mode: boolean
  /** The daemon token the panel signs this node's JWTs with. */
  readonly secret: string
  readonly created_at: string
}

export interface Allocation {
  readonly id: number
  readonly node: number
  readonly ip: string
  readonly port: number
  readonly alias: string | null
  serverId: number | null
}

export interface EggVariable {
  readonly id: number
  readonly name: string
  readonly description: string
  readonly env_variable: string
  readonly default_value: string
  readonly user_viewable: boolean
  readonly user_editable: boolean
  readonly rules: string
}

export interface Egg {
  readonly id: number
  readonly uuid: string
  readonly nest: number
  readonly name: string
  readonly startup: string
  readonly docker_images: Readonly<Record<string, string>> | ReadonlyArray<string>
  readonly variables: ReadonlyArray<EggVariable>
}

export interface Limits {
  readonly memory: number
  readonly swap: number
  readonly disk: number
  readonly io: number
  readonly cpu: number
  readonly threads: string | null
  readonly oom_disabled: boolean
}

export interface FeatureLimits {
  readonly databases: number
  readonly allocations: number
  readonly backups: number
}

export interface Backup {
  readonly uuid: string
  readonly name: string
  readonly ignored_files: ReadonlyArray<string>
  is_successful: boolean
  is_locked: boolean
  checksum: string | null
  bytes: number
  readonly created_at: string
  completed_at: string | null
  /** The server's files when the backup was taken (entries are immutable, so sharing is safe). */
  readonly files: ReadonlyMap<string, Entry>
  /** What a download streams: a deterministic rendering of `files`. */
  content: Buffer
}

export type ServerStatus = null | "installing" | "install_failed" | "reinstall_failed" | "suspended" | "restoring_backup"
export type InstallOutcome = "succeed" | "fail" | "hang"

export interface Server {
  readonly id: number
  readonly uuid: string
  readonly identifier: string
  external_id: string | null
  name: string
  description: string
  status: ServerStatus
  readonly user: number
  readonly node: number
  readonly allocation: number
  readonly additional: ReadonlyArray<number>
  readonly nest: number
  readonly egg: number
  readonly limits: Limits
  readonly feature_limits: FeatureLimits
  readonly startup: string
  readonly image: string
  readonly environment: Readonly<Record<string, string | null>>
  readonly created_at: string
  updated_at: string
  /** A running install: when it ends and how. */
  install: { readonly dueAt: number; readonly outcome: InstallOutcome; readonly reinstall: boolean } | null
  /** A running restore: the backup's files and how they land (the state file saves it finished). */
  restoring: { readonly files: ReadonlyMap<string, Entry>; readonly truncate: boolean } | null
  readonly files: FileTree
  readonly backups: Array<Backup>
  /** Creation times of backups (deleted ones too), for the throttle. */
  readonly backupCreations: Array<number>
  readonly console: Console
}

export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00")

const randomChars = (n: number) => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
  return [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join("")
}

export const makeKey = (kind: ApiKey["kind"], userId: number): ApiKey => ({
  identifier: `${kind === "application" ? "ptla_" : "ptlc_"}${randomChars(11)}`,
  secret: randomChars(32),
  kind,
  userId
})

export type IdKind = "user" | "node" | "allocation" | "server"

export const newUuid = () => randomUUID()
export const newSecret = () => randomChars(64)

export class World {
  /** The simulation's clock, in epoch ms. */
  readonly now: () => number
  readonly users = new Map<number, User>()
  readonly keys = new Map<string, ApiKey>()
  readonly nodes = new Map<number, PanelNode>()
  readonly allocations = new Map<number, Allocation>()
  readonly eggs = new Map<number, Egg>()
  readonly nests = new Map<number, { readonly id: number; readonly name: string }>()
  readonly servers = new Map<number, Server>()
  private nextIds: Record<IdKind, number> = { user: 1, node: 1, allocation: 1, server: 1 }

  constructor(now: () => number) {
    this.now = now
  }

  nowIso(): string {
    return iso(this.now())
  }

  nextId(kind: IdKind): number {
    return this.nextIds[kind]++
  }

  /** The ids the next records get (the panel's auto-increments: a deleted record's id is not reused). */
  get counters(): Readonly<Record<IdKind, number>> {
    return { ...this.nextIds }
  }

  /** Resumes the auto-increments, never below an id in use. */
  resumeCounters(next: Readonly<Record<IdKind, number>>): void {
    const above = (ids: Iterable<number>, saved: number) => {
      let next = saved
      for (const id of ids) next = Math.max(next, id + 1)
      return next
    }
    this.nextIds = {
      user: above(this.users.keys(), next.user),
      node: above(this.nodes.keys(), next.node),
      allocation: above(this.allocations.keys(), next.allocation),
      server: above(this.servers.keys(), next.server)
    }
  }

  addUser(user: Omit<User, "id" | "uuid" | "created_at">): User {
    const full: User = { ...user, id: this.nextId("user"), uuid: newUuid(), created_at: this.nowIso() }
    this.users.set(full.id, full)
    return full
  }

  addNode(spec: Partial<Omit<PanelNode, "id" | "uuid" | "secret" | "created_at" | "maintenance_mode">>): PanelNode {
    const id = this.nextId("node")
    const node: PanelNode = {
      id,
      uuid: newUuid(),
      name: spec.name ?? `node-${id}`,
      public: spec.public ?? true,
      location_id: spec.location_id ?? 1,
      memory: spec.memory ?? 16384,
      memory_overallocate: spec.memory_overallocate ?? 0,
      disk: spec.disk ?? 102400,
      disk_overallocate: spec.disk_overallocate ?? 0,
      upload_size: spec.upload_size ?? 100,
      maintenance_mode: false,
      secret: newSecret(),
      created_at: this.nowIso()
    }
    this.nodes.set(id, node)
    return node
  }

  /** New allocations; an ip:port already on the node is skipped (the panel's insert-ignore, §2.11). */
  addAllocations(node: number, ip: string, ports: ReadonlyArray<number>): ReadonlyArray<Allocation> {
    if (!this.nodes.has(node)) throw new Error(`sandbox: no node ${node}`)
    const added: Array<Allocation> = []
    for (const port of ports) {
      if ([...this.allocations.values()].some((a) => a.node === node && a.ip === ip && a.port === port)) continue
      const a: Allocation = { id: this.nextId("allocation"), node, ip, port, alias: null, serverId: null }
      this.allocations.set(a.id, a)
      added.push(a)
    }
    return added
  }

  serverByRef(ref: string): Server | undefined {
    for (const s of this.servers.values()) {
      if ((ref.length === 8 && s.identifier === ref) || (ref.length === 36 && s.uuid === ref)) return s
    }
    return undefined
  }

  serverByUuid(uuid: string): Server | undefined {
    for (const s of this.servers.values()) if (s.uuid === uuid) return s
    return undefined
  }

  allocatedResources(node: number): { readonly memory: number; readonly disk: number } {
    let memory = 0
    let disk = 0
    for (const s of this.servers.values()) {
      if (s.node !== node) continue
      memory += s.limits.memory
      disk += s.limits.disk
    }
    return { memory, disk }
  }
}

const variable = (id: number, name: string, env: string, def: string, editable: boolean, rules: string): EggVariable => ({
  id,
  name,
  description: `${name} (sandbox)`,
  env_variable: env,
  default_value: def,
  user_viewable: true,
  user_editable: editable,
  rules
})

export const seedWorld = (world: World): { readonly admin: User } => {
  const admin = world.addUser({
    username: "admin",
    email: "admin@sandbox.invalid",
    first_name: "Sandbox",
    last_name: "Admin",
    external_id: null,
    language: "en",
    root_admin: true
  })
  world.addNode({ name: "node-1" })
  world.addAllocations(1, "127.0.0.1", Array.from({ length: 10 }, (_, i) => 25565 + i))
  world.nests.set(1, { id: 1, name: "Minecraft" })
  world.nests.set(2, { id: 2, name: "Bedrock" })
  world.eggs.set(5, {
    id: 5,
    uuid: newUuid(),
    nest: 1,
    name: "Paper",
    startup: "java -Xms128M -Xmx{{SERVER_MEMORY}}M -jar {{SERVER_JARFILE}}",
    docker_images: { "Java 17": "ghcr.io/pterodactyl/yolks:java_17", "Java 21": "ghcr.io/pterodactyl/yolks:java_21" },
    variables: [
      variable(1, "Server Jar File", "SERVER_JARFILE", "server.jar", true, "required|regex:/^([\\w\\d._-]+)(\\.jar)$/"),
      variable(2, "Minecraft Version", "MINECRAFT_VERSION", "latest", true, "required|string|max:20"),
      variable(3, "Build Number", "BUILD_NUMBER", "latest", false, "required|string|max:20")
    ]
  })
  world.eggs.set(6, {
    id: 6,
    uuid: newUuid(),
    nest: 2,
    name: "Vanilla Bedrock",
    startup: "./bedrock_server",
    // The pre-1.8 list shape (§2.9): clients must accept both.
    docker_images: ["ghcr.io/pterodactyl/yolks:debian"],
    variables: [variable(4, "Bedrock Version", "BEDROCK_VERSION", "latest", true, "required|string|max:20")]
  })
  return { admin }
}
