// The session check's user cache: one read per second at most, and local writes seen at once.
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option, Ref, Semaphore } from "effect"
import { TestClock } from "effect/testing"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as CachedUsers from "../../app/CachedUsers.ts"
import { Users } from "../../ports/Users.ts"
import { newUser } from "../support/userMother.ts"

/** The in-memory repository, counting the reads that reach it. */
const counted = (reads: Ref.Ref<number>) =>
  Layer.effect(Users, Effect.map(MemoryUsers.make, (users) => Users.of({
    ...users,
    findById: (id) => Effect.andThen(Ref.update(reads, (n) => n + 1), users.findById(id))
  })))

const env = Effect.gen(function*() {
  const reads = yield* Ref.make(0)
  const layer = CachedUsers.layer({ ttl: "1 second", capacity: 100 }).pipe(Layer.provide(counted(reads)))
  return { reads, layer }
})

describe("the cached user lookup", () => {
  it.effect("reads the repository once per second for the same user", () =>
    Effect.gen(function*() {
      const { layer, reads } = yield* env
      yield* Effect.gen(function*() {
        const users = yield* Users
        const user = yield* users.insert(newUser("cache@example.com"))
        for (let i = 0; i < 5; i++) assert.isTrue(Option.isSome(yield* users.findById(user.id)))
        assert.strictEqual(yield* Ref.get(reads), 1)
        yield* TestClock.adjust("1001 millis")
        yield* users.findById(user.id)
        assert.strictEqual(yield* Ref.get(reads), 2)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("a password or language change through it is seen by the next lookup", () =>
    Effect.gen(function*() {
      const { layer } = yield* env
      yield* Effect.gen(function*() {
        const users = yield* Users
        const user = yield* users.insert(newUser("revoke@example.com"))
        assert.strictEqual(Option.getOrThrow(yield* users.findById(user.id)).passwordHash, "hash-1")
        yield* users.setPasswordHash(user.id, "new-hash")
        assert.strictEqual(Option.getOrThrow(yield* users.findById(user.id)).passwordHash, "new-hash")
        yield* users.upgradePasswordHash(user.id, "new-hash", "stronger-hash")
        assert.strictEqual(Option.getOrThrow(yield* users.findById(user.id)).passwordHash, "stronger-hash")
        yield* users.setLanguage(user.id, "fr")
        assert.strictEqual(Option.getOrThrow(yield* users.findById(user.id)).language, "fr")
      }).pipe(Effect.provide(layer))
    }))

  it.effect("a read inside a transaction never waits on another request's lookup (no deadlock on the connection pool)", () =>
    Effect.gen(function*() {
      // A pool of one connection: a read outside a transaction takes it; the transaction holds it throughout and
      // reads on it. Another request's lookup started meanwhile waits for it until the transaction ends.
      const pool = yield* Semaphore.make(1)
      class Transaction extends Context.Service<Transaction, true>()("test/Transaction") {}
      const inTransaction = Effect.map(Effect.serviceOption(Transaction), Option.isSome)
      const reads = yield* Ref.make(0)
      const pooled = Layer.effect(Users, Effect.map(Effect.service(Users), (users) => Users.of({
        ...users,
        findById: (id) =>
          Effect.flatMap(inTransaction, (inside) => inside ? users.findById(id) : pool.withPermits(1)(users.findById(id)))
      }))).pipe(Layer.provide(counted(reads)))
      const layer = CachedUsers.layer({ ttl: "1 second", capacity: 100, inTransaction }).pipe(Layer.provide(pooled))
      yield* Effect.gen(function*() {
        const users = yield* Users
        const user = yield* users.insert(newUser("tx@example.com"))
        const connected = yield* Deferred.make<void>()
        const transaction = pool.withPermits(1)(Effect.gen(function*() {
          yield* Deferred.succeed(connected, undefined)
          // Another request's session check misses the cache meanwhile and waits for a connection.
          const request = yield* Effect.forkDetach(users.findById(user.id))
          yield* Effect.yieldNow
          const read = yield* users.findById(user.id).pipe(Effect.provideService(Transaction, true), Effect.timeoutOption("1 second"))
          return { read, request }
        }))
        const running = yield* Effect.forkChild(transaction)
        yield* Deferred.await(connected)
        yield* TestClock.adjust("1 second")
        const { read, request } = yield* Fiber.join(running)
        assert.isTrue(Option.isSome(read) && Option.isSome(read.value), "the transaction read its user without waiting")
        // The transaction over, the other request gets its connection and its answer.
        assert.isTrue(Option.isSome(yield* Fiber.join(request)))
      }).pipe(Effect.provide(layer))
    }))
})
