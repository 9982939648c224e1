// Placement in Postgres: reservations decided under a per-cluster row lock, VMIDs claimed by primary key.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import type { Reservation } from "../../domain/vps/Vps.ts"
import { Placement } from "../../ports/Placement.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const ReservationRow = snakeColumns(
  Schema.Struct({
    holder: Schema.String,
    cluster: Schema.String,
    node: Schema.String,
    cpus: Schema.Int,
    memoryMiB: Schema.Int,
    diskGiB: Schema.Int,
    vmid: Schema.NullOr(Schema.Int)
  }),
  { memoryMiB: "memory_mib", diskGiB: "disk_gib" }
)
const VmidRow = Schema.Struct({ cluster: Schema.String, vmid: Schema.Int })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reservationOf = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: ReservationRow,
    execute: (holder) => sql`SELECT * FROM node_reservations WHERE holder = ${holder}`
  })
  const pendingOn = SqlSchema.findAll({
    Request: Schema.String,
    Result: ReservationRow,
    execute: (cluster) => sql`SELECT * FROM node_reservations WHERE cluster = ${cluster} ORDER BY created_at, holder`
  })
  const insertReservation = SqlSchema.void({
    Request: ReservationRow,
    execute: (row) => sql`INSERT INTO node_reservations ${sql.insert(row)}`
  })
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

  return Placement.of({
    reserve: (cluster, holder, choose) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO placement_locks (cluster) VALUES (${cluster}) ON CONFLICT DO NOTHING`
        // Serialises every reserver of this cluster until commit: `choose` sees all pending reservations.
        yield* sql`SELECT cluster FROM placement_locks WHERE cluster = ${cluster} FOR UPDATE`
        const existing = yield* reservationOf(holder)
        if (Option.isSome(existing)) return existing
        const chosen = choose(yield* pendingOn(cluster))
        if (Option.isNone(chosen)) return Option.none()
        const { cpus, diskGiB, memoryMiB, node } = chosen.value
        const reservation: Reservation = { holder, cluster, node, cpus, memoryMiB, diskGiB, vmid: null }
        yield* insertReservation(reservation)
        return Option.some(reservation)
      })).pipe(stored),
    releaseReservation: (holder) =>
      sql`DELETE FROM node_reservations WHERE holder = ${holder}`.pipe(Effect.asVoid, stored),
    allocateVmid: (cluster, holder, { from, to }) => allocate(cluster, holder, from, to).pipe(stored),
    markVmidForeign: (cluster, vmid) =>
      sql`INSERT INTO vmid_allocations (cluster, vmid, holder, is_foreign) VALUES (${cluster}, ${vmid}, NULL, true)
          ON CONFLICT (cluster, vmid) DO UPDATE SET holder = NULL, is_foreign = true`.pipe(Effect.asVoid, stored),
    releaseVmid: (holder) => sql`DELETE FROM vmid_allocations WHERE holder = ${holder}`.pipe(Effect.asVoid, stored),
    attachVmid: (holder, vmid) =>
      sql`UPDATE node_reservations SET vmid = ${vmid} WHERE holder = ${holder}`.pipe(Effect.asVoid, stored)
  })
})

export const layer = Layer.effect(Placement, make)
