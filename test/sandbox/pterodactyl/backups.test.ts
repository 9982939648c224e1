// Specification of the sandbox backups (reference/pterodactyl.md §4.3): completion with a sha1 checksum and a console
// event, the per-server throttle (429 + Retry-After) and limit (400), lock and locked delete, restore, download.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clients, createServer, getServer, openConsole, type Sandbox, startSandbox } from "./pteroHttp.ts"
import { Backup, BackupCompleted, backupPageOf, errorsOf, itemOf, readJson, SignedUrl } from "./shapes.ts"

let sandbox: Sandbox
let app: ReturnType<typeof clients>["app"]
let client: ReturnType<typeof clients>["client"]

beforeAll(async () => {
  sandbox = await startSandbox({ backupThrottle: { limit: 10, periodMs: 600_000 } })
  ;({ app, client } = clients(sandbox))
})
afterAll(() => sandbox.close())

const server = async (backups: number) => {
  const s = await createServer(app, { feature_limits: { databases: 0, backups } })
  await app.get(`/servers/${s.id}`)
  return s
}

const completed = async (uuid: string, backup: string) => {
  for (;;) {
    const b = itemOf(Backup)((await client.get(`/servers/${uuid}/backups/${backup}`)).json).attributes
    if (b.completed_at !== null) return b
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe("backups", () => {
  it("start with completed_at null, complete with a sha1 checksum and announce it on the console", async () => {
    const s = await server(2)
    const c = await openConsole(sandbox, client, s.uuid)
    const created = await client.post(`/servers/${s.uuid}/backups`, { name: "first" })
    expect(created.status).toBe(200)
    const made = itemOf(Backup)(created.json)
    expect(made.object).toBe("backup")
    expect(made.attributes).toMatchObject({ name: "first", completed_at: null, is_successful: false })
    const uuid = made.attributes.uuid
    const event = await c.next(`backup completed:${uuid}`, 0)
    const payload = readJson(BackupCompleted)(event.args![0]!)
    expect(payload).toMatchObject({ uuid, is_successful: true, checksum_type: "sha1" })
    const done = await completed(s.uuid, uuid)
    expect(done.checksum).toBe(`sha1:${payload.checksum}`)
    expect(done.bytes).toBe(payload.file_size)
    const list = backupPageOf((await client.get(`/servers/${s.uuid}/backups`)).json)
    expect(list.meta.backup_count).toBe(1)
    expect(list.meta.pagination).toMatchObject({ total: 1, per_page: 20 })
    const url = itemOf(SignedUrl)((await client.get(`/servers/${s.uuid}/backups/${uuid}/download`)).json).attributes.url
    expect(url.startsWith(`${sandbox.nodeUrl}/download/backup?token=`)).toBe(true)
    const download = await fetch(url)
    expect(Number(download.headers.get("content-length"))).toBe(done.bytes)
    c.close()
  })

  it("refuse past the server's limit with 400 TooManyBackupsException, and any backup when the limit is 0", async () => {
    const s = await server(1)
    expect((await client.post(`/servers/${s.uuid}/backups`, {})).status).toBe(200)
    const over = await client.post(`/servers/${s.uuid}/backups`, {})
    expect(over.status).toBe(400)
    expect(errorsOf(over.json)[0]).toMatchObject({ code: "TooManyBackupsException", detail: "Cannot create a new backup, this server has reached its limit of 1 backups." })
    const none = await server(0)
    expect((await client.post(`/servers/${none.uuid}/backups`, {})).status).toBe(400)
  })

  it("are throttled per server with 429 and Retry-After", async () => {
    const throttled = await startSandbox({ backupThrottle: { limit: 2, periodMs: 600_000 } })
    try {
      const { app: a, client: c } = clients(throttled)
      const s = await createServer(a, { feature_limits: { databases: 0, backups: 10 } })
      await a.get(`/servers/${s.id}`)
      expect((await c.post(`/servers/${s.uuid}/backups`, {})).status).toBe(200)
      expect((await c.post(`/servers/${s.uuid}/backups`, {})).status).toBe(200)
      const third = await c.post(`/servers/${s.uuid}/backups`, {})
      expect(third.status).toBe(429)
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(590)
    } finally {
      await throttled.close()
    }
  })

  it("toggle a lock; a locked completed backup cannot be deleted until unlocked", async () => {
    const s = await server(3)
    const uuid = itemOf(Backup)((await client.post(`/servers/${s.uuid}/backups`, { is_locked: true })).json).attributes.uuid
    await completed(s.uuid, uuid)
    const refused = await client.delete(`/servers/${s.uuid}/backups/${uuid}`)
    expect(refused.status).toBe(400)
    expect(errorsOf(refused.json)[0].code).toBe("BackupLockedException")
    expect(itemOf(Backup)((await client.post(`/servers/${s.uuid}/backups/${uuid}/lock`)).json).attributes.is_locked).toBe(false)
    expect((await client.delete(`/servers/${s.uuid}/backups/${uuid}`)).status).toBe(204)
    expect((await client.get(`/servers/${s.uuid}/backups/${uuid}`)).status).toBe(404)
  })

  it("restore the files through restoring_backup, truncate required", async () => {
    const s = await server(3)
    sandbox.control.putFile(s.uuid, "/keep.txt", Buffer.from("v1"))
    const uuid = itemOf(Backup)((await client.post(`/servers/${s.uuid}/backups`, {})).json).attributes.uuid
    await completed(s.uuid, uuid)
    sandbox.control.putFile(s.uuid, "/keep.txt", Buffer.from("v2"))
    sandbox.control.putFile(s.uuid, "/new.txt", Buffer.from("later"))
    expect((await client.post(`/servers/${s.uuid}/backups/${uuid}/restore`, {})).status).toBe(422)
    expect((await client.post(`/servers/${s.uuid}/backups/${uuid}/restore`, { truncate: true })).status).toBe(204)
    expect((await getServer(app, s.id)).status).toBe("restoring_backup")
    expect((await client.get(`/servers/${s.uuid}/files/list`)).status).toBe(409)
    while ((await getServer(app, s.id)).status !== null) await new Promise((r) => setTimeout(r, 50))
    expect(sandbox.control.readFile(s.uuid, "/keep.txt")?.toString()).toBe("v1")
    expect(sandbox.control.readFile(s.uuid, "/new.txt")).toBeUndefined()
  })
})
