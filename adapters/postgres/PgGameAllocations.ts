// Game allocation claims in Postgres: decided under a per-panel row lock, and UNIQUE (panel, allocation_id) as the
// last word, so an allocation is never held by two orders.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { GameAllocations } from "../../ports/GameAllocations.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const ClaimRow = snakeColumns(
  Schema.Struct({
    holder: Schema.String,
    panel: Schema.String,
    node: Schema.Int,
    allocationId: Schema.Int,
    memoryMiB: Schema.Int,
    diskMiB: Schema.Int,
    created: Schema.Boolean
  }),
  { memoryMiB: "memory_mib", diskMiB: "disk_mib" }
)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const heldBy = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: ClaimRow,
    execute: (holder) => sql`SELECT * FROM game_allocation_claims WHERE holder = ${holder}`
  })
  const onPanel = SqlSchema.findAll({
    Request: Schema.String,
    Result: ClaimRow,
    execute: (panel) => sql`SELECT * FROM game_allocation_claims WHERE panel = ${panel} ORDER BY claimed_at, holder`
  })
  const insert = SqlSchema.findAll({
    Request: ClaimRow,
    Result: Schema.Struct({ holder: Schema.String }),
    execute: (row) => sql`INSERT INTO game_allocation_claims ${sql.insert(row)} ON CONFLICT DO NOTHING RETURNING holder`
  })

  return GameAllocations.of({
    claim: (panel, holder, choose) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO game_panel_locks (panel) VALUES (${panel}) ON CONFLICT DO NOTHING`
        // Serialises every claimer of this panel until commit: `choose` sees all live claims.
        yield* sql`SELECT panel FROM game_panel_locks WHERE panel = ${panel} FOR UPDATE`
        const existing = yield* heldBy(holder)
        if (Option.isSome(existing)) return existing
        const chosen = choose(yield* onPanel(panel))
        if (Option.isNone(chosen)) return Option.none()
        const { allocationId, diskMiB, memoryMiB, node } = chosen.value
        const claim = { holder, panel, node, allocationId, memoryMiB, diskMiB, created: false }
        if ((yield* insert(claim)).length === 1) return Option.some(claim)
        // The holder claimed on another panel at the same moment (its claim stands, as on a retry), or `choose`
        // picked an allocation another claim holds: a bug in the caller.
        const raced = yield* heldBy(holder)
        if (Option.isSome(raced)) return raced
        return yield* Effect.die(`allocation ${claim.allocationId} on panel ${panel} is already held by another claim`)
      })).pipe(stored),
    onPanel: (panel) => onPanel(panel).pipe(stored),
    held: (holder) => heldBy(holder).pipe(stored),
    markCreated: (holder) =>
      sql`UPDATE game_allocation_claims SET created = true WHERE holder = ${holder}`.pipe(Effect.asVoid, stored),
    release: (holder) =>
      sql`DELETE FROM game_allocation_claims WHERE holder = ${holder}`.pipe(Effect.asVoid, stored)
  })
})

export const layer = Layer.effect(GameAllocations, make)
