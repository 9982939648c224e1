// The session check's user cache: one read per second at most, and local writes seen at once.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Ref } from "effect"
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
})
