// The SQL connection: a real Postgres when DATABASE_URL is set, otherwise an embedded PGlite kept in DATA_DIR.
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, Schema } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

export class EmbeddedDatabaseFailed extends Schema.TaggedError<EmbeddedDatabaseFailed>()("EmbeddedDatabaseFailed", {
  location: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The embedded database in ${this.location} cannot start: ${this.detail}`
  }
}

export const postgres = (url: Redacted.Redacted<string>, maxConnections: number) =>
  PgClient.layer({ url, maxConnections, applicationName: "zh-hosting" })

/**
 * PGlite is a single-session Postgres in WebAssembly. It is served over the wire protocol on a private Unix
 * socket (a fresh 0700 temporary directory, so no other local user or TCP client can reach it) and the same
 * @effect/sql-pg repositories talk to it through one connection; concurrent statements queue.
 */
export const embeddedPostgres = (
  location: string
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, EmbeddedDatabaseFailed | SqlError.SqlError> =>
  Layer.unwrap(Effect.gen(function*() {
    const failed = (e: unknown) =>
      new EmbeddedDatabaseFailed({ location, detail: e instanceof Error ? e.message : String(e) })
    if (location !== "memory://") {
      yield* Effect.tryPromise({ try: () => mkdir(location, { recursive: true }), catch: failed })
    }
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => PGlite.create(location), catch: failed }),
      (db) => Effect.promise(() => db.close())
    )
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "zh-pglite-"))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const socketPath = join(dir, "pg.sock")
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 1 })
          await server.start()
          return server
        },
        catch: failed
      }),
      (server) => Effect.promise(() => server.stop())
    )
    return PgClient.layer({
      stream: () => connect(socketPath),
      username: "postgres",
      database: "postgres",
      maxConnections: 1,
      applicationName: "zh-hosting"
    })
  }))
