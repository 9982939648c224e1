// In-memory GameServerRecords: one record per order, so a retried creation gets the first one back.
import { Effect, Layer, Option, Ref } from "effect"
import { GameServer } from "../../domain/game/GameServer.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"

/** The Postgres adapter's order: created_at, then id. */
const byCreation = (a: GameServer, b: GameServer) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, GameServer>())
  const find = (keep: (server: GameServer) => boolean) =>
    Effect.map(Ref.get(rows), (m) => Option.fromNullishOr([...m.values()].find(keep)))
  return GameServerRecords.of({
    create: (server) =>
      Ref.modify(rows, (m): readonly [GameServer | undefined, Map<string, GameServer>] => {
        const existing = [...m.values()].find((s) => s.orderId === server.orderId)
        if (existing !== undefined) return [existing, m]
        // Like the table's other unique keys: a second record under the same id, subscription or identifier is a bug.
        const clash = m.has(server.id) ||
          [...m.values()].some((s) => s.subscriptionId === server.subscriptionId || s.identifier === server.identifier)
        if (clash) return [undefined, m]
        const created = new GameServer({ ...server })
        return [created, new Map(m).set(server.id, created)]
      }).pipe(Effect.flatMap((created) =>
        created === undefined
          ? Effect.die(
            `game server ${server.id}, one for subscription ${server.subscriptionId} or identifier ` +
              `${server.identifier} exists under another order`
          )
          : Effect.succeed(created)
      )),
    get: (id) => find((s) => s.id === id),
    byIdentifier: (identifier) => find((s) => s.identifier === identifier),
    bySubscription: (subscriptionId) => find((s) => s.subscriptionId === subscriptionId),
    forUser: (userId) => Effect.map(Ref.get(rows), (m) => [...m.values()].filter((s) => s.userId === userId).sort(byCreation)),
    live: Effect.map(Ref.get(rows), (m) => [...m.values()].filter((s) => s.status !== "deleted").sort(byCreation)),
    setStatus: (id, status, options = {}) =>
      Ref.update(rows, (m) => {
        const server = m.get(id)
        if (server === undefined) return m
        return new Map(m).set(
          id,
          new GameServer({
            ...server,
            status,
            graceUntil: options.graceUntil === undefined ? server.graceUntil : options.graceUntil,
            deletedAt: options.deletedAt ?? server.deletedAt
          })
        )
      })
  })
})

export const layer = Layer.effect(GameServerRecords, make)
