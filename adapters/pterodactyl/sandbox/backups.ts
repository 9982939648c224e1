// What a backup is on Wings (reference/pterodactyl.md §4.3), apart from its routes: the archive a download streams,
// the completion that fills in checksum and size, and how a restore lays the saved files over the server's tree.
// The backup routes and the state file (which completes pending backups and saves running restores finished) share it.
import { createHash } from "node:crypto"
import { type Entry, materialize } from "./FileTree.ts"
import type { Sim } from "./Sim.ts"
import { type Backup, type Server } from "./World.ts"

export const BACKUP_MS = 200
export const RESTORE_MS = 200

/** What a backup download streams: every regular file, path then bytes (synthetic files by their size only). */
export const renderArchive = (files: ReadonlyMap<string, Entry>): Buffer =>
  Buffer.concat([...files].sort(([a], [b]) => a.localeCompare(b)).flatMap(([path, e]) => {
    if (e.kind !== "file") return [Buffer.from(`${path}/\n`)]
    if (!Buffer.isBuffer(e.data)) return [Buffer.from(`${path} (${e.data.syntheticBytes} synthetic bytes)\n`)]
    return [Buffer.from(`${path} ${e.data.length}\n`), materialize(e.data), Buffer.from("\n")]
  }))

/** Wings reports the archive done: checksum, size, `backup completed:<uuid>` on the console sockets. */
export const completeBackup = (sim: Sim, server: Server, backup: Backup): void => {
  backup.content = renderArchive(backup.files)
  backup.bytes = backup.content.length
  const sha1 = createHash("sha1").update(backup.content).digest("hex")
  backup.checksum = `sha1:${sha1}`
  backup.is_successful = true
  backup.completed_at = sim.world.nowIso()
  server.console.broadcast(`backup completed:${backup.uuid}`, [JSON.stringify({
    uuid: backup.uuid,
    is_successful: true,
    checksum: sha1,
    checksum_type: "sha1",
    file_size: backup.bytes
  })], "backup.read")
  sim.changed()
}

/** The tree after a restore: the backup's files alone (truncate), or laid over the current ones. */
export const restoredTree = (
  current: ReadonlyMap<string, Entry>,
  restoring: NonNullable<Server["restoring"]>
): Map<string, Entry> => {
  if (restoring.truncate) return new Map(restoring.files)
  const tree = new Map(current)
  for (const [p, e] of restoring.files) tree.set(p, e)
  return tree
}

/** The restore lands: files replaced, `restoring_backup` lifted (a suspension that came meanwhile stays). */
export const finishRestore = (sim: Sim, server: Server): void => {
  if (server.restoring === null) return
  server.files.entries = restoredTree(server.files.entries, server.restoring)
  server.restoring = null
  if (server.status === "restoring_backup") server.status = null
  server.console.broadcast("backup restore completed", [""])
  sim.changed()
}
