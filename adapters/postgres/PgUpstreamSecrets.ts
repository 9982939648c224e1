// Sealed upstream credentials in Postgres; only sealed values ever reach this table.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"

const Row = Schema.Struct({ name: Schema.String, sealed: Schema.String, updated_at: Schema.Date })
const Rows = Schema.Array(Row)
const toStored = (r: typeof Row.Type) => ({ name: r.name, sealed: r.sealed, updatedAt: r.updated_at })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const decode = Schema.decodeUnknownEffect(Rows)
  return UpstreamSecrets.of({
    put: (name, sealed, now) =>
      sql`INSERT INTO upstream_secrets (name, sealed, updated_at) VALUES (${name}, ${sealed}, ${now})
          ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    get: (name) =>
      sql`SELECT name, sealed, updated_at FROM upstream_secrets WHERE name = ${name}`.pipe(
        Effect.flatMap(decode),
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toStored)),
        Effect.orDie
      ),
    list: sql`SELECT name, sealed, updated_at FROM upstream_secrets ORDER BY name`.pipe(
      Effect.flatMap(decode),
      Effect.map((rows) => rows.map((r) => ({ name: r.name, updatedAt: r.updated_at }))),
      Effect.orDie
    ),
    remove: (name) =>
      sql`DELETE FROM upstream_secrets WHERE name = ${name} RETURNING name`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    all: sql`SELECT name, sealed, updated_at FROM upstream_secrets ORDER BY name`.pipe(
      Effect.flatMap(decode),
      Effect.map((rows) => rows.map(toStored)),
      Effect.orDie
    )
  })
})

export const layer = Layer.effect(UpstreamSecrets, make)
