// Address assignment in Postgres: one UPDATE that takes the first free address of the first pool that has one,
// skipping rows other assignments hold locked, so concurrent callers never get the same address.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { IpAddresses, PoolExhausted } from "../../ports/IpAddresses.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const AssignedRow = snakeColumns(Schema.Struct({
  pool: Schema.String,
  address: Schema.String,
  prefixLength: Schema.Int,
  gateway: Schema.String,
  bridge: Schema.String
}))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const heldBy = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: AssignedRow,
    execute: (holder) =>
      sql`SELECT a.pool_id AS pool, host(a.address) AS address, masklen(p.cidr) AS prefix_length, host(p.gateway) AS gateway, p.bridge
          FROM ip_addresses a JOIN ip_pools p ON p.id = a.pool_id WHERE a.holder = ${holder}`
  })
  const held = (holder: string) => heldBy(holder).pipe(Effect.map(Option.getOrUndefined), stored)

  // Pools rank in the caller's order, addresses in numeric order (inet); retired pools and withdrawn addresses
  // are never taken. The inner SELECT locks the row it picks; SKIP LOCKED moves past rows others are taking.
  const take = SqlSchema.findOneOption({
    Request: Schema.Struct({ holder: Schema.String, pools: Schema.Array(Schema.String) }),
    Result: AssignedRow,
    execute: ({ holder, pools }) =>
      sql`WITH wanted AS (
            SELECT value AS pool_id, ordinality AS rank FROM jsonb_array_elements_text(${JSON.stringify(pools)}::jsonb) WITH ORDINALITY
          )
          UPDATE ip_addresses a SET holder = ${holder}, assigned_at = now()
          FROM ip_pools p
          WHERE p.id = a.pool_id AND a.holder IS NULL AND (a.pool_id, a.address) = (
            SELECT f.pool_id, f.address FROM ip_addresses f JOIN wanted w ON w.pool_id = f.pool_id
            WHERE f.holder IS NULL AND f.withdrawn_at IS NULL
              AND f.pool_id IN (SELECT id FROM ip_pools WHERE retired_at IS NULL)
            ORDER BY w.rank, f.address
            LIMIT 1
            FOR UPDATE OF f SKIP LOCKED)
          RETURNING a.pool_id AS pool, host(a.address) AS address, masklen(p.cidr) AS prefix_length,
            host(p.gateway) AS gateway, p.bridge`
  })

  return IpAddresses.of({
    assign: (holder, pools) =>
      Effect.gen(function*() {
        const existing = yield* held(holder)
        if (existing !== undefined) return existing
        const taken = yield* take({ holder, pools }).pipe(
          Effect.map(Option.getOrUndefined),
          // The same holder assigned concurrently: the unique index on holder lets one win; hand back its address.
          Effect.catchIf((e) => e._tag === "SqlError" && e.reason._tag === "UniqueViolation", () => held(holder)),
          stored
        )
        if (taken === undefined) return yield* new PoolExhausted({ pools })
        return taken
      }),
    release: (holder) =>
      sql`UPDATE ip_addresses SET holder = NULL, assigned_at = NULL WHERE holder = ${holder}`.pipe(Effect.asVoid, stored),
    held
  })
})

export const layer = Layer.effect(IpAddresses, make)
