// VPS records in Postgres: one per order (UNIQUE order_id), so a retried creation finds the first record; snapshot
// claims one per VPS and lower(name), taken under the VPS row's lock.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Vps, VpsStatus } from "../../domain/vps/Vps.ts"
import { type SnapshotClaimOutcome, VpsRecords } from "../../ports/VpsRecords.ts"

const VpsRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  subscription_id: Schema.String,
  order_id: Schema.String,
  plan_id: Schema.String,
  cluster: Schema.String,
  node: Schema.String,
  vmid: Schema.Int,
  hostname: Schema.String,
  template_id: Schema.String,
  address: Schema.String,
  status: VpsStatus,
  grace_until: Schema.NullOr(Schema.Date),
  created_at: Schema.Date,
  destroyed_at: Schema.NullOr(Schema.Date)
})

const ClaimRows = Schema.Array(Schema.Struct({ name: Schema.String, work: Schema.Literals(["create", "delete"]) }))

const toVps = (r: typeof VpsRow.Type): Vps =>
  new Vps({
    id: r.id,
    userId: r.user_id,
    subscriptionId: r.subscription_id,
    orderId: r.order_id,
    planId: r.plan_id,
    cluster: r.cluster,
    node: r.node,
    vmid: r.vmid,
    hostname: r.hostname,
    templateId: r.template_id,
    address: r.address,
    status: r.status,
    graceUntil: r.grace_until,
    createdAt: r.created_at,
    destroyedAt: r.destroyed_at
  })

/** Every column but the sealed root password. */
const columns = "id, user_id, subscription_id, order_id, plan_id, cluster, node, vmid, hostname, template_id, address, " +
  "status, grace_until, created_at, destroyed_at"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const select = sql.unsafe(`SELECT ${columns} FROM vps`)
  const many = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(VpsRow))),
      Effect.map((rows) => rows.map(toVps)),
      Effect.orDie
    )
  const one = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    Effect.map(many(query), (rows) => Option.fromNullishOr(rows[0]))

  return VpsRecords.of({
    create: (vps, sealedRootPassword) =>
      // No conflict target: with every unique index an arbiter, two racing creations for one order (different
      // ids, same subscription) end in DO NOTHING rather than tripping the subscription index first.
      sql`INSERT INTO vps ${
        sql.insert({
          id: vps.id,
          user_id: vps.userId,
          subscription_id: vps.subscriptionId,
          order_id: vps.orderId,
          plan_id: vps.planId,
          cluster: vps.cluster,
          node: vps.node,
          vmid: vps.vmid,
          hostname: vps.hostname,
          template_id: vps.templateId,
          address: vps.address,
          status: vps.status,
          grace_until: vps.graceUntil,
          root_password_sealed: sealedRootPassword,
          created_at: vps.createdAt,
          destroyed_at: vps.destroyedAt
        })
      } ON CONFLICT DO NOTHING`.pipe(
        Effect.andThen(one(sql`${select} WHERE order_id = ${vps.orderId}`)),
        // Nothing for the order means the INSERT collided on another key (id, subscription): a caller's bug.
        Effect.flatMap(Option.match({
          onNone: () => Effect.die(`VPS ${vps.id} or one for subscription ${vps.subscriptionId} exists under another order`),
          onSome: Effect.succeed
        })),
        Effect.orDie
      ),
    get: (id) => one(sql`${select} WHERE id = ${id}`),
    bySubscription: (subscriptionId) => one(sql`${select} WHERE subscription_id = ${subscriptionId}`),
    forUser: (userId) => many(sql`${select} WHERE user_id = ${userId} ORDER BY created_at, id`),
    live: many(sql`${select} WHERE status <> 'destroyed' ORDER BY created_at, id`),
    setStatus: (id, status, options = {}) => {
      // Absent options keep their column; an explicit null grace period clears it.
      const keepGrace = options.graceUntil === undefined
      const keepDestroyed = options.destroyedAt === undefined
      const grace = options.graceUntil ?? null
      const destroyed = options.destroyedAt ?? null
      return sql`UPDATE vps SET status = ${status},
                   grace_until = CASE WHEN ${keepGrace} THEN grace_until ELSE ${grace}::timestamptz END,
                   destroyed_at = CASE WHEN ${keepDestroyed} THEN destroyed_at ELSE ${destroyed}::timestamptz END
                 WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)
    },
    setSealedRootPassword: (id, sealed) =>
      sql`UPDATE vps SET root_password_sealed = ${sealed} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
    claimSnapshotName: (claim) =>
      sql.withTransaction(Effect.gen(function*() {
        // Claims of one VPS queue here until commit: each sees every claim committed before it, none half-made.
        // NO KEY UPDATE: nothing else that reads or references the VPS row waits on it.
        yield* sql`SELECT id FROM vps WHERE id = ${claim.vpsId} FOR NO KEY UPDATE`
        yield* sql`DELETE FROM snapshot_claims WHERE vps_id = ${claim.vpsId} AND expires_at <= ${claim.now}`
        const live = yield* sql`SELECT name, work FROM snapshot_claims WHERE vps_id = ${claim.vpsId}`.pipe(
          Effect.flatMap(Schema.decodeUnknownEffect(ClaimRows))
        )
        const holder = live.find((c) => c.name.toLowerCase() === claim.name.toLowerCase())
        if (holder !== undefined) return { _tag: "Held", by: holder.work } satisfies SnapshotClaimOutcome
        // Under the lock no other claim can land in between: a conflict here would be a reused claim id (a bug).
        yield* sql`INSERT INTO snapshot_claims ${
          sql.insert({
            id: claim.id,
            vps_id: claim.vpsId,
            name: claim.name,
            work: claim.work,
            claimed_at: claim.now,
            expires_at: claim.expiresAt
          })
        }`
        const othersBeingTaken = live.filter((c) => c.work === "create").map((c) => c.name)
        return { _tag: "Claimed", othersBeingTaken } satisfies SnapshotClaimOutcome
      })).pipe(Effect.orDie),
    releaseSnapshotClaim: (id) => sql`DELETE FROM snapshot_claims WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.effect(VpsRecords, make)
