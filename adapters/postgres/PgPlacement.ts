// Placement in Postgres: reservations decided under a per-cluster row lock.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
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
    diskGiB: Schema.Int
  }),
  { memoryMiB: "memory_mib", diskGiB: "disk_gib" }
)

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
        const reservation: Reservation = { holder, cluster, node, cpus, memoryMiB, diskGiB }
        yield* insertReservation(reservation)
        return Option.some(reservation)
      })).pipe(stored),
    releaseReservation: (holder) =>
      sql`DELETE FROM node_reservations WHERE holder = ${holder}`.pipe(Effect.asVoid, stored),
    pending: (cluster) => pendingOn(cluster).pipe(stored)
  })
})

export const layer = Layer.effect(Placement, make)
