// One NoticeRecords contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as MemoryNoticeRecords from "../../adapters/fake/MemoryNoticeRecords.ts"
import * as PgNoticeRecords from "../../adapters/postgres/PgNoticeRecords.ts"
import { NoticeRecords } from "../../ports/NoticeRecords.ts"
import { sqlBackends } from "../support/databases.ts"

const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute))
const userId = "00000000-0000-4000-8000-000000000001"

const record = (key: string, minute = 0, leaseMinutes = 2) =>
  Effect.flatMap(NoticeRecords, (records) =>
    records.record({
      key,
      userId,
      tag: "ServiceReady",
      payload: JSON.stringify({ _tag: "ServiceReady", key }),
      createdAt: at(minute),
      leaseUntil: at(minute + leaseMinutes)
    }))

const claim = (minute: number, limit = 100) =>
  Effect.flatMap(NoticeRecords, (records) => records.claimDue(at(minute), at(minute + 2), limit))

/** The keys among `claimed` that start with `prefix` (the backends keep the rows of the block's earlier tests). */
const ours = (prefix: string, claimed: ReadonlyArray<{ readonly key: string }>) =>
  claimed.map((c) => c.key).filter((k) => k.startsWith(prefix)).sort()

const contract = (name: string, impl: Layer.Layer<NoticeRecords, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("records a key once: of twenty senders at the same time, one gets the notice", () =>
      Effect.gen(function*() {
        const results = yield* Effect.all(Array.from({ length: 20 }, () => record("once:1")), { concurrency: "unbounded" })
        const winners = results.filter((r) => r !== null)
        assert.strictEqual(winners.length, 1)
        const { payload, ...rest } = winners[0]!
        assert.deepStrictEqual(rest, { key: "once:1", userId, attempts: 1 })
        assert.deepStrictEqual(JSON.parse(payload), { _tag: "ServiceReady", key: "once:1" })
        assert.isNull(yield* record("once:1", 30))
      }))

    it.effect("a recorded notice is leased to its sender, then due to a retry pass with one more attempt", () =>
      Effect.gen(function*() {
        yield* record("lease:1", 100, 2)
        assert.deepStrictEqual(ours("lease:", yield* claim(101)), [])
        const claimed = (yield* claim(102)).filter((c) => c.key.startsWith("lease:"))
        assert.deepStrictEqual(claimed.map((c) => [c.key, c.attempts]), [["lease:1", 2]])
        // Claimed: leased again to that pass.
        assert.deepStrictEqual(ours("lease:", yield* claim(103)), [])
        assert.deepStrictEqual(ours("lease:", yield* claim(104)), ["lease:1"])
      }))

    it.effect("a sent notice and a given-up one are never claimed again; a failed one is, at its retry time", () =>
      Effect.gen(function*() {
        const records = yield* NoticeRecords
        yield* record("done:sent", 200)
        yield* record("done:gave-up", 200)
        yield* record("done:retry", 200)
        yield* records.markSent("done:sent", at(200))
        yield* records.markFailed("done:gave-up", "SMTP 550", null)
        yield* records.markFailed("done:retry", "SMTP 421", at(210))
        assert.deepStrictEqual(ours("done:", yield* claim(209)), [])
        assert.deepStrictEqual(ours("done:", yield* claim(210)), ["done:retry"])
        yield* records.markSent("done:retry", at(211))
        assert.deepStrictEqual(ours("done:", yield* claim(10_000)), [])
      }))

    it.effect("a late failure report does not undo a send", () =>
      Effect.gen(function*() {
        const records = yield* NoticeRecords
        yield* record("late:1", 300)
        yield* records.markSent("late:1", at(300))
        yield* records.markFailed("late:1", "SMTP 421", at(301))
        assert.deepStrictEqual(ours("late:", yield* claim(20_000)), [])
      }))

    it.effect("lists what is not sent, newest first: waiting, failing with its error, given up", () =>
      Effect.gen(function*() {
        const records = yield* NoticeRecords
        yield* record("list:waiting", 600)
        yield* record("list:failing", 601)
        yield* record("list:given-up", 602)
        yield* record("list:sent", 603)
        yield* records.markFailed("list:failing", "SMTP 421", at(610))
        yield* records.markFailed("list:given-up", "SMTP 550", null)
        yield* records.markSent("list:sent", at(603))
        const listed = (yield* records.unsent(1_000)).filter((n) => n.key.startsWith("list:"))
        assert.deepStrictEqual(listed, [
          { key: "list:given-up", tag: "ServiceReady", createdAt: at(602), attempts: 1, lastError: "SMTP 550", nextAttemptAt: null },
          { key: "list:failing", tag: "ServiceReady", createdAt: at(601), attempts: 1, lastError: "SMTP 421", nextAttemptAt: at(610) },
          { key: "list:waiting", tag: "ServiceReady", createdAt: at(600), attempts: 1, lastError: null, nextAttemptAt: at(602) }
        ])
        assert.strictEqual((yield* records.unsent(1)).length, 1)
      }))

    it.effect("two retry passes at the same time never take the same notice", () =>
      Effect.gen(function*() {
        const keys = Array.from({ length: 30 }, (_, i) => `race:${String(i).padStart(2, "0")}`)
        yield* Effect.forEach(keys, (key) => record(key, 400, 0), { discard: true })
        const passes = yield* Effect.all(Array.from({ length: 4 }, () => claim(401, 10)), { concurrency: "unbounded" })
        const taken = passes.flatMap((p) => ours("race:", p))
        assert.strictEqual(new Set(taken).size, taken.length)
        const rest = ours("race:", yield* claim(401))
        assert.deepStrictEqual([...taken, ...rest].sort(), keys)
      }))
  })

describe("NoticeRecords contract", () => {
  contract("in memory", MemoryNoticeRecords.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgNoticeRecords.layer.pipe(Layer.provide(db)))
})
