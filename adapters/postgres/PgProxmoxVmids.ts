// ProxmoxVmids in Postgres: VMIDs claimed by primary key (a concurrent claim of the same one does nothing, and the
// claimer looks again), one per order by a unique index, the ones something else holds kept with no holder.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { ProxmoxVmids } from "../../ports/ProxmoxVmids.ts"
import { stored } from "./failures.ts"

const VmidRow = Schema.Struct({ cluster: Schema.String, vmid: Schema.Int })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const vmidOf = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: VmidRow,
    execute: (holder) => sql`SELECT cluster, vmid FROM vmid_allocations WHERE holder = ${holder}`
  })
  /** The lowest VMID of [from, to) with no row on the cluster: `from` itself, or just above a taken one. */
  const lowestFree = SqlSchema.findOneOption({
    Request: Schema.Struct({ cluster: Schema.String, from: Schema.Int, to: Schema.Int }),
    Result: Schema.Struct({ vmid: Schema.Int }),
    execute: ({ cluster, from, to }) =>
      sql`SELECT candidate AS vmid FROM (
            SELECT ${from}::int AS candidate
            UNION ALL
            SELECT a.vmid + 1 FROM vmid_allocations a WHERE a.cluster = ${cluster} AND a.vmid >= ${from}
          ) c
          WHERE candidate < ${to}::int
            AND NOT EXISTS (SELECT 1 FROM vmid_allocations b WHERE b.cluster = ${cluster} AND b.vmid = c.candidate)
          ORDER BY candidate LIMIT 1`
  })

  /** The holder's VMID on `cluster`, if it holds one; a VMID held on another cluster is a bug in the caller. */
  const heldBy = (cluster: string, holder: string) =>
    Effect.flatMap(vmidOf(holder), (row) => {
      if (Option.isNone(row)) return Effect.succeed(Option.none<number>())
      if (row.value.cluster !== cluster) {
        return Effect.die(`${holder} already holds VMID ${row.value.vmid} on cluster ${row.value.cluster}`)
      }
      return Effect.succeed(Option.some(row.value.vmid))
    })

  /**
   * A concurrent allocator may claim the same candidate first: the primary key (or the holder's unique index)
   * makes our INSERT do nothing, and we look again. Each lost round means someone else won, so this ends.
   */
  const allocate = (
    cluster: string,
    holder: string,
    from: number,
    to: number
  ): Effect.Effect<Option.Option<number>, SqlError.SqlError | Schema.SchemaError> =>
    Effect.gen(function*() {
      const held = yield* heldBy(cluster, holder)
      if (Option.isSome(held)) return held
      const candidate = yield* lowestFree({ cluster, from, to })
      if (Option.isNone(candidate)) return Option.none()
      const claimed = yield* sql`INSERT INTO vmid_allocations (cluster, vmid, holder)
                                 VALUES (${cluster}, ${candidate.value.vmid}, ${holder})
                                 ON CONFLICT DO NOTHING RETURNING vmid`
      return claimed.length === 1 ? Option.some(candidate.value.vmid) : yield* allocate(cluster, holder, from, to)
    })

  const holders = SqlSchema.findAll({
    Request: Schema.String,
    Result: Schema.Struct({ vmid: Schema.Int, holder: Schema.String }),
    execute: (cluster) => sql`SELECT vmid, holder FROM vmid_allocations WHERE cluster = ${cluster} AND holder IS NOT NULL`
  })

  return ProxmoxVmids.of({
    allocate: (cluster, order, { from, to }) => allocate(cluster, order, from, to).pipe(stored),
    setAside: (cluster, vmid) =>
      sql`INSERT INTO vmid_allocations (cluster, vmid, holder, is_foreign) VALUES (${cluster}, ${vmid}, NULL, true)
          ON CONFLICT (cluster, vmid) DO UPDATE SET holder = NULL, is_foreign = true`.pipe(Effect.asVoid, stored),
    release: (order) => sql`DELETE FROM vmid_allocations WHERE holder = ${order}`.pipe(Effect.asVoid, stored),
    holders: (cluster) => holders(cluster).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.vmid, r.holder]))), stored)
  })
})

export const layer = Layer.effect(ProxmoxVmids, make)
