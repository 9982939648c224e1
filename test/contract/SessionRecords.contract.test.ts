// One SessionRecords contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as MemorySessionRecords from "../../adapters/fake/MemorySessionRecords.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgSessionRecords from "../../adapters/postgres/PgSessionRecords.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { SessionId, type SessionRecord } from "../../domain/account/SessionRecord.ts"
import type { UserId } from "../../domain/account/User.ts"
import { SessionRecords } from "../../ports/SessionRecords.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { newUser } from "../support/userMother.ts"

const signedInAt = new Date("2026-03-01T10:00:00.000Z")
const minutes = (n: number) => new Date(signedInAt.getTime() + n * 60_000)

let n = 0
const sessionOf = (userId: UserId, overrides: Partial<SessionRecord> = {}): SessionRecord => ({
  id: SessionId.make(`5e551011-0000-4000-8000-${String(++n).padStart(12, "0")}`),
  userId,
  rememberMe: false,
  createdAt: signedInAt,
  lastSeenAt: signedInAt,
  expiresAt: minutes(7 * 24 * 60),
  userAgent: "Mozilla/5.0 (X11; Linux x86_64)",
  address: "2001:db8::1",
  ...overrides
})

/** A stored user (sessions belong to one). */
const aUser = (email: string) => Effect.flatMap(Users, (users) => users.insert(newUser(email)))

const contract = (name: string, impl: Layer.Layer<SessionRecords | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("stores a session and finds it by id, every field as given", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionRecords
        const user = yield* aUser("stored@example.com")
        const session = sessionOf(user.id, { rememberMe: true, userAgent: null, address: null })
        yield* sessions.create(session)
        assert.deepStrictEqual(yield* sessions.find(session.id), Option.some(session))
        const other = sessionOf(user.id)
        yield* sessions.create(other)
        assert.deepStrictEqual(yield* sessions.find(other.id), Option.some(other))
        assert.isTrue(Option.isNone(yield* sessions.find(SessionId.make("5e551011-ffff-4000-8000-000000000000"))))
      }))

    it.effect("touch moves last-seen forward, never back", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionRecords
        const session = sessionOf((yield* aUser("touch@example.com")).id)
        yield* sessions.create(session)
        yield* sessions.touch(session.id, minutes(5))
        yield* sessions.touch(session.id, minutes(3))
        assert.deepStrictEqual(Option.getOrThrow(yield* sessions.find(session.id)).lastSeenAt, minutes(5))
      }))

    it.effect("end ends one session, once", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionRecords
        const user = yield* aUser("end@example.com")
        const [a, b] = [sessionOf(user.id), sessionOf(user.id)]
        yield* sessions.create(a)
        yield* sessions.create(b)
        assert.isTrue(yield* sessions.end(a.id))
        assert.isFalse(yield* sessions.end(a.id))
        assert.isTrue(Option.isNone(yield* sessions.find(a.id)))
        assert.isTrue(Option.isSome(yield* sessions.find(b.id)))
      }))

    it.effect("endAllOf ends every session of one user and no one else's", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionRecords
        const alice = yield* aUser("all-alice@example.com")
        const bob = yield* aUser("all-bob@example.com")
        const mine = [sessionOf(alice.id), sessionOf(alice.id), sessionOf(alice.id)]
        const theirs = sessionOf(bob.id)
        for (const s of [...mine, theirs]) yield* sessions.create(s)
        assert.strictEqual(yield* sessions.endAllOf(alice.id), 3)
        for (const s of mine) assert.isTrue(Option.isNone(yield* sessions.find(s.id)))
        assert.isTrue(Option.isSome(yield* sessions.find(theirs.id)))
        assert.strictEqual(yield* sessions.endAllOf(alice.id), 0)
      }))

    it.effect("purgeExpired forgets sessions past their cap, the oldest first, at most `limit`", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionRecords
        const user = yield* aUser("purge@example.com")
        // Far in the past, so that other tests' sessions (capped a week after 2026-03-01) are never older.
        const ended = [3, 1, 2].map((k) => sessionOf(user.id, { expiresAt: new Date(Date.UTC(2000, 0, k)) }))
        const live = sessionOf(user.id, { expiresAt: new Date(Date.UTC(2000, 0, 10)) })
        for (const s of [...ended, live]) yield* sessions.create(s)
        assert.strictEqual(yield* sessions.purgeExpired(new Date(Date.UTC(2000, 0, 5)), 2), 2)
        assert.deepStrictEqual(
          yield* Effect.forEach(ended, (s) => Effect.map(sessions.find(s.id), Option.isSome)),
          [true, false, false]
        )
        assert.strictEqual(yield* sessions.purgeExpired(new Date(Date.UTC(2000, 0, 5)), 2), 1)
        assert.isTrue(Option.isSome(yield* sessions.find(live.id)))
      }))

    it.effect("concurrent ends of the same session: exactly one sees it live", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionRecords
        const session = sessionOf((yield* aUser("race@example.com")).id)
        yield* sessions.create(session)
        const ended = yield* Effect.all(Array.from({ length: 8 }, () => sessions.end(session.id)), { concurrency: "unbounded" })
        assert.strictEqual(ended.filter((e) => e).length, 1)
      }))
  })

describe("SessionRecords contract", () => {
  contract("in memory", Layer.mergeAll(MemorySessionRecords.layer, MemoryUsers.layer))
  for (const [backend, db] of sqlBackends()) {
    contract(backend, Layer.mergeAll(PgSessionRecords.layer, PgUsers.layer).pipe(Layer.provide(db)))
  }
})
