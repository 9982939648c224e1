// Game server records in Postgres: one per order (UNIQUE order_id), so a retried creation finds the first record.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { GameServer, GameServerStatus } from "../../domain/game/GameServer.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"

const GameServerRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  subscription_id: Schema.String,
  order_id: Schema.String,
  plan_id: Schema.String,
  panel: Schema.String,
  panel_server_id: Schema.Int,
  uuid: Schema.String,
  identifier: Schema.String,
  name: Schema.String,
  node: Schema.Int,
  allocation_id: Schema.Int,
  address: Schema.String,
  status: GameServerStatus,
  grace_until: Schema.NullOr(Schema.Date),
  created_at: Schema.Date,
  deleted_at: Schema.NullOr(Schema.Date)
})

const toGameServer = (r: typeof GameServerRow.Type): GameServer =>
  new GameServer({
    id: r.id,
    userId: r.user_id,
    subscriptionId: r.subscription_id,
    orderId: r.order_id,
    planId: r.plan_id,
    panel: r.panel,
    panelServerId: r.panel_server_id,
    uuid: r.uuid,
    identifier: r.identifier,
    name: r.name,
    node: r.node,
    allocationId: r.allocation_id,
    address: r.address,
    status: r.status,
    graceUntil: r.grace_until,
    createdAt: r.created_at,
    deletedAt: r.deleted_at
  })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const select = sql`SELECT * FROM game_servers`
  const many = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(GameServerRow))),
      Effect.map((rows) => rows.map(toGameServer)),
      Effect.orDie
    )
  const one = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    Effect.map(many(query), (rows) => Option.fromNullishOr(rows[0]))

  return GameServerRecords.of({
    create: (server) =>
      // No conflict target: with every unique index an arbiter, two racing creations for one order (different
      // ids, same subscription and identifier) end in DO NOTHING rather than tripping another index first.
      sql`INSERT INTO game_servers ${
        sql.insert({
          id: server.id,
          user_id: server.userId,
          subscription_id: server.subscriptionId,
          order_id: server.orderId,
          plan_id: server.planId,
          panel: server.panel,
          panel_server_id: server.panelServerId,
          uuid: server.uuid,
          identifier: server.identifier,
          name: server.name,
          node: server.node,
          allocation_id: server.allocationId,
          address: server.address,
          status: server.status,
          grace_until: server.graceUntil,
          created_at: server.createdAt,
          deleted_at: server.deletedAt
        })
      } ON CONFLICT DO NOTHING`.pipe(
        Effect.andThen(one(sql`${select} WHERE order_id = ${server.orderId}`)),
        // Nothing for the order means the INSERT collided on another key (id, subscription, identifier): a bug.
        Effect.flatMap(Option.match({
          onNone: () =>
            Effect.die(
              `game server ${server.id}, one for subscription ${server.subscriptionId} or identifier ` +
                `${server.identifier} exists under another order`
            ),
          onSome: Effect.succeed
        })),
        Effect.orDie
      ),
    get: (id) => one(sql`${select} WHERE id = ${id}`),
    byIdentifier: (identifier) => one(sql`${select} WHERE identifier = ${identifier}`),
    bySubscription: (subscriptionId) => one(sql`${select} WHERE subscription_id = ${subscriptionId}`),
    forUser: (userId) => many(sql`${select} WHERE user_id = ${userId} ORDER BY created_at, id`),
    live: many(sql`${select} WHERE status <> 'deleted' ORDER BY created_at, id`),
    setStatus: (id, status, options = {}) => {
      // Absent options keep their column; an explicit null grace period clears it.
      const keepGrace = options.graceUntil === undefined
      const keepDeleted = options.deletedAt === undefined
      const grace = options.graceUntil ?? null
      const deleted = options.deletedAt ?? null
      return sql`UPDATE game_servers SET status = ${status},
                   grace_until = CASE WHEN ${keepGrace} THEN grace_until ELSE ${grace}::timestamptz END,
                   deleted_at = CASE WHEN ${keepDeleted} THEN deleted_at ELSE ${deleted}::timestamptz END
                 WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)
    }
  })
})

export const layer = Layer.effect(GameServerRecords, make)
