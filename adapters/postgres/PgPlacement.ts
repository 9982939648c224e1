// Placement in Postgres: reservations decided under a per-cluster row lock, VMIDs claimed by primary key.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { Reservation } from "../../domain/vps/Vps.ts"
import { Placement } from "../../ports/Placement.ts"

const ReservationRow = Schema.Struct({
  holder: Schema.String,
  cluster: Schema.String,
  node: Schema.String,
  cpus: Schema.Int,
  memory_mib: Schema.Int,
  disk_gib: Schema.Int,
  vmid: Schema.NullOr(Schema.Int)
})
const ReservationRows = Schema.Array(ReservationRow)
const Held = Schema.Array(Schema.Struct({ cluster: Schema.String, vmid: Schema.Int }))
const Candidate = Schema.Array(Schema.Struct({ vmid: Schema.NullOr(Schema.Int) }))

const toReservation = (r: typeof ReservationRow.Type): Reservation => ({
  holder: r.holder,
  cluster: r.cluster,
  node: r.node,
  cpus: r.cpus,
  memoryMiB: r.memory_mib,
  diskGiB: r.disk_gib,
  vmid: r.vmid
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reservations = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.flatMap(Schema.decodeUnknownEffect(ReservationRows)), Effect.map((rows) => rows.map(toReservation)))

  /** The holder's VMID on `cluster`, if it holds one; a VMID held on another cluster is a bug in the caller. */
  const heldBy = (cluster: string, holder: string) =>
    sql`SELECT cluster, vmid FROM vmid_allocations WHERE holder = ${holder}`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Held)),
      Effect.flatMap((rows) => {
        const row = rows[0]
        if (row === undefined) return Effect.succeed(Option.none<number>())
        if (row.cluster !== cluster) return Effect.die(`${holder} already holds VMID ${row.vmid} on cluster ${row.cluster}`)
        return Effect.succeed(Option.some(row.vmid))
      })
    )

  /** The lowest VMID of [from, to) with no row on the cluster: `from` itself, or just above a taken one. */
  const lowestFree = (cluster: string, from: number, to: number) =>
    sql`SELECT min(candidate) AS vmid FROM (
          SELECT ${from}::int AS candidate
          UNION ALL
          SELECT a.vmid + 1 FROM vmid_allocations a WHERE a.cluster = ${cluster} AND a.vmid >= ${from}
        ) c
        WHERE candidate < ${to}::int
          AND NOT EXISTS (SELECT 1 FROM vmid_allocations b WHERE b.cluster = ${cluster} AND b.vmid = c.candidate)`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Candidate)),
      Effect.map((rows) => Option.fromNullishOr(rows[0]?.vmid))
    )

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
      const candidate = yield* lowestFree(cluster, from, to)
      if (Option.isNone(candidate)) return candidate
      const claimed = yield* sql`INSERT INTO vmid_allocations (cluster, vmid, holder)
                                 VALUES (${cluster}, ${candidate.value}, ${holder})
                                 ON CONFLICT DO NOTHING RETURNING vmid`
      return claimed.length === 1 ? candidate : yield* allocate(cluster, holder, from, to)
    })

  return Placement.of({
    reserve: (cluster, holder, choose) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO placement_locks (cluster) VALUES (${cluster}) ON CONFLICT DO NOTHING`
        // Serialises every reserver of this cluster until commit: `choose` sees all pending reservations.
        yield* sql`SELECT cluster FROM placement_locks WHERE cluster = ${cluster} FOR UPDATE`
        const existing = yield* reservations(sql`SELECT * FROM node_reservations WHERE holder = ${holder}`)
        if (existing[0] !== undefined) return Option.some(existing[0])
        const pending = yield* reservations(
          sql`SELECT * FROM node_reservations WHERE cluster = ${cluster} ORDER BY created_at, holder`
        )
        const chosen = choose(pending)
        if (Option.isNone(chosen)) return Option.none()
        const reservation: Reservation = { ...chosen.value, holder, cluster, vmid: null }
        yield* sql`INSERT INTO node_reservations ${
          sql.insert({
            holder,
            cluster,
            node: reservation.node,
            cpus: reservation.cpus,
            memory_mib: reservation.memoryMiB,
            disk_gib: reservation.diskGiB
          })
        }`
        return Option.some(reservation)
      })).pipe(Effect.orDie),
    releaseReservation: (holder) =>
      sql`DELETE FROM node_reservations WHERE holder = ${holder}`.pipe(Effect.asVoid, Effect.orDie),
    allocateVmid: (cluster, holder, { from, to }) => allocate(cluster, holder, from, to).pipe(Effect.orDie),
    markVmidForeign: (cluster, vmid) =>
      sql`INSERT INTO vmid_allocations (cluster, vmid, holder, is_foreign) VALUES (${cluster}, ${vmid}, NULL, true)
          ON CONFLICT (cluster, vmid) DO UPDATE SET holder = NULL, is_foreign = true`.pipe(Effect.asVoid, Effect.orDie),
    releaseVmid: (holder) => sql`DELETE FROM vmid_allocations WHERE holder = ${holder}`.pipe(Effect.asVoid, Effect.orDie),
    attachVmid: (holder, vmid) =>
      sql`UPDATE node_reservations SET vmid = ${vmid} WHERE holder = ${holder}`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.effect(Placement, make)
