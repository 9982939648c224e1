// What of the simulated panel survives a restart (the `stateFile` option): users, nodes, allocations, nests and eggs,
// and every server with its status, install, files and backups, as the versioned document of durableDoc.ts. Wings
// processes come back offline; API keys, node secrets, tokens, faults, rate limits and the request log are not kept.
import { type Effect, Result, type Scope } from "effect"
import { completeBackup, renderArchive, restoredTree } from "./backups.ts"
import {
  blobKey,
  type DecodedState,
  decodeDurableState,
  type EntryDoc,
  FORMAT,
  type ServerDoc,
  type StateDoc,
  type TreeDoc
} from "./durableDoc.ts"
import { type Entry, FileTree } from "./FileTree.ts"
import { settleInstalls, withConsole } from "./lifecycle.ts"
import type { Sim } from "./Sim.ts"
import { type Backup, newSecret, type Server } from "./World.ts"

/** What a state keeper (the sandbox wiring's file) saves and puts back: the world as a document. */
export interface StateSource {
  /** Equal states give equal text: an unchanged document need not be written again. */
  encode(): string
  /** Applies a saved document (the text taken as on disk from then on), or says what is wrong with it. */
  restore(text: string): Result.Result<string, string>
}

/**
 * Keeps the document somewhere (a file in sandbox mode), opened for a scope by the `keepState` option: loaded when
 * opened, saved after `changed()` and when the scope closes.
 */
export interface StateKeeper {
  changed(): void
}

/** The `keepState` option: opens a keeper over the document for the current scope. */
export type KeepState = (source: StateSource, warn: (message: string) => void) => Effect.Effect<StateKeeper, never, Scope.Scope>

/** The real (non-synthetic) file bytes a state file keeps, counted once per distinct content. */
export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024

/** Buffers in file entries are never mutated (every change replaces the entry), so a content's hash is computed once. */
const keys = new WeakMap<Buffer, string>()
const keyOf = (bytes: Buffer): string => {
  let key = keys.get(bytes)
  if (key === undefined) {
    key = blobKey(bytes)
    keys.set(bytes, key)
  }
  return key
}

const eachBuffer = (entries: Iterable<Entry>, f: (bytes: Buffer) => void): void => {
  for (const e of entries) {
    if (e.kind !== "file") continue
    if (Buffer.isBuffer(e.data)) f(e.data)
    if (e.archive !== undefined) eachBuffer(e.archive.values(), f)
  }
}

/** The tree a server is saved with: a running restore saved finished (its checks passed, its files are known). */
const savedTree = (server: Server): ReadonlyMap<string, Entry> =>
  server.restoring === null ? server.files.entries : restoredTree(server.files.entries, server.restoring)

/** Every distinct real file content of the world, by key. */
const distinctBlobs = (sim: Sim): Map<string, Buffer> => {
  const blobs = new Map<string, Buffer>()
  const add = (bytes: Buffer) => void blobs.set(keyOf(bytes), bytes)
  for (const server of sim.world.servers.values()) {
    eachBuffer(savedTree(server).values(), add)
    for (const backup of server.backups) eachBuffer(backup.files.values(), add)
  }
  return blobs
}

/** Entries by path, sorted so equal trees give equal text. `keep`: whether real file bytes are saved. */
const treeDoc = (entries: ReadonlyMap<string, Entry>, keep: boolean): TreeDoc => {
  const doc: Record<string, EntryDoc> = {}
  for (const [path, e] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const times = { mode: e.mode, modifiedAt: e.modifiedAt, createdAt: e.createdAt }
    if (e.kind === "dir") {
      doc[path] = { kind: "dir", ...times }
      continue
    }
    if (Buffer.isBuffer(e.data) && !keep) continue
    doc[path] = {
      kind: "file",
      ...times,
      ...(Buffer.isBuffer(e.data) ? { blob: keyOf(e.data) } : { syntheticBytes: e.data.syntheticBytes }),
      ...(e.archive === undefined ? {} : { archive: treeDoc(e.archive, keep) })
    }
  }
  return doc
}

const serverDoc = (sim: Sim, server: Server, keep: boolean): ServerDoc => {
  const since = sim.clock.now() - sim.settings.backupThrottle.periodMs
  const { console: _console, restoring: _restoring, install, files: _files, backups, backupCreations, ...fields } = server
  return {
    ...fields,
    status: server.status === "restoring_backup" ? null : server.status,
    install: install === null || install.outcome === "hang" ? null : { dueAt: install.dueAt, outcome: install.outcome, reinstall: install.reinstall },
    files: treeDoc(savedTree(server), keep),
    backups: backups.map((b) => ({
      uuid: b.uuid,
      name: b.name,
      ignored_files: b.ignored_files,
      is_successful: b.is_successful,
      is_locked: b.is_locked,
      checksum: b.checksum,
      bytes: b.bytes,
      created_at: b.created_at,
      completed_at: b.completed_at,
      files: treeDoc(b.files, keep)
    })),
    backupCreations: backupCreations.filter((t) => t > since)
  }
}

export interface EncodedWorld {
  readonly text: string
  /** Real file bytes over the limit: none of them is in the document. */
  readonly omitted: { readonly files: number; readonly bytes: number } | undefined
}

