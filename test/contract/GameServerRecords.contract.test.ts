// One GameServerRecords contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryGameServerRecords from "../../adapters/fake/MemoryGameServerRecords.ts"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgGameServerRecords from "../../adapters/postgres/PgGameServerRecords.ts"
import * as PgOrders from "../../adapters/postgres/PgOrders.ts"
import * as PgSubscriptions from "../../adapters/postgres/PgSubscriptions.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { GameServer, GameServerId } from "../../domain/game/GameServer.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { Orders } from "../../ports/Orders.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { subscriptionOf } from "../support/subscriptionMother.ts"
import { newUser } from "../support/userMother.ts"

const builtAt = new Date("2026-03-01T10:00:00.000Z")
const later = (minutes: number) => new Date(builtAt.getTime() + minutes * 60_000)

/** A panel identifier no other test uses (tests share one backend): 8 hex characters, as the panel makes them. */
const freshIdentifier = () => randomUUID().slice(0, 8)

const customer = Effect.map(
  Effect.flatMap(Users, (users) => users.insert(newUser(`game-${randomUUID()}@example.com`))),
  (user) => user.id
)

/** An order and its subscription for `userId` (game server records reference both), and the record to create. */
const provisioned = (userId: string, createdAt: Date = builtAt) =>
  Effect.gen(function*() {
    const subscription = yield* subscriptionOf(userId, {
      at: createdAt,
      periodEnd: later(60 * 24 * 31),
      plan: { id: "mc-2g", kind: "game", steps: 5 }
    })
    const uuid = randomUUID()
    return new GameServer({
      id: GameServerId.make(randomUUID()),
      userId,
      subscriptionId: subscription.id,
      orderId: subscription.orderId,
      planId: "mc-2g",
      panel: "ptero-par",
      panelServerId: 42,
      uuid,
      identifier: uuid.slice(0, 8),
      name: "Survival",
      node: 3,
      allocationId: 401,
      address: "play.example.com:25565",
      status: "active",
      graceUntil: null,
      createdAt,
      deletedAt: null
    })
  })

const current = (id: string) => Effect.map(Effect.flatMap(GameServerRecords, (records) => records.get(id)), Option.getOrThrow)

const isDefect = <A, E>(exit: Exit.Exit<A, E>) => Exit.isFailure(exit) && Cause.hasDies(exit.cause)

