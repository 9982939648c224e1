// The SQL connection: a real Postgres when DATABASE_URL is set, otherwise an embedded PGlite kept in DATA_DIR.
import { PGlite, type PGliteOptions } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { type Duration, Effect, Layer, Redacted, Schema } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { connect } from "node:net"
import { EmbeddedPgServer } from "./EmbeddedPgServer.ts"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

export class EmbeddedDatabaseFailed extends Schema.TaggedError<EmbeddedDatabaseFailed>()("EmbeddedDatabaseFailed", {
  location: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The embedded database in ${this.location} cannot start: ${this.detail}`
  }
}

type SqlLayer = Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, EmbeddedDatabaseFailed | SqlError.SqlError>

/**
 * A real Postgres. `connectTimeout` bounds opening a connection (the library's default is 5 s): while the database
 * does not answer, a request fails after it (the edge answers 503) instead of hanging, and the pool opens fresh
 * connections once it is back, so the process recovers by itself.
 */
export const postgres = (
  url: Redacted.Redacted<string>,
  maxConnections: number,
  options: { readonly connectTimeout?: Duration.Input } = {}
) =>
  PgClient.layer({
    url,
    maxConnections,
    applicationName: "zh-hosting",
    ...(options.connectTimeout === undefined ? {} : { connectTimeout: options.connectTimeout })
  })

const overSocket = (socketPath: string, maxConnections: number) =>
  PgClient.layer({
    stream: () => connect(socketPath),
    username: "postgres",
    database: "postgres",
    maxConnections,
    applicationName: "zh-hosting"
  })

/** Resolves when something accepts connections on the socket. */
const answers = (socketPath: string) =>
  Effect.callback<boolean>((resume) => {
    const socket = connect(socketPath)
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

/** Opens PGlite at `location` (a data directory, or memory); closed with the scope. */
const open = (location: string, options: PGliteOptions, failed: (e: unknown) => EmbeddedDatabaseFailed) =>
  Effect.acquireRelease(
    Effect.tryPromise({ try: () => PGlite.create(location, options), catch: failed }),
    (db) => Effect.promise(() => db.close())
  )

/**
 * PGlite is a single-session Postgres in WebAssembly, so exactly one process may open a data directory.
 * That process serves it over the wire protocol on a private Unix socket (in a fresh 0700 directory: no other
 * local user or TCP client can reach it) and the same @effect/sql-pg repositories talk to it. EmbeddedPgServer
 * keeps each connection's statement batches and transactions together, so several connections (the workflow
 * engine needs more than one) and other processes of ours (the admin CLI, through the endpoint file this
 * process publishes) share it safely. The server stops (and nothing more reaches PGlite) before PGlite closes.
 */
const serve = (db: PGlite, endpointFile: string | undefined, failed: (e: unknown) => EmbeddedDatabaseFailed) =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => mkdtemp(join(tmpdir(), "zh-pglite-")), catch: failed }),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const socketPath = join(dir, "pg.sock")
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new EmbeddedPgServer(db)
          await server.listen(socketPath)
          return server
        },
        catch: failed
      }),
      (server) => Effect.promise(() => server.close())
    )
    if (endpointFile !== undefined) {
      yield* Effect.acquireRelease(
        Effect.tryPromise({ try: () => writeFile(endpointFile, socketPath, { mode: 0o600 }), catch: failed }),
        () => Effect.promise(() => rm(endpointFile, { force: true }))
      )
    }
    return socketPath
  })

const failure = (location: string) => (e: unknown) =>
  new EmbeddedDatabaseFailed({ location, detail: e instanceof Error ? e.message : String(e) })

/**
 * An in-memory PGlite (tests): nothing to share, nothing kept. `loadDataDir` starts it from a dumped data directory
 * instead of running initdb, the slow part of a PGlite start.
 */
export const embeddedPostgres = (location: "memory://", options: { readonly loadDataDir?: Blob } = {}): SqlLayer =>
  Layer.unwrap(Effect.gen(function*() {
    const failed = failure(location)
    const db = yield* open(location, options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir }, failed)
    return overSocket(yield* serve(db, undefined, failed), 4)
  }))

/** A PGlite its caller opened and will close, served to this process only (to migrate it, then dump it). */
export const servedPglite = (db: PGlite): SqlLayer =>
  Layer.unwrap(Effect.map(serve(db, undefined, failure("pglite")), (socketPath) => overSocket(socketPath, 4)))

/**
 * The PGlite database in DATA_DIR. `share`: when another process of ours already serves it, connect to that
 * one (the CLI beside a running server); otherwise refuse, since two owners would corrupt it (a second server).
 */
export const embeddedDataDir = (dataDir: string, options: { readonly share: boolean }): SqlLayer =>
  Layer.unwrap(Effect.gen(function*() {
    const location = resolve(dataDir, "pglite")
    const failed = failure(location)
    const endpointFile = resolve(dataDir, "pglite.endpoint")
    const published = yield* Effect.tryPromise(() => readFile(endpointFile, "utf8")).pipe(Effect.option)
    if (published._tag === "Some" && (yield* answers(published.value.trim()))) {
      if (!options.share) {
        return yield* Effect.fail(failed("another process is serving this data directory (stop it, or set DATA_DIR)"))
      }
      return overSocket(published.value.trim(), 2)
    }
    yield* Effect.tryPromise({ try: () => mkdir(location, { recursive: true }), catch: failed })
    const db = yield* open(location, {}, failed)
    return overSocket(yield* serve(db, endpointFile, failed), 4)
  }))