const byId = <T extends { readonly id: number }>(records: Iterable<T>): Array<T> => [...records].sort((a, b) => a.id - b.id)

/** The document for the world as it is now; equal worlds give equal text. */
export const encodeWorld = (sim: Sim, maxFileBytes: number): EncodedWorld => {
  const { world } = sim
  const blobs = distinctBlobs(sim)
  let total = 0
  for (const bytes of blobs.values()) total += bytes.length
  const keep = total <= maxFileBytes
  const state: StateDoc = {
    format: FORMAT,
    version: 1,
    counters: world.counters,
    users: byId(world.users.values()),
    nodes: byId(world.nodes.values()).map(({ secret: _secret, ...node }) => node),
    allocations: byId(world.allocations.values()).map((a) => ({ ...a })),
    nests: byId(world.nests.values()),
    eggs: byId(world.eggs.values()),
    servers: byId(world.servers.values()).map((s) => serverDoc(sim, s, keep)),
    blobs: keep ? Object.fromEntries([...blobs].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, v.toString("base64")])) : {}
  }
  return {
    text: `${JSON.stringify(state, null, 2)}\n`,
    omitted: keep ? undefined : { files: blobs.size, bytes: total }
  }
}

const toTree = (doc: TreeDoc, blobs: ReadonlyMap<string, Buffer>): Map<string, Entry> =>
  new Map(Object.entries(doc).map(([path, e]): [string, Entry] => {
    const times = { mode: e.mode, modifiedAt: e.modifiedAt, createdAt: e.createdAt }
    if (e.kind === "dir") return [path, { kind: "dir", ...times }]
    // Checked on decode: a file has its blob (present in `blobs`) or its synthetic size.
    const data = e.blob === undefined ? { syntheticBytes: e.syntheticBytes ?? 0 } : blobs.get(e.blob) ?? Buffer.alloc(0)
    return [path, { kind: "file", data, ...times, ...(e.archive === undefined ? {} : { archive: toTree(e.archive, blobs) }) }]
  }))

const toServer = (sim: Sim, doc: ServerDoc, blobs: ReadonlyMap<string, Buffer>): Server => {
  const files = new FileTree(sim.clock.now)
  files.entries = toTree(doc.files, blobs)
  const { files: _files, backups, backupCreations, install, ...fields } = doc
  const server = withConsole(sim, {
    ...fields,
    install,
    restoring: null,
    files,
    backups: [],
    backupCreations: [...backupCreations]
  })
  for (const b of backups) {
    const { files: backupFiles, ...meta } = b
    const files = toTree(backupFiles, blobs)
    const backup: Backup = { ...meta, files, content: meta.completed_at === null ? Buffer.alloc(0) : renderArchive(files) }
    server.backups.push(backup)
    // The archive was being made when the sandbox stopped; its files were captured, so it is finished now.
    if (backup.completed_at === null) completeBackup(sim, server, backup)
  }
  return server
}

/**
 * Replaces the seeded world by the saved one. Users, nodes, allocations and servers are the file's; nests and eggs
 * the file lacks keep their seed (an egg added to the seed appears in an older file). Nodes get new daemon secrets.
 */
export const restoreWorld = (sim: Sim, { doc, blobs }: DecodedState): void => {
  const { world } = sim
  for (const map of [world.users, world.nodes, world.allocations, world.servers]) map.clear()
  for (const u of doc.users) world.users.set(u.id, u)
  for (const n of doc.nodes) world.nodes.set(n.id, { ...n, secret: newSecret() })
  for (const a of doc.allocations) world.allocations.set(a.id, { ...a })
  for (const n of doc.nests) world.nests.set(n.id, n)
  for (const e of doc.eggs) world.eggs.set(e.id, e)
  for (const s of doc.servers) world.servers.set(s.id, toServer(sim, s, blobs))
  world.resumeCounters(doc.counters)
  for (const server of world.servers.values()) {
    if (server.install !== null) sim.clock.later(Math.max(0, server.install.dueAt - sim.clock.now()), () => settleInstalls(sim))
  }
}

/** The world as the state file sees it; warns once each time the files grow past the limit (and not again until they shrink back). */
export const durableWorld = (sim: Sim, maxFileBytes: number): StateSource => {
  let over = false
  return {
    encode: () => {
      const encoded = encodeWorld(sim, maxFileBytes)
      if (encoded.omitted !== undefined && !over) {
        const mib = (n: number) => (n < 1024 * 1024 ? `${n} bytes` : `${(n / 1024 / 1024).toFixed(1)} MiB`)
        sim.settings.warn(`sandbox Pterodactyl: the servers' files hold ${mib(encoded.omitted.bytes)} ` +
          `(${encoded.omitted.files} distinct contents), more than the ${mib(maxFileBytes)} the state file keeps; ` +
          "it is saved without any real file contents (synthetic files and everything else are kept) until they shrink")
      }
      over = encoded.omitted !== undefined
      return encoded.text
    },
    restore: (text) => {
      const decoded = decodeDurableState(text, new Set(sim.world.eggs.keys()))
      if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
      restoreWorld(sim, decoded.success)
      // The file's own text, not a new encoding: that would cost a whole encode and could warn about the size.
      return Result.succeed(text)
    }
  }
}
