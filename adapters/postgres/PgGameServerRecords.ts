// Game server records in Postgres: one per order (UNIQUE order_id), so a retried creation finds the first record.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { GameServer } from "../../domain/game/GameServer.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { stored } from "./failures.ts"
import { setLifeStatus } from "./lifeStatus.ts"
import { snakeColumns } from "./columns.ts"

const GameServerRow = snakeColumns(GameServer)
const NewGameServerRow = snakeColumns(Schema.Struct(GameServer.fields))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const lifeStatus = setLifeStatus(sql, "game_servers", "deleted_at")
  // No conflict target: with every unique index an arbiter, two racing creations for one order (different ids,
  // same subscription and identifier) end in DO NOTHING rather than tripping another index first.
  const insert = SqlSchema.void({
    Request: NewGameServerRow,
    execute: (row) => sql`INSERT INTO game_servers ${sql.insert(row)} ON CONFLICT DO NOTHING`
  })
  const findBy = (column: "id" | "order_id" | "identifier" | "subscription_id") =>
    SqlSchema.findOneOption({
      Request: Schema.String,
      Result: GameServerRow,
      execute: (value) => sql`SELECT * FROM game_servers WHERE ${sql(column)} = ${value}`
    })
  const [byId, byOrder, byIdentifier, bySubscription] = [findBy("id"), findBy("order_id"), findBy("identifier"), findBy("subscription_id")]
  const forUser = SqlSchema.findAll({
    Request: Schema.String,
    Result: GameServerRow,
    execute: (userId) => sql`SELECT * FROM game_servers WHERE user_id = ${userId} ORDER BY created_at, id`
  })
  const live = SqlSchema.findAll({
    Request: Schema.Void,
    Result: GameServerRow,
    execute: () => sql`SELECT * FROM game_servers WHERE status <> 'deleted' ORDER BY created_at, id`
  })

  return GameServerRecords.of({
    create: (server) =>
      insert(server).pipe(
        Effect.andThen(byOrder(server.orderId)),
        // Nothing for the order means the INSERT collided on another key (id, subscription, identifier): a bug.
        Effect.flatMap(Option.match({
          onNone: () =>
            Effect.die(
              `game server ${server.id}, one for subscription ${server.subscriptionId} or identifier ` +
                `${server.identifier} exists under another order`
            ),
          onSome: Effect.succeed
        })),
        stored
      ),
    get: (id) => byId(id).pipe(stored),
    byIdentifier: (identifier) => byIdentifier(identifier).pipe(stored),
    bySubscription: (subscriptionId) => bySubscription(subscriptionId).pipe(stored),
    forUser: (userId) => forUser(userId).pipe(stored),
    live: live(undefined).pipe(stored),
    setStatus: (id, status, options = {}) => lifeStatus(id, status, { graceUntil: options.graceUntil, endedAt: options.deletedAt })
  })
})

export const layer = Layer.effect(GameServerRecords, make)
