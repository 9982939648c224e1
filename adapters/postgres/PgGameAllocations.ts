// Game allocation claims in Postgres: decided under a per-panel row lock, and UNIQUE (panel, allocation_id) as the
// last word, so an allocation is never held by two orders.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { AllocationClaim } from "../../domain/game/GameServer.ts"
import { GameAllocations } from "../../ports/GameAllocations.ts"

const ClaimRow = Schema.Struct({
  holder: Schema.String,
  panel: Schema.String,
  node: Schema.Int,
  allocation_id: Schema.Int,
  memory_mib: Schema.Int,
  disk_mib: Schema.Int,
  created: Schema.Boolean
})
const ClaimRows = Schema.Array(ClaimRow)

const toClaim = (r: typeof ClaimRow.Type): AllocationClaim => ({
  holder: r.holder,
  panel: r.panel,
  node: r.node,
  allocationId: r.allocation_id,
  memoryMiB: r.memory_mib,
  diskMiB: r.disk_mib,
  created: r.created
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const claims = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.flatMap(Schema.decodeUnknownEffect(ClaimRows)), Effect.map((rows) => rows.map(toClaim)))
  const heldBy = (holder: string) =>
    Effect.map(
      claims(sql`SELECT holder, panel, node, allocation_id, memory_mib, disk_mib, created
                 FROM game_allocation_claims WHERE holder = ${holder}`),
      (rows) => Option.fromNullishOr(rows[0])
    )

  return GameAllocations.of({
    claim: (panel, holder, choose) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO game_panel_locks (panel) VALUES (${panel}) ON CONFLICT DO NOTHING`
        // Serialises every claimer of this panel until commit: `choose` sees all live claims.
        yield* sql`SELECT panel FROM game_panel_locks WHERE panel = ${panel} FOR UPDATE`
        const existing = yield* heldBy(holder)
        if (Option.isSome(existing)) return existing
        const live = yield* claims(
          sql`SELECT holder, panel, node, allocation_id, memory_mib, disk_mib, created
              FROM game_allocation_claims WHERE panel = ${panel} ORDER BY claimed_at, holder`
        )
        const chosen = choose(live)
        if (Option.isNone(chosen)) return Option.none()
        const { allocationId, diskMiB, memoryMiB, node } = chosen.value
        const claim: AllocationClaim = { holder, panel, node, allocationId, memoryMiB, diskMiB, created: false }
        const inserted = yield* sql`INSERT INTO game_allocation_claims ${
          sql.insert({
            holder,
            panel,
            node,
            allocation_id: allocationId,
            memory_mib: memoryMiB,
            disk_mib: diskMiB
          })
        } ON CONFLICT DO NOTHING RETURNING holder`
        if (inserted.length === 1) return Option.some(claim)
        // The holder claimed on another panel at the same moment (its claim stands, as on a retry), or `choose`
        // picked an allocation another claim holds: a bug in the caller.
        const raced = yield* heldBy(holder)
        if (Option.isSome(raced)) return raced
        return yield* Effect.die(`allocation ${allocationId} on panel ${panel} is already held by another claim`)
      })).pipe(Effect.orDie),
    held: (holder) => heldBy(holder).pipe(Effect.orDie),
    markCreated: (holder) =>
      sql`UPDATE game_allocation_claims SET created = true WHERE holder = ${holder}`.pipe(Effect.asVoid, Effect.orDie),
    release: (holder) =>
      sql`DELETE FROM game_allocation_claims WHERE holder = ${holder}`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.effect(GameAllocations, make)
