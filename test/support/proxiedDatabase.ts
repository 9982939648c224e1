// A database reached through a TCP proxy the test controls (tcpProxy.ts), to cut and restore under a running server:
// a fresh database on the real PostgreSQL (TEST_DATABASE_URL), or an in-memory embedded PGlite served on a private
// socket as the server serves its own. Dropped (or closed) afterwards.
import { PGlite } from "@electric-sql/pglite"
import { type Duration, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runMigrations } from "../../adapters/postgres/Migrations.ts"
import { postgres } from "../../app/Database.ts"
import { EmbeddedPgServer } from "../../app/EmbeddedPgServer.ts"
import { pgliteTemplate, testDatabaseUrl } from "./databases.ts"
import { startTcpProxy, type TcpProxy } from "./tcpProxy.ts"

export type DatabaseKind = "postgres" | "pglite"

/** The real PostgreSQL when TEST_DATABASE_URL is set (as in CI), else the embedded one. */
export const defaultKind: DatabaseKind = testDatabaseUrl === undefined ? "pglite" : "postgres"

/** Every kind this run can reach: the embedded one always, the real one with TEST_DATABASE_URL. */
export const reachableKinds: ReadonlyArray<DatabaseKind> = testDatabaseUrl === undefined ? ["pglite"] : ["pglite", "postgres"]

export interface ProxiedDatabase {
  readonly kind: DatabaseKind
  readonly proxy: TcpProxy
  /** The database's URL through the proxy. */
  readonly url: Redacted.Redacted<string>
  /** A migrated pool through the proxy, whose connections give up opening after `connectTimeout`. */
  readonly layer: (connectTimeout: Duration.Input, maxConnections?: number) => Layer.Layer<SqlClient.SqlClient, unknown>
  readonly close: () => Promise<void>
}

interface Backend {
  readonly target: { readonly host: string; readonly port: number } | { readonly path: string }
  readonly user: string
  readonly database: string
  readonly close: () => Promise<void>
}

const realBackend = async (realUrl: string): Promise<Backend> => {
  const url = new URL(realUrl)
  const name = `zh_proxied_${Date.now()}_${randomBytes(4).toString("hex")}`
  const admin = (statement: string) =>
    Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
      Effect.provide(postgres(Redacted.make(realUrl), 1))
    ))
  await admin(`CREATE DATABASE ${name}`)
  return {
    target: { host: url.hostname, port: Number(url.port || "5432") },
    user: decodeURIComponent(url.username || "postgres"),
    database: name,
    close: async () => void (await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  }
}

const embeddedBackend = async (): Promise<Backend> => {
  const dir = mkdtempSync(join(tmpdir(), "zh-proxied-"))
  // From the migrated template: no initdb (seconds of WebAssembly); the migrations then find nothing to do.
  const db = await PGlite.create("memory://", { loadDataDir: await Effect.runPromise(pgliteTemplate) })
  const server = new EmbeddedPgServer(db)
  await server.listen(join(dir, "pg.sock"))
  return {
    target: { path: join(dir, "pg.sock") },
    user: "postgres",
    database: "postgres",
    close: async () => {
      await server.close()
      await db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

export const proxiedDatabase = async (kind: DatabaseKind = defaultKind): Promise<ProxiedDatabase> => {
  if (kind === "postgres" && testDatabaseUrl === undefined) throw new Error("a real PostgreSQL needs TEST_DATABASE_URL")
  const backend = kind === "postgres" ? await realBackend(testDatabaseUrl!) : await embeddedBackend()
  const proxy = await startTcpProxy(backend.target).catch(async (e: unknown) => {
    await backend.close()
    throw e
  })
  const url = Redacted.make(`postgres://${backend.user}@127.0.0.1:${proxy.port}/${backend.database}`)
  return {
    kind,
    proxy,
    url,
    layer: (connectTimeout, maxConnections = 5) =>
      Layer.effectDiscard(Effect.orDie(runMigrations)).pipe(
        Layer.provideMerge(postgres(url, maxConnections, { connectTimeout }))
      ),
    close: async () => {
      await proxy.close()
      await backend.close()
    }
  }
}