const contract = (name: string, impl: Layer.Layer<GameServerRecords | Subscriptions | Orders | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a created game server reads back whole by id, identifier, subscription and in its owner's list", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        const server = yield* provisioned(yield* customer)
        assert.deepStrictEqual(yield* records.create(server), server)
        assert.deepStrictEqual(yield* current(server.id), server)
        assert.deepStrictEqual(yield* records.byIdentifier(server.identifier), Option.some(server))
        assert.deepStrictEqual(yield* records.bySubscription(server.subscriptionId), Option.some(server))
        assert.deepStrictEqual(yield* records.forUser(server.userId), [server])
      }))

    it.effect("unknown ids, identifiers, subscriptions and owners find nothing", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        assert.isTrue(Option.isNone(yield* records.get(randomUUID())))
        assert.isTrue(Option.isNone(yield* records.byIdentifier(freshIdentifier())))
        assert.isTrue(Option.isNone(yield* records.bySubscription(randomUUID())))
        assert.deepStrictEqual(yield* records.forUser(randomUUID()), [])
      }))

    it.effect("a retried creation for the same order returns the record created the first time", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        const server = yield* provisioned(yield* customer)
        yield* records.create(server)
        const retry = new GameServer({
          ...server,
          id: GameServerId.make(randomUUID()),
          panelServerId: 43,
          identifier: freshIdentifier(),
          createdAt: later(5)
        })
        assert.deepStrictEqual(yield* records.create(retry), server)
        assert.deepStrictEqual(yield* records.forUser(server.userId), [server])
        assert.isTrue(Option.isNone(yield* records.byIdentifier(retry.identifier)))
      }))

    it.effect("ten creations for one order at the same time all return one record", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        const server = yield* provisioned(yield* customer)
        const created = yield* Effect.all(
          Array.from({ length: 10 }, () => records.create(new GameServer({ ...server, id: GameServerId.make(randomUUID()) }))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(new Set(created.map((s) => s.id)).size, 1)
        assert.deepStrictEqual(yield* records.forUser(server.userId), created.slice(0, 1))
      }))

    it.effect("a record for another order under a taken identifier or subscription is a defect; the first stays", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        const userId = yield* customer
        const first = yield* records.create(yield* provisioned(userId))
        const sameIdentifier = new GameServer({ ...(yield* provisioned(userId)), identifier: first.identifier })
        assert.isTrue(isDefect(yield* Effect.exit(records.create(sameIdentifier))))
        const other = yield* provisioned(userId)
        const sameSubscription = new GameServer({ ...other, subscriptionId: first.subscriptionId })
        assert.isTrue(isDefect(yield* Effect.exit(records.create(sameSubscription))))
        assert.deepStrictEqual(yield* records.byIdentifier(first.identifier), Option.some(first))
        assert.deepStrictEqual(yield* records.bySubscription(first.subscriptionId), Option.some(first))
        assert.deepStrictEqual(yield* records.forUser(userId), [first])
      }))

    it.effect("an owner's list holds each of their game servers, oldest first", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        const userId = yield* customer
        const newer = yield* records.create(yield* provisioned(userId, later(10)))
        const older = yield* records.create(yield* provisioned(userId, later(1)))
        yield* records.create(yield* provisioned(yield* customer))
        assert.deepStrictEqual((yield* records.forUser(userId)).map((s) => s.id), [older.id, newer.id])
      }))

    it.effect("suspension sets a grace period; a status change without options keeps it", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        const server = yield* records.create(yield* provisioned(yield* customer))
        yield* records.setStatus(server.id, "suspended", { graceUntil: later(60 * 24 * 7) })
        assert.deepStrictEqual(
          yield* current(server.id),
          new GameServer({ ...server, status: "suspended", graceUntil: later(60 * 24 * 7) })
        )
        yield* records.setStatus(server.id, "active")
        assert.deepStrictEqual(
          yield* current(server.id),
          new GameServer({ ...server, status: "active", graceUntil: later(60 * 24 * 7) })
        )
      }))

    it.effect("deletion clears the grace period and records when; renewal clears it too", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        const userId = yield* customer
        const deleted = yield* records.create(yield* provisioned(userId))
        yield* records.setStatus(deleted.id, "suspended", { graceUntil: later(100) })
        yield* records.setStatus(deleted.id, "deleted", { graceUntil: null, deletedAt: later(101) })
        assert.deepStrictEqual(
          yield* current(deleted.id),
          new GameServer({ ...deleted, status: "deleted", graceUntil: null, deletedAt: later(101) })
        )
        const renewed = yield* records.create(yield* provisioned(userId))
        yield* records.setStatus(renewed.id, "suspended", { graceUntil: later(100) })
        yield* records.setStatus(renewed.id, "active", { graceUntil: null })
        assert.deepStrictEqual(yield* current(renewed.id), renewed)
      }))

    it.effect("live holds every game server not deleted, whoever owns it", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        const active = yield* records.create(yield* provisioned(yield* customer))
        const suspended = yield* records.create(yield* provisioned(yield* customer))
        const deleted = yield* records.create(yield* provisioned(yield* customer))
        yield* records.setStatus(suspended.id, "suspended", { graceUntil: later(100) })
        yield* records.setStatus(deleted.id, "deleted", { graceUntil: null, deletedAt: later(101) })
        const live = new Set((yield* records.live).map((s) => s.id))
        assert.isTrue(live.has(active.id) && live.has(suspended.id))
        assert.isFalse(live.has(deleted.id))
      }))

    it.effect("a status change for an unknown id changes nothing", () =>
      Effect.gen(function*() {
        const records = yield* GameServerRecords
        const server = yield* records.create(yield* provisioned(yield* customer))
        yield* records.setStatus(randomUUID(), "deleted", { graceUntil: null, deletedAt: later(1) })
        assert.deepStrictEqual(yield* current(server.id), server)
      }))
  })

describe("GameServerRecords contract", () => {
  contract(
    "in memory",
    Layer.mergeAll(MemoryGameServerRecords.layer, MemorySubscriptions.layer, MemoryOrders.layer, MemoryUsers.layer)
  )
  for (const [backend, db] of sqlBackends()) {
    contract(
      backend,
      Layer.mergeAll(PgGameServerRecords.layer, PgSubscriptions.layer, PgOrders.layer, PgUsers.layer).pipe(Layer.provide(db))
    )
  }
})
