// VPS records in Postgres: one per order (UNIQUE order_id), so a retried creation finds the first record; snapshot
// claims one per VPS and lower(name), taken under the VPS row's lock.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Vps } from "../../domain/vps/Vps.ts"
import { type SnapshotClaimOutcome, VpsRecords } from "../../ports/VpsRecords.ts"
import { stored } from "./failures.ts"
import { setLifeStatus } from "./lifeStatus.ts"
import { snakeColumns } from "./columns.ts"

const VpsRow = snakeColumns(Vps)
const NewVpsRow = snakeColumns(Schema.Struct({ ...Vps.fields, rootPasswordSealed: Schema.String }))
const SnapshotClaimRow = snakeColumns(Schema.Struct({
  id: Schema.String,
  vpsId: Schema.String,
  name: Schema.String,
  work: Schema.Literals(["create", "delete"]),
  claimedAt: Schema.Date,
  expiresAt: Schema.Date
}))

/** Every column but the sealed root password. */
const columns = "id, user_id, subscription_id, order_id, plan_id, cluster, node, vmid, hostname, template_id, address, " +
  "status, grace_until, created_at, destroyed_at"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const lifeStatus = setLifeStatus(sql, "vps", "destroyed_at")
  const select = sql.unsafe(`SELECT ${columns} FROM vps`)
  // No conflict target: with every unique index an arbiter, two racing creations for one order (different ids,
  // same subscription) end in DO NOTHING rather than tripping the subscription index first.
  const insert = SqlSchema.void({
    Request: NewVpsRow,
    execute: (row) => sql`INSERT INTO vps ${sql.insert(row)} ON CONFLICT DO NOTHING`
  })
  const findBy = (column: "id" | "order_id" | "subscription_id") =>
    SqlSchema.findOneOption({
      Request: Schema.String,
      Result: VpsRow,
      execute: (value) => sql`${select} WHERE ${sql(column)} = ${value}`
    })
  const [byId, byOrder, bySubscription] = [findBy("id"), findBy("order_id"), findBy("subscription_id")]
  const forUser = SqlSchema.findAll({
    Request: Schema.String,
    Result: VpsRow,
    execute: (userId) => sql`${select} WHERE user_id = ${userId} ORDER BY created_at, id`
  })
  const live = SqlSchema.findAll({
    Request: Schema.Void,
    Result: VpsRow,
    execute: () => sql`${select} WHERE status <> 'destroyed' ORDER BY created_at, id`
  })
  const liveClaims = SqlSchema.findAll({
    Request: Schema.String,
    Result: SnapshotClaimRow,
    execute: (vpsId) => sql`SELECT * FROM snapshot_claims WHERE vps_id = ${vpsId}`
  })
  const insertClaim = SqlSchema.void({
    Request: SnapshotClaimRow,
    execute: (row) => sql`INSERT INTO snapshot_claims ${sql.insert(row)}`
  })

  return VpsRecords.of({
    create: (vps, rootPasswordSealed) =>
      insert({ ...vps, rootPasswordSealed }).pipe(
        Effect.andThen(byOrder(vps.orderId)),
        // Nothing for the order means the INSERT collided on another key (id, subscription): a caller's bug.
        Effect.flatMap(Option.match({
          onNone: () => Effect.die(`VPS ${vps.id} or one for subscription ${vps.subscriptionId} exists under another order`),
          onSome: Effect.succeed
        })),
        stored
      ),
    get: (id) => byId(id).pipe(stored),
    bySubscription: (subscriptionId) => bySubscription(subscriptionId).pipe(stored),
    forUser: (userId) => forUser(userId).pipe(stored),
    live: live(undefined).pipe(stored),
    setStatus: (id, status, options = {}) => lifeStatus(id, status, { graceUntil: options.graceUntil, endedAt: options.destroyedAt }),
    setSealedRootPassword: (id, sealed) =>
      sql`UPDATE vps SET root_password_sealed = ${sealed} WHERE id = ${id}`.pipe(Effect.asVoid, stored),
    claimSnapshotName: ({ now, ...claim }) =>
      sql.withTransaction(Effect.gen(function*() {
        // Claims of one VPS queue here until commit: each sees every claim committed before it, none half-made.
        // NO KEY UPDATE: nothing else that reads or references the VPS row waits on it.
        yield* sql`SELECT id FROM vps WHERE id = ${claim.vpsId} FOR NO KEY UPDATE`
        yield* sql`DELETE FROM snapshot_claims WHERE vps_id = ${claim.vpsId} AND expires_at <= ${now}`
        const live = yield* liveClaims(claim.vpsId)
        const holder = live.find((c) => c.name.toLowerCase() === claim.name.toLowerCase())
        if (holder !== undefined) return { _tag: "Held", by: holder.work } satisfies SnapshotClaimOutcome
        // Under the lock no other claim can land in between: a conflict here would be a reused claim id (a bug).
        yield* insertClaim({ ...claim, claimedAt: now })
        const othersBeingTaken = live.filter((c) => c.work === "create").map((c) => c.name)
        return { _tag: "Claimed", othersBeingTaken } satisfies SnapshotClaimOutcome
      })).pipe(stored),
    releaseSnapshotClaim: (id) => sql`DELETE FROM snapshot_claims WHERE id = ${id}`.pipe(Effect.asVoid, stored)
  })
})

export const layer = Layer.effect(VpsRecords, make)
