// One Users contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { newUser } from "../support/userMother.ts"

const contract = (name: string, impl: Layer.Layer<Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("stores a user and finds it by id and by e-mail in any case", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const created = yield* users.insert(newUser("ada@example.com"))
        const byId = yield* users.findById(created.id)
        assert.isTrue(Option.isSome(byId))
        assert.deepStrictEqual(Option.getOrThrow(byId).createdAt, new Date("2026-01-02T03:04:05.000Z"))
        const byEmail = yield* users.findByEmail("ADA@Example.com")
        assert.strictEqual(Option.getOrThrow(byEmail).id, created.id)
        assert.isTrue(Option.isNone(yield* users.findByEmail("nobody@example.com")))
      }))

    it.effect("refuses a second account for the same e-mail, whatever its case", () =>
      Effect.gen(function*() {
        const users = yield* Users
        yield* users.insert(newUser("grace@example.com"))
        const error = yield* Effect.flip(users.insert(newUser("Grace@EXAMPLE.com")))
        assert.strictEqual(error._tag, "EmailTaken")
      }))

    it.effect("of concurrent registrations for one e-mail exactly one wins", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const results = yield* Effect.all(
          Array.from({ length: 8 }, () => Effect.result(users.insert(newUser("race@example.com")))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((r) => r._tag === "Success").length, 1)
      }))

    it.effect("replaces the password hash of one user only", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const u = yield* users.insert(newUser("linus@example.com"))
        const other = yield* users.insert(newUser("ken@example.com"))
        yield* users.setPasswordHash(u.id, "hash-2")
        assert.strictEqual(Option.getOrThrow(yield* users.findById(u.id)).passwordHash, "hash-2")
        assert.strictEqual(Option.getOrThrow(yield* users.findById(other.id)).passwordHash, "hash-1")
      }))

    it.effect("upgrades a hash only while it is still the one that was verified", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const u = yield* users.insert(newUser("barbara@example.com"))
        assert.isTrue(yield* users.upgradePasswordHash(u.id, "hash-1", "hash-1-stronger"))
        yield* users.setPasswordHash(u.id, "hash-after-reset")
        assert.isFalse(yield* users.upgradePasswordHash(u.id, "hash-1-stronger", "stale-rehash"))
        assert.strictEqual(Option.getOrThrow(yield* users.findById(u.id)).passwordHash, "hash-after-reset")
      }))

    it.effect("changes the language", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const u = yield* users.insert(newUser("margaret@example.com"))
        yield* users.setLanguage(u.id, "fr")
        assert.strictEqual(Option.getOrThrow(yield* users.findById(u.id)).language, "fr")
      }))

    it.effect("changes a role and answers the one held before; none for an unknown user", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const u = yield* users.insert(newUser("hedy@example.com"))
        assert.strictEqual(Option.getOrThrow(yield* users.findById(u.id)).role, "customer")
        assert.deepStrictEqual(yield* users.setRole(u.id, "admin"), Option.some("customer" as const))
        assert.deepStrictEqual(yield* users.setRole(u.id, "support"), Option.some("admin" as const))
        assert.strictEqual(Option.getOrThrow(yield* users.findById(u.id)).role, "support")
        assert.isTrue(Option.isNone(yield* users.setRole(newUser("ghost@example.com").id, "admin")))
      }))

    it.effect("searches by a prefix of the e-mail, names, company or SIRET, and takes LIKE's wildcards literally", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const a = yield* users.insert(newUser("zsearch.one@example.com", { firstName: "Zelda", lastName: "Zorglub" }))
        const b = yield* users.insert(newUser("zsearch_two@example.com", {
          accountType: "professional",
          companyName: "Zarquon Hosting",
          siret: "55208131766522"
        }))
        const ids = (found: ReadonlyArray<{ readonly id: string }>) => found.map((u) => u.id)
        assert.deepStrictEqual(ids(yield* users.search("zsearch", 10)), [a.id, b.id])
        assert.deepStrictEqual(ids(yield* users.search("zorg", 10)), [a.id])
        assert.deepStrictEqual(ids(yield* users.search("zelda", 10)), [a.id])
        assert.deepStrictEqual(ids(yield* users.search("zarquon h", 10)), [b.id])
        assert.deepStrictEqual(ids(yield* users.search("5520813", 10)), [b.id])
        assert.deepStrictEqual(ids(yield* users.search("zsearch_", 10)), [b.id])
        assert.deepStrictEqual(ids(yield* users.search("zsearch%", 10)), [])
        assert.deepStrictEqual(ids(yield* users.search("zsearch", 1)), [a.id])
      }))
  })

describe("Users contract", () => {
  contract("in memory", MemoryUsers.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgUsers.layer.pipe(Layer.provide(db)))
})
