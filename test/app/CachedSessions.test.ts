// The session check's record cache: at most one read a second per session, sessions ended through it refused at
// once, and one ended elsewhere (straight in the repository, as another instance would) refused after the second.
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as MemorySessionRecords from "../../adapters/fake/MemorySessionRecords.ts"
import * as CachedSessions from "../../app/CachedSessions.ts"
import { SessionId, type SessionRecord } from "../../domain/account/SessionRecord.ts"
import { UserId } from "../../domain/account/User.ts"
import { SessionRecords } from "../../ports/SessionRecords.ts"

const alice = UserId.make("00000000-0000-4000-8000-00000000a11c")
const bob = UserId.make("00000000-0000-4000-8000-0000000000b0")
let n = 0
const sessionOf = (userId: UserId): SessionRecord => ({
  id: SessionId.make(`5e551011-0000-4000-8000-${String(++n).padStart(12, "0")}`),
  userId,
  rememberMe: false,
  createdAt: new Date(0),
  lastSeenAt: new Date(0),
  expiresAt: new Date(7 * 24 * 3600_000),
  userAgent: null,
  address: null
})

/** The repository itself (what every instance shares) and, in front of it, this instance's cache; reads counted. */
const env = Effect.gen(function*() {
  const reads = yield* Ref.make(0)
  const shared = yield* MemorySessionRecords.make
  const counted = SessionRecords.of({ ...shared, find: (id) => Effect.andThen(Ref.update(reads, (k) => k + 1), shared.find(id)) })
  const cached = yield* Layer.build(CachedSessions.layer({ ttl: "1 second", capacity: 100 }).pipe(
    Layer.provide(Layer.succeed(SessionRecords, counted))
  ))
  return { reads, shared, cached: Context.get(cached, SessionRecords) }
})

describe("the cached session lookup", () => {
  it.effect("reads the repository once per second for the same session", () =>
    Effect.gen(function*() {
      const { cached, reads } = yield* env
      const session = sessionOf(alice)
      yield* cached.create(session)
      for (let i = 0; i < 5; i++) assert.isTrue(Option.isSome(yield* cached.find(session.id)))
      assert.strictEqual(yield* Ref.get(reads), 1)
      yield* TestClock.adjust("1001 millis")
      yield* cached.find(session.id)
      assert.strictEqual(yield* Ref.get(reads), 2)
    }).pipe(Effect.scoped))

  it.effect("a session ended through it, alone or with all of its user's, is gone at the next lookup", () =>
    Effect.gen(function*() {
      const { cached } = yield* env
      const [one, two, three] = [sessionOf(alice), sessionOf(alice), sessionOf(bob)]
      for (const s of [one, two, three]) {
        yield* cached.create(s)
        yield* cached.find(s.id)
      }
      yield* cached.end(one.id)
      assert.isTrue(Option.isNone(yield* cached.find(one.id)))
      yield* cached.endAllOf(alice)
      assert.isTrue(Option.isNone(yield* cached.find(two.id)))
      assert.isTrue(Option.isSome(yield* cached.find(three.id)))
    }).pipe(Effect.scoped))

  it.effect("a session ended elsewhere is still served for less than a second, then refused", () =>
    Effect.gen(function*() {
      const { cached, shared } = yield* env
      const session = sessionOf(alice)
      yield* cached.create(session)
      yield* cached.find(session.id)
      yield* shared.endAllOf(alice)
      yield* TestClock.adjust("999 millis")
      assert.isTrue(Option.isSome(yield* cached.find(session.id)))
      yield* TestClock.adjust("1 millis")
      assert.isTrue(Option.isNone(yield* cached.find(session.id)))
    }).pipe(Effect.scoped))

  it.effect("a touch through it moves the cached copy too, so the next requests see it without a read", () =>
    Effect.gen(function*() {
      const { cached, reads } = yield* env
      const session = sessionOf(alice)
      yield* cached.create(session)
      yield* cached.find(session.id)
      yield* cached.touch(session.id, new Date(60_000))
      assert.deepStrictEqual(Option.getOrThrow(yield* cached.find(session.id)).lastSeenAt, new Date(60_000))
      assert.strictEqual(yield* Ref.get(reads), 1)
    }).pipe(Effect.scoped))
})
