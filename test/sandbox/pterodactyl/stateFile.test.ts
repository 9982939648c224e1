// Specification of the sandbox Pterodactyl's `stateFile`: a server outlives a restart (same ids, files, backups,
// suspension), work running at stop is settled as documented, an invalid file is set aside and reported, the file is
// written atomically with mode 0600 and bounded in size, and concurrent changes never tear it (the write coalescing
// and ordering themselves: test/sandbox/StateFile.test.ts).
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { keepInFile } from "../../../app/sandbox/StateFile.ts"
import type { SandboxPterodactylOptions, SandboxServerState } from "../../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { api, clients, createServer, getServer, type Sandbox, startSandbox } from "./pteroHttp.ts"
import { Allocation, AppServer, Backup, CompletedBackup, FileObject, itemOf, listOf, Node, readJson } from "./shapes.ts"

let root: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sandbox-ptero-state-"))
})
afterAll(() => rm(root, { recursive: true, force: true }))

let nextDir = 0
/** A fresh directory and the state file path in it. */
const freshStateFile = async () => {
  const dir = await mkdtemp(join(root, `case-${nextDir++}-`))
  return { dir, file: join(dir, "sandbox-pterodactyl.json") }
}

const withState = (file: string, warnings: Array<string> = [], options: SandboxPterodactylOptions = {}) =>
  startSandbox({ ...options, keepState: keepInFile(file, "sandbox Pterodactyl"), onWarning: (message) => warnings.push(message) })

const serverState = (sandbox: Sandbox, externalId: string): SandboxServerState | undefined =>
  sandbox.control.servers().find((s) => s.external_id === externalId)

