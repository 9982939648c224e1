// Sealed upstream credentials in Postgres; only sealed values ever reach this table.
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const SecretRow = snakeColumns(Schema.Struct({ name: Schema.String, sealed: Schema.String, updatedAt: Schema.Date }))
const ListedRow = snakeColumns(Schema.Struct({ name: Schema.String, updatedAt: Schema.Date }))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const put = SqlSchema.void({
    Request: SecretRow,
    execute: (row) =>
      sql`INSERT INTO upstream_secrets ${sql.insert(row)}
          ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`
  })
  const byName = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: SecretRow,
    execute: (name) => sql`SELECT name, sealed, updated_at FROM upstream_secrets WHERE name = ${name}`
  })
  const all = SqlSchema.findAll({
    Request: Schema.Void,
    Result: SecretRow,
    execute: () => sql`SELECT name, sealed, updated_at FROM upstream_secrets ORDER BY name`
  })
  const list = SqlSchema.findAll({
    Request: Schema.Void,
    Result: ListedRow,
    execute: () => sql`SELECT name, updated_at FROM upstream_secrets ORDER BY name`
  })
  return UpstreamSecrets.of({
    put: (name, sealed, updatedAt) => put({ name, sealed, updatedAt }).pipe(stored),
    get: (name) => byName(name).pipe(stored),
    list: list(undefined).pipe(stored),
    remove: (name) =>
      sql`DELETE FROM upstream_secrets WHERE name = ${name} RETURNING name`.pipe(
        Effect.map((rows) => rows.length > 0),
        stored
      ),
    all: all(undefined).pipe(stored)
  })
})

export const layer = Layer.effect(UpstreamSecrets, make)
