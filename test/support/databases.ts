// Databases for contract and end-to-end tests: embedded PGlite always, real Postgres when TEST_DATABASE_URL is set.
import { randomBytes } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../../adapters/postgres/Migrations.ts"
import { embeddedPostgres, postgres } from "../../app/Database.ts"

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

/** The SQL backends a contract suite runs against, by name. */
export const sqlBackends = (): ReadonlyArray<readonly [string, Layer.Layer<SqlClient.SqlClient, unknown>]> => [
  ["pglite", migrated(embeddedPostgres("memory://"))],
  ...(testDatabaseUrl === undefined ? [] : [["postgres", migrated(freshPostgres(testDatabaseUrl))] as const])
]