const until = async (condition: () => Promise<boolean>, timeoutMs = 3000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition still false after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** A server created and installed (installs take 0 ms: the next read settles them). */
const installedServer = async (sandbox: Sandbox, overrides: Record<string, unknown> = {}) => {
  const { app } = clients(sandbox)
  const created = await createServer(app, { feature_limits: { databases: 0, backups: 3 }, ...overrides })
  expect((await getServer(app, created.id)).status).toBeNull()
  return created
}

const completedBackup = async (sandbox: Sandbox, server: string, name: string) => {
  const { client } = clients(sandbox)
  const made = await client.post(`/servers/${server}/backups`, { name })
  expect(made.status, made.text).toBe(200)
  const uuid = itemOf(Backup)(made.json).attributes.uuid
  await until(async () => itemOf(Backup)((await client.get(`/servers/${server}/backups/${uuid}`)).json).attributes.completed_at !== null)
  return itemOf(CompletedBackup)((await client.get(`/servers/${server}/backups/${uuid}`)).json).attributes
}

/** `files/write` takes the raw body (§4.1). */
const writeText = (sandbox: Sandbox, server: string, path: string, text: string) =>
  clients(sandbox).client.post(`/servers/${server}/files/write?file=${path}`, text, { "Content-Type": "text/plain" })

/** What the tests read of the state file itself. */
const StateFileHead = Schema.Struct({ format: Schema.String })

const MOTD = Buffer.from([0x6d, 0x6f, 0x74, 0x64, 0x00, 0xff, 0xfe, 0x0a])

describe("a game server across a restart", () => {
  let file: string
  let created: Awaited<ReturnType<typeof installedServer>>
  let backup: { uuid: string; checksum: string; bytes: number }
  let first: Sandbox
  let after: Sandbox
  const warnings: Array<string> = []

  beforeAll(async () => {
    file = (await freshStateFile()).file
    first = await withState(file, warnings)
    created = await installedServer(first, { external_id: "gs_42" })
    const { app } = clients(first)
    expect((await writeText(first, created.identifier, "/config/motd.txt", MOTD.toString("latin1"))).status).toBe(204)
    first.control.putFile(created.uuid, "/config/motd.bin", MOTD)
    first.control.putFile(created.uuid, "/world/region.mca", { syntheticBytes: 5 * 1024 * 1024 })
    backup = await completedBackup(first, created.uuid, "nightly")
    expect((await app.post(`/servers/${created.id}/suspend`)).status).toBe(204)
    await first.close()
    after = await withState(file, warnings)
  })
  afterAll(() => after.close())

  it("is found by its external id with the same id, uuid and identifier, still suspended and offline", async () => {
    const { app } = clients(after)
    const found = await app.get("/servers/external/gs_42")
    expect(found.status, found.text).toBe(200)
    expect(itemOf(AppServer)(found.json).attributes).toMatchObject({
      id: created.id,
      uuid: created.uuid,
      identifier: created.identifier,
      suspended: true,
      status: "suspended",
      allocation: created.allocation
    })
    expect(serverState(after, "gs_42")).toMatchObject({ suspended: true, power: "offline" })
    expect(warnings).toEqual([])
  })

  it("keeps its files, real bytes exactly and synthetic ones by their size only", async () => {
    expect(after.control.readFile(created.uuid, "/config/motd.bin")).toEqual(MOTD)
    expect(after.control.readFile(created.uuid, "/config/motd.txt")).toEqual(first.control.readFile(created.uuid, "/config/motd.txt"))
    expect(after.control.readFile(created.uuid, "/server.properties")?.toString()).toContain("server-port=25565")
    const region = after.control.readFile(created.uuid, "/world/region.mca")
    expect(region?.equals(first.control.readFile(created.uuid, "/world/region.mca") ?? Buffer.alloc(0))).toBe(true)
    expect(region?.length).toBe(5 * 1024 * 1024)
    // The 1 MiB jar and the 5 MiB region file are synthetic: the file holds their sizes, not their bytes.
    expect((await stat(file)).size).toBeLessThan(64 * 1024)
  })

  it("keeps its allocation, and new servers get new ids and free allocations", async () => {
    const { app } = clients(after)
    const held = await app.get(`/nodes/1/allocations?filter[server_id]=${created.id}`)
    expect(listOf(Allocation)(held.json).data.map((a) => a.attributes.id)).toEqual([created.allocation])
    const next = await installedServer(after)
    expect(next.id).toBeGreaterThan(created.id)
    expect(next.allocation).not.toBe(created.allocation)
  })

  it("answers with new keys only: the caller registers them at every start", async () => {
    const old = api(`${after.url}/api/application`, first.applicationKey)
    expect((await old.get("/servers")).status).toBe(401)
    expect(after.applicationKey).not.toBe(first.applicationKey)
  })

  it("once unsuspended, lists its backup with the same checksum and restores from it", async () => {
    const { app, client } = clients(after)
    expect((await app.post(`/servers/${created.id}/unsuspend`)).status).toBe(204)
    const list = await client.get(`/servers/${created.identifier}/backups`)
    expect(listOf(Backup)(list.json).data.map((b) => b.attributes)).toMatchObject([
      { uuid: backup.uuid, name: "nightly", checksum: backup.checksum, bytes: backup.bytes, is_successful: true }
    ])
    const contents = await client.get(`/servers/${created.identifier}/files/contents?file=/config/motd.txt`)
    expect(contents.text).toBe(MOTD.toString("latin1"))
    expect((await client.post(`/servers/${created.identifier}/files/delete`, { root: "/", files: ["config"] })).status).toBe(204)
    expect((await client.post(`/servers/${created.identifier}/backups/${backup.uuid}/restore`, { truncate: true })).status).toBe(204)
    await until(() => Promise.resolve(after.control.readFile(created.uuid, "/config/motd.bin") !== undefined))
    expect(after.control.readFile(created.uuid, "/config/motd.bin")).toEqual(MOTD)
  })

  it("starts again on the console", async () => {
    const { client } = clients(after)
    expect((await client.post(`/servers/${created.identifier}/power`, { signal: "start" })).status).toBe(204)
    await until(() => Promise.resolve(serverState(after, "gs_42")?.power === "running"))
  })
})

describe("work running when the sandbox stops", () => {
  it("a backup being made is listed completed after the restart", async () => {
    const { file } = await freshStateFile()
    const first = await withState(file)
    const s = await installedServer(first)
    const made = await clients(first).client.post(`/servers/${s.uuid}/backups`, { name: "half-made" })
    const half = itemOf(Backup)(made.json).attributes
    expect(half.completed_at).toBeNull()
    await first.close()

    const second = await withState(file)
    const listed = listOf(Backup)((await clients(second).client.get(`/servers/${s.uuid}/backups`)).json).data[0]?.attributes
    expect(listed).toMatchObject({ uuid: half.uuid, name: "half-made", is_successful: true })
    expect(listed?.checksum).toMatch(/^sha1:[0-9a-f]{40}$/)
    await second.close()
  })

  it("a restore in progress is saved finished: the backup's files, the server usable", async () => {
    const { file } = await freshStateFile()
    const first = await withState(file)
    const s = await installedServer(first)
    first.control.putFile(s.uuid, "/kept.txt", Buffer.from("from the backup"))
    const b = await completedBackup(first, s.uuid, "before")
    first.control.putFile(s.uuid, "/kept.txt", Buffer.from("overwritten later"))
    first.control.putFile(s.uuid, "/new.txt", Buffer.from("not in the backup"))
    expect((await clients(first).client.post(`/servers/${s.uuid}/backups/${b.uuid}/restore`, { truncate: true })).status).toBe(204)
    expect(first.control.servers()[0]?.status).toBe("restoring_backup")
    await first.close()

    const second = await withState(file)
    expect(second.control.servers()[0]?.status).toBeNull()
    expect(second.control.readFile(s.uuid, "/kept.txt")?.toString()).toBe("from the backup")
    expect(second.control.readFile(s.uuid, "/new.txt")).toBeUndefined()
    await second.close()
  })

  it("an install still running finishes at its due time after the restart", async () => {
    const { file } = await freshStateFile()
    const first = await withState(file, [], { installDurationMs: 300 })
    const s = await createServer(clients(first).app)
    await first.close()

    const second = await withState(file)
    expect(second.control.servers()[0]?.status).toBe("installing")
    await until(async () => (await getServer(clients(second).app, s.id)).status === null)
    await second.close()
  })

  it("a hanging install stays installing", async () => {
    const { file } = await freshStateFile()
    const first = await withState(file)
    first.control.setInstallOutcome("default", "hang")
    await createServer(clients(first).app)
    await first.close()

    const second = await withState(file)
    expect(second.control.servers()[0]?.status).toBe("installing")
    await second.close()
  })
})

describe("what else survives a restart", () => {
  it("an archive made by compress still decompresses", async () => {
    const { file } = await freshStateFile()
    const first = await withState(file)
    const s = await installedServer(first)
    first.control.putFile(s.uuid, "/plugins/a.yml", Buffer.from("a: 1\n"))
    const archive = await clients(first).client.post(`/servers/${s.uuid}/files/compress`, { root: "/", files: ["plugins"] })
    expect(archive.status, archive.text).toBe(200)
    await first.close()

    const second = await withState(file)
    const { client } = clients(second)
    expect((await client.post(`/servers/${s.uuid}/files/delete`, { root: "/", files: ["plugins"] })).status).toBe(204)
    const unpacked = await client.post(`/servers/${s.uuid}/files/decompress`, { root: "/", file: itemOf(FileObject)(archive.json).attributes.name })
    expect(unpacked.status, unpacked.text).toBe(204)
    expect(second.control.readFile(s.uuid, "/plugins/a.yml")?.toString()).toBe("a: 1\n")
    await second.close()
  })

  it("the backup throttle counts the backups made before the restart", async () => {
    const { file } = await freshStateFile()
    const throttle = { backupThrottle: { limit: 1, periodMs: 600_000 } }
    const first = await withState(file, [], throttle)
    const s = await installedServer(first)
    await completedBackup(first, s.uuid, "one")
    await first.close()

    const second = await withState(file, [], throttle)
    expect((await clients(second).client.post(`/servers/${s.uuid}/backups`, {})).status).toBe(429)
    await second.close()
  })
})

const SEED_NODES = [1]

describe("an invalid state file", () => {
  const server = (overrides: Record<string, unknown>) => JSON.stringify({
    format: "sandbox-pterodactyl-state",
    version: 1,
    counters: { user: 2, node: 2, allocation: 11, server: 2 },
    users: [{
      id: 1, uuid: "u", username: "admin", email: "a@b.c", first_name: "A", last_name: "B", external_id: null,
      language: "en", root_admin: true, created_at: "2026-01-01T00:00:00+00:00"
    }],
    nodes: [{
      id: 1, uuid: "n", name: "node-1", public: true, location_id: 1, memory: 1024, memory_overallocate: 0, disk: 1024,
      disk_overallocate: 0, upload_size: 100, maintenance_mode: false, created_at: "2026-01-01T00:00:00+00:00"
    }],
    allocations: [{ id: 1, node: 1, ip: "127.0.0.1", port: 25565, alias: null, serverId: null }],
    nests: [],
    eggs: [],
    servers: [],
    blobs: {},
    ...overrides
  })
  const invalid = [
    ["text that is not JSON", "{ this is not json"],
    ["a document of another shape", JSON.stringify({ format: "sandbox-pterodactyl-state", version: 1, servers: [{ id: "x" }] })],
    ["an allocation on a node it lacks", server({ allocations: [{ id: 1, node: 9, ip: "127.0.0.1", port: 25565, alias: null, serverId: null }] })],
    ["a blob that does not match its hash", server({ blobs: { ["0".repeat(64)]: Buffer.from("x").toString("base64") } })]
  ] as const

  it.each(invalid)("is moved aside and reported when it holds %s; the sandbox starts from its seed", async (_, text) => {
    const { dir, file } = await freshStateFile()
    await writeFile(file, text)
    const warnings: Array<string> = []
    const sandbox = await withState(file, warnings)
    expect(sandbox.control.servers()).toEqual([])
    const nodes = listOf(Node)((await clients(sandbox).app.get("/nodes")).json).data.map((n) => n.attributes.id)
    expect(nodes).toEqual(SEED_NODES)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(`state file ${file} is invalid`)
    const aside = (await readdir(dir)).filter((name) => name.startsWith("sandbox-pterodactyl.json.invalid-"))
    expect(aside).toHaveLength(1)
    expect(await readFile(join(dir, aside[0] ?? ""), "utf8")).toBe(text)
    await sandbox.close()
    expect(readJson(StateFileHead)(await readFile(file, "utf8")).format).toBe("sandbox-pterodactyl-state")
  })

  it("is a clear error when it exists but cannot be read", async () => {
    const { dir } = await freshStateFile()
    await expect(withState(dir)).rejects.toThrow(`sandbox Pterodactyl: cannot read state file ${dir}`)
  })
})

describe("the state file itself", () => {
  it("starts from the seed when there is no file yet", async () => {
    const { file } = await freshStateFile()
    const warnings: Array<string> = []
    const sandbox = await withState(file, warnings)
    expect(sandbox.control.servers()).toEqual([])
    expect(warnings).toEqual([])
    await sandbox.close()
  })

  it("is written soon after a change, readable by its owner only, with no temp file and no API key in it", async () => {
    const { dir, file } = await freshStateFile()
    const sandbox = await withState(file)
    const user = await clients(sandbox).app.post("/users", { email: "soon@example.test", username: "soon", first_name: "S", last_name: "O" })
    expect(user.status, user.text).toBe(201)
    await until(async () => (await readFile(file, "utf8").catch(() => "")).includes("soon@example.test"))
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect(await readdir(dir)).toEqual(["sandbox-pterodactyl.json"])
    const text = await readFile(file, "utf8")
    expect(text).not.toContain(sandbox.applicationKey.slice(16))
    expect(text).not.toContain(sandbox.clientKey.slice(16))
    await sandbox.close()
  })

  it("beyond its limit of real file bytes keeps every server but no real file content, and says so once", async () => {
    const { file } = await freshStateFile()
    const warnings: Array<string> = []
    const first = await withState(file, warnings, { stateFileMaxFileBytes: 4096 })
    const s = await installedServer(first, { external_id: "big" })
    first.control.putFile(s.uuid, "/big.bin", Buffer.alloc(8192, 7))
    await until(() => Promise.resolve(warnings.length === 1))
    expect(warnings[0]).toMatch(/files hold \d+ bytes \(4 distinct contents\), more than the 4096 bytes the state file keeps/)
    first.control.putFile(s.uuid, "/bigger.bin", Buffer.alloc(9000, 8))
    await first.close()
    expect(warnings).toHaveLength(1)
    expect((await stat(file)).size).toBeLessThan(8192)

    const second = await withState(file, warnings)
    expect(serverState(second, "big")?.uuid).toBe(s.uuid)
    expect(second.control.readFile(s.uuid, "/big.bin")).toBeUndefined()
    expect(second.control.readFile(s.uuid, "/server.jar")?.length).toBe(1024 * 1024)
    await second.close()
  })

  it("a failed save is reported and the sandbox keeps serving; the next change saves again", async () => {
    const { dir } = await freshStateFile()
    const stateDir = join(dir, "state")
    const warnings: Array<string> = []
    const sandbox = await withState(join(stateDir, "ptero.json"), warnings)
    // The directory is taken by a file: every write fails.
    await writeFile(stateDir, "in the way")
    const { app } = clients(sandbox)
    await installedServer(sandbox)
    await until(() => Promise.resolve(warnings.length > 0))
    expect(warnings[0]).toContain(`could not save state file ${join(stateDir, "ptero.json")}`)
    expect((await app.get("/servers")).status).toBe(200)
    await rm(stateDir)
    await mkdir(stateDir)
    await installedServer(sandbox)
    await until(async () => (await readFile(join(stateDir, "ptero.json"), "utf8").catch(() => "")).includes("\"servers\""))
    await sandbox.close()
  })
})

describe("concurrent changes", () => {
  it("files written concurrently over HTTP are all there after a restart, and the file is never torn", async () => {
    const { dir, file } = await freshStateFile()
    const first = await withState(file)
    const s = await installedServer(first)
    const reads: Array<Promise<void>> = []
    const writes = Array.from({ length: 30 }, (_, i) =>
      writeText(first, s.uuid, `/many/f${i}.txt`, `content ${i}`).then((r) => {
        expect(r.status).toBe(204)
        // Every read sees a whole document: the previous one or the new one.
        reads.push(readFile(file, "utf8").then((text) => void JSON.parse(text)).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== "ENOENT") throw e
        }))
      }))
    await Promise.all(writes)
    await Promise.all(reads)
    await first.close()
    expect(await readdir(dir)).toEqual(["sandbox-pterodactyl.json"])

    const second = await withState(file)
    for (let i = 0; i < 30; i++) expect(second.control.readFile(s.uuid, `/many/f${i}.txt`)?.toString()).toBe(`content ${i}`)
    await second.close()
  })
})
