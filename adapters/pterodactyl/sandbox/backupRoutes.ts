// Client API backups (reference/pterodactyl.md §4.3): throttle (429 + Retry-After) then limit (400
// TooManyBackupsException), completion ~200 ms later with a sha1 checksum and a `backup completed:<uuid>` console
// event, lock toggling, locked-delete refusal, restore through `restoring_backup`, single-use download URLs.
import { randomUUID } from "node:crypto"
import { BACKUP_MS, completeBackup, finishRestore, RESTORE_MS } from "./backups.ts"
import { CLIENT, signedUrl, tokenContext, usableServer } from "./clientAccess.ts"
import { at, validate } from "./rules.ts"
import { obj, pageUrl, type PanelRoute, route, type RouteContext } from "./Route.ts"
import { clientBackup } from "./transformers.ts"
import { item, list, noContent, notFound, ok, paginate, panelError } from "./wire.ts"
import { type Backup, type Server } from "./World.ts"

const BACKUPS = `${CLIENT}/backups`

const counted = (b: Backup) => b.completed_at === null || b.is_successful

const backupOf = (ctx: RouteContext, server: Server): Backup => {
  const backup = server.backups.find((b) => b.uuid === ctx.params["backup"])
  if (backup === undefined) throw notFound()
  return backup
}

const create = (ctx: RouteContext) => {
  const server = usableServer(ctx)
  const body = obj(ctx.body)
  validate([
    { field: "name", rules: "nullable|string|max:191", ...at(body, "name") },
    { field: "is_locked", rules: "nullable|boolean", ...at(body, "is_locked") },
    { field: "ignored", rules: "nullable|string", ...at(body, "ignored") }
  ])
  const { limit, periodMs } = ctx.sim.settings.backupThrottle
  const now = ctx.sim.clock.now()
  const recent = server.backupCreations.filter((t) => t > now - periodMs)
  if (periodMs > 0 && recent.length >= limit) {
    const retryAfter = Math.max(1, Math.ceil(((recent[0] ?? now) + periodMs - now) / 1000))
    throw panelError(429, "TooManyRequestsHttpException",
      `Only ${limit} backups may be generated within a ${Math.round(periodMs / 1000)} second span of time.`, { "Retry-After": String(retryAfter) })
  }
  const max = server.feature_limits.backups
  if (max <= 0 || server.backups.filter(counted).length >= max) {
    throw panelError(400, "TooManyBackupsException", `Cannot create a new backup, this server has reached its limit of ${max} backups.`)
  }
  server.backupCreations.push(now)
  const files = server.files.snapshot()
  const backup: Backup = {
    uuid: randomUUID(),
    name: typeof body["name"] === "string" && body["name"] !== "" ? body["name"] : `Backup at ${ctx.sim.world.nowIso()}`,
    ignored_files: typeof body["ignored"] === "string" ? body["ignored"].split("\n").filter((l) => l !== "") : [],
    is_successful: false,
    is_locked: body["is_locked"] === true,
    checksum: null,
    bytes: 0,
    created_at: ctx.sim.world.nowIso(),
    completed_at: null,
    files,
    content: Buffer.alloc(0)
  }
  server.backups.push(backup)
  ctx.sim.clock.later(BACKUP_MS, () => completeBackup(ctx.sim, server, backup))
  return ok(item("backup", clientBackup(backup)))
}

export const backupRoutes: ReadonlyArray<PanelRoute> = [
  route("GET", BACKUPS, (ctx) => {
    const server = usableServer(ctx)
    const page = paginate(server.backups, ctx.query, pageUrl(ctx), 20, 50)
    return ok(list("backup", page.rows.map(clientBackup), {
      pagination: page.pagination,
      backup_count: server.backups.filter(counted).length
    }))
  }),
  route("POST", BACKUPS, create),
  route("GET", `${BACKUPS}/{backup}`, (ctx) => ok(item("backup", clientBackup(backupOf(ctx, usableServer(ctx)))))),
  route("GET", `${BACKUPS}/{backup}/download`, (ctx) => {
    const server = usableServer(ctx)
    const backup = backupOf(ctx, server)
    if (backup.completed_at === null || !backup.is_successful) {
      throw panelError(400, "BadRequestHttpException", "This backup cannot be downloaded until it has completed.")
    }
    const token = ctx.sim.tokens.issue("backup-download", tokenContext(ctx, server), server.uuid, ctx.sim.settings.signedUrlTtlMs, {
      backup_uuid: backup.uuid,
      user_uuid: ctx.user.uuid
    })
    return ok(signedUrl(`${ctx.sim.nodeUrl}/download/backup?token=${token}`))
  }),
  route("POST", `${BACKUPS}/{backup}/lock`, (ctx) => {
    const backup = backupOf(ctx, usableServer(ctx))
    backup.is_locked = !backup.is_locked
    return ok(item("backup", clientBackup(backup)))
  }),
  route("POST", `${BACKUPS}/{backup}/restore`, (ctx) => {
    const server = usableServer(ctx)
    const backup = backupOf(ctx, server)
    const body = obj(ctx.body)
    validate([{ field: "truncate", rules: "required|boolean", ...at(body, "truncate") }])
    if (server.status !== null || backup.completed_at === null || !backup.is_successful) {
      throw panelError(400, "BadRequestHttpException", "This server is not currently in a state that allows for a backup to be restored.")
    }
    server.status = "restoring_backup"
    server.restoring = { files: backup.files, truncate: body["truncate"] === true }
    server.console.broadcast("daemon message", ["Restoring server from backup..."])
    ctx.sim.clock.later(RESTORE_MS, () => finishRestore(ctx.sim, server))
    return noContent()
  }),
  route("DELETE", `${BACKUPS}/{backup}`, (ctx) => {
    const server = usableServer(ctx)
    const backup = backupOf(ctx, server)
    if (backup.is_locked && backup.is_successful && backup.completed_at !== null) {
      throw panelError(400, "BackupLockedException", "Cannot delete a backup that is marked as locked.")
    }
    server.backups.splice(server.backups.indexOf(backup), 1)
    return noContent()
  })
]
