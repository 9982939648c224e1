// A server's life on the panel and its node (reference/pterodactyl.md §2.2, §2.4, §2.6): creation with its seeded
// files, the install simulation (succeed / fail / hang, as the control sets it), suspension quirks, deletion.
import { Console } from "./Console.ts"
import { FileTree } from "./FileTree.ts"
import type { Sim } from "./Sim.ts"
import { type FeatureLimits, type InstallOutcome, type Limits, newUuid, type Server } from "./World.ts"

export interface NewServer {
  readonly external_id: string | null
  readonly name: string
  readonly description: string
  readonly user: number
  readonly egg: number
  readonly image: string
  readonly startup: string
  readonly environment: Readonly<Record<string, string | null>>
  readonly limits: Limits
  readonly feature_limits: FeatureLimits
  readonly allocation: number
  readonly additional: ReadonlyArray<number>
}

const seedFiles = (files: FileTree, jar: string) => {
  files.write("/server.properties", Buffer.from([
    "#Minecraft server properties (sandbox)",
    "motd=A Minecraft Server",
    "server-port=25565",
    "max-players=20",
    "online-mode=true",
    ""
  ].join("\n")))
  files.write("/eula.txt", Buffer.from("eula=true\n"))
  files.write(`/${jar}`, { syntheticBytes: 1024 * 1024 })
  files.write("/logs/latest.log", Buffer.from("[00:00:00] [Server thread/INFO]: Sandbox log\n"))
}

export const outcomeFor = (sim: Sim, server: Server): InstallOutcome =>
  (server.external_id === null ? undefined : sim.installOutcomes.byExternalId.get(server.external_id)) ?? sim.installOutcomes.default

/** Marks the server installing and schedules Wings' callback (never, for `hang`). */
export const startInstall = (sim: Sim, server: Server, reinstall: boolean): void => {
  server.status = "installing"
  const outcome = outcomeFor(sim, server)
  server.install = outcome === "hang" ? null : { dueAt: sim.clock.now() + sim.settings.installDurationMs, outcome, reinstall }
  server.console.broadcast("install started", [""], "admin.websocket.install")
  if (server.install !== null) sim.clock.later(sim.settings.installDurationMs, () => settleInstalls(sim))
}

/** Applies every install callback that is due. A suspended server stays suspended: the outcome is lost (§2.4). */
export const settleInstalls = (sim: Sim): void => {
  const now = sim.clock.now()
  for (const server of sim.world.servers.values()) {
    const install = server.install
    if (install === null || install.dueAt > now) continue
    server.install = null
    sim.changed()
    server.console.broadcast("install output", ["sandbox: install script finished"], "admin.websocket.install")
    server.console.broadcast("install completed", [""], "admin.websocket.install")
    if (server.status === "suspended") continue
    server.status = install.outcome === "succeed" ? null : install.reinstall ? "reinstall_failed" : "install_failed"
    server.updated_at = sim.world.nowIso()
  }
}

/** A server record with its Wings process (offline), as created or as loaded from the state file. */
export const withConsole = (sim: Sim, record: Omit<Server, "console">): Server => {
  const server: Server = {
    ...record,
    console: new Console(sim.clock, () => ({
      uuid: server.uuid,
      suspended: server.status === "suspended",
      memoryMiB: server.limits.memory,
      jar: server.environment["SERVER_JARFILE"] ?? "server.jar",
      diskBytes: server.files.totalBytes()
    }))
  }
  return server
}

export const createServer = (sim: Sim, spec: NewServer): Server => {
  const { world } = sim
  const allocation = world.allocations.get(spec.allocation)
  if (allocation === undefined) throw new Error("sandbox: allocation vanished after validation")
  const id = world.nextId("server")
  const uuid = newUuid()
  const now = sim.world.nowIso()
  const created = withConsole(sim, {
    id,
    uuid,
    identifier: uuid.slice(0, 8),
    external_id: spec.external_id,
    name: spec.name,
    description: spec.description,
    status: "installing",
    user: spec.user,
    node: allocation.node,
    allocation: spec.allocation,
    additional: spec.additional,
    nest: world.eggs.get(spec.egg)?.nest ?? 1,
    egg: spec.egg,
    limits: spec.limits,
    feature_limits: spec.feature_limits,
    startup: spec.startup,
    image: spec.image,
    environment: spec.environment,
    created_at: now,
    updated_at: now,
    install: null,
    restoring: null,
    files: new FileTree(sim.clock.now),
    backups: [],
    backupCreations: []
  })
  for (const a of [spec.allocation, ...spec.additional]) {
    const alloc = world.allocations.get(a)
    if (alloc !== undefined) alloc.serverId = id
  }
  seedFiles(created.files, spec.environment["SERVER_JARFILE"] ?? "server.jar")
  world.servers.set(id, created)
  startInstall(sim, created, false)
  return created
}

export const suspend = (sim: Sim, server: Server): void => {
  if (server.status === "suspended") return
  server.status = "suspended"
  server.updated_at = sim.world.nowIso()
  server.console.suspended()
}

/** Unsuspend always clears the status, even mid-install (§2.6): the install then looks finished. */
export const unsuspend = (sim: Sim, server: Server): void => {
  if (server.status !== "suspended") return
  server.status = null
  server.updated_at = sim.world.nowIso()
}

export const deleteServer = (sim: Sim, server: Server): void => {
  for (const a of sim.world.allocations.values()) if (a.serverId === server.id) a.serverId = null
  sim.world.servers.delete(server.id)
  server.console.deleted()
}
