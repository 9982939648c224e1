// The SQL connection: a real Postgres when DATABASE_URL is set, otherwise an embedded PGlite kept in DATA_DIR.
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const postgres = (url: Redacted.Redacted<string>, maxConnections: number) =>
  PgClient.layer({ url, maxConnections, applicationName: "zh-hosting" })

/**
 * PGlite is a single-session Postgres in WebAssembly. It is served over the wire protocol on a private Unix
 * socket (a fresh 0700 temporary directory, so no other local user or TCP client can reach it) and the same
 * @effect/sql-pg repositories talk to it through one connection; concurrent statements queue.
 */
export const embeddedPostgres = (
  location: string
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    if (location !== "memory://") yield* Effect.promise(() => mkdir(location, { recursive: true }))
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise(() => PGlite.create(location)),
      (db) => Effect.promise(() => db.close())
    )
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "zh-pglite-"))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const socketPath = join(dir, "pg.sock")
    yield* Effect.acquireRelease(
      Effect.tryPromise(async () => {
        const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 1 })
        await server.start()
        return server
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
