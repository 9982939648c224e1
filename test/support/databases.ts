// Databases for contract and end-to-end tests: embedded PGlite always, real Postgres when TEST_DATABASE_URL is set.
import { PGlite } from "@electric-sql/pglite"
import { createHash, randomBytes } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { readFile, rename, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../../adapters/postgres/Migrations.ts"
import { embeddedPostgres, postgres, servedPglite } from "../../app/Database.ts"

export const testDatabaseUrl = process.env["TEST_DATABASE_URL"]

/** A fresh database on the real server for each use, dropped afterwards. */
export const freshPostgres = (url: string): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    const name = `zh_test_${Date.now()}_${randomBytes(4).toString("hex")}`
    const admin = (statement: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
        Effect.provide(postgres(Redacted.make(url), 1))
      )
    yield* Effect.acquireRelease(
      admin(`CREATE DATABASE ${name}`),
      () => Effect.orDie(admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    )
    return postgres(Redacted.make(url.replace(/\/[^/?]*(\?.*)?$/, `/${name}$1`)), 5)
  }))

const migrated = <E>(db: Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, E>) =>
  Layer.effectDiscard(Effect.orDie(runMigrations)).pipe(Layer.provideMerge(db))

const repoRoot = resolve(import.meta.dirname, "../..")

/**
 * A migrated, empty PGlite data directory as a tar file, made once and kept in the temp folder under a hash of the
 * migrations and of PGlite: a test database (in memory, or a process's DATA_DIR) starts from it instead of running
 * initdb (seconds of WebAssembly each time, and one more module instantiated and freed). Migrations still run on every
 * start, so a template that lacks one only costs time.
 */
export const pgliteTemplateFile = async (): Promise<string> => {
  const migrations = join(repoRoot, "adapters/postgres/migrations")
  const hash = createHash("sha256")
  hash.update(readFileSync(join(repoRoot, "node_modules/@electric-sql/pglite/package.json")))
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)))
  const file = join(tmpdir(), `zh-pglite-template-${hash.digest("hex").slice(0, 16)}.tar`)
  if (await stat(file).then(() => true, () => false)) return file
  const db = await PGlite.create("memory://")
  try {
    await Effect.runPromise(Effect.orDie(runMigrations).pipe(Effect.provide(servedPglite(db))))
    const dump = await db.dumpDataDir("none")
    // Written aside, then renamed: a worker reading it meanwhile never sees half a file.
    const partial = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`
    await writeFile(partial, new Uint8Array(await dump.arrayBuffer()))
    await rename(partial, file)
    return file
  } finally {
    await db.close()
  }
}

export const pgliteTemplate = Effect.promise(async () => new Blob([await readFile(await pgliteTemplateFile())]))

/** The SQL backends a contract suite runs against, by name. */
export const sqlBackends = (): ReadonlyArray<readonly [string, Layer.Layer<SqlClient.SqlClient, unknown>]> => [
  ["pglite", migrated(Layer.unwrap(Effect.map(pgliteTemplate, (loadDataDir) => embeddedPostgres("memory://", { loadDataDir }))))],
  ...(testDatabaseUrl === undefined ? [] : [["postgres", migrated(freshPostgres(testDatabaseUrl))] as const])
]
