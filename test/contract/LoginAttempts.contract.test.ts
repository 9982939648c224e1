// One LoginAttempts contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as MemoryLoginAttempts from "../../adapters/fake/MemoryLoginAttempts.ts"
import * as PgLoginAttempts from "../../adapters/postgres/PgLoginAttempts.ts"
import { LoginAttempts } from "../../ports/LoginAttempts.ts"
import { sqlBackends } from "../support/databases.ts"

const windowMillis = 15 * 60 * 1000
const start = new Date("2026-03-01T10:00:00.000Z")
/** `millis` after the first hit of a test. */
const at = (millis: number) => new Date(start.getTime() + millis)

const hit = (key: string, now: Date) => Effect.flatMap(LoginAttempts, (attempts) => attempts.hit(key, now, windowMillis))
const undo = (key: string) => Effect.flatMap(LoginAttempts, (attempts) => attempts.undo(key))
const clear = (key: string) => Effect.flatMap(LoginAttempts, (attempts) => attempts.clear(key))
const countOf = (key: string, now: Date) => Effect.map(hit(key, now), (w) => w.count)

const contract = (name: string, impl: Layer.Layer<LoginAttempts, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("counts attempts within a window that ends one window after the first hit", () =>
      Effect.gen(function*() {
        const first = yield* hit("count@example.com", at(0))
        const second = yield* hit("count@example.com", at(1_000))
        const third = yield* hit("count@example.com", at(windowMillis - 1))
        assert.deepStrictEqual([first.count, second.count, third.count], [1, 2, 3])
        for (const w of [first, second, third]) assert.deepStrictEqual(w.resetsAt, at(windowMillis))
      }))

    it.effect("a hit once the window has ended starts a new window at 1", () =>
      Effect.gen(function*() {
        yield* hit("restart@example.com", at(0))
        yield* hit("restart@example.com", at(1_000))
        const atEnd = yield* hit("restart@example.com", at(windowMillis))
        assert.deepStrictEqual(atEnd, { count: 1, resetsAt: at(2 * windowMillis) })
        const later = yield* hit("restart@example.com", at(5 * windowMillis))
        assert.deepStrictEqual(later, { count: 1, resetsAt: at(6 * windowMillis) })
      }))

    it.effect("a window ends where the hit that opened it said, whatever later hits ask", () =>
      Effect.gen(function*() {
        const attempts = yield* LoginAttempts
        assert.deepStrictEqual(yield* attempts.hit("pause@example.com", at(0), 1_000), { count: 1, resetsAt: at(1_000) })
        assert.deepStrictEqual(yield* attempts.hit("pause@example.com", at(500), 8_000), { count: 2, resetsAt: at(1_000) })
        assert.deepStrictEqual(yield* attempts.hit("pause@example.com", at(1_000), 2_000), { count: 1, resetsAt: at(3_000) })
      }))

    it.effect("undo takes one attempt back and never goes below zero", () =>
      Effect.gen(function*() {
        yield* hit("undo@example.com", at(0))
        yield* hit("undo@example.com", at(1))
        yield* undo("undo@example.com")
        assert.strictEqual(yield* countOf("undo@example.com", at(2)), 2)
        for (let i = 0; i < 4; i++) yield* undo("undo@example.com")
        assert.strictEqual(yield* countOf("undo@example.com", at(3)), 1)
      }))

    it.effect("undo of a key never seen changes nothing", () =>
      Effect.gen(function*() {
        yield* undo("undo-unseen@example.com")
        assert.deepStrictEqual(yield* hit("undo-unseen@example.com", at(0)), { count: 1, resetsAt: at(windowMillis) })
      }))

    it.effect("clear forgets the key and its window", () =>
      Effect.gen(function*() {
        for (let i = 0; i < 3; i++) yield* hit("clear@example.com", at(i))
        yield* clear("clear@example.com")
        assert.deepStrictEqual(yield* hit("clear@example.com", at(10)), { count: 1, resetsAt: at(10 + windowMillis) })
        yield* clear("clear-unseen@example.com")
      }))

    it.effect("keys are counted independently", () =>
      Effect.gen(function*() {
        yield* hit("account:left@example.com", at(0))
        yield* hit("account:left@example.com", at(1))
        assert.strictEqual(yield* countOf("address:198.51.100.7", at(2)), 1)
        yield* clear("address:198.51.100.7")
        yield* undo("address:198.51.100.7")
        assert.strictEqual(yield* countOf("account:left@example.com", at(3)), 3)
      }))

    it.effect("25 concurrent hits on one key each see a different count, 1 to 25", () =>
      Effect.gen(function*() {
        const windows = yield* Effect.all(
          Array.from({ length: 25 }, () => hit("race@example.com", at(0))),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(
          windows.map((w) => w.count).sort((a, b) => a - b),
          Array.from({ length: 25 }, (_, i) => i + 1)
        )
        for (const w of windows) assert.deepStrictEqual(w.resetsAt, at(windowMillis))
      }))
  })

describe("LoginAttempts contract", () => {
  contract("in memory", MemoryLoginAttempts.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgLoginAttempts.layer.pipe(Layer.provide(db)))
})
