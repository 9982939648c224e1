// One GameAllocations contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import * as MemoryGameAllocations from "../../adapters/fake/MemoryGameAllocations.ts"
import * as PgGameAllocations from "../../adapters/postgres/PgGameAllocations.ts"
import type { AllocationClaim } from "../../domain/game/GameServer.ts"
import { GameAllocations } from "../../ports/GameAllocations.ts"
import { sqlBackends } from "../support/databases.ts"

/** A panel name no other test uses: tests share one backend. */
const freshPanel = () => `ptero-${randomUUID().slice(0, 8)}`
const holder = () => `order-${randomUUID()}`
const room = { node: 3, memoryMiB: 2048, diskMiB: 10_240 }

/** Picks `allocationId`, whatever is claimed. */
const pick = (allocationId: number) => () => Option.some({ ...room, allocationId })

/** Picks the first allocation of `pool` that no claim holds; none when every one is held. */
const firstFree = (pool: ReadonlyArray<number>) => (claimed: ReadonlyArray<AllocationClaim>) =>
  Option.map(Option.fromNullishOr(pool.find((id) => !claimed.some((c) => c.allocationId === id))), (allocationId) => ({
    ...room,
    allocationId
  }))

/** Records what `choose` was shown, and picks `allocationId`. */
const spy = (allocationId: number) => {
  const seen: Array<ReadonlyArray<AllocationClaim>> = []
  const choose = (claimed: ReadonlyArray<AllocationClaim>) => {
    seen.push(claimed)
    return Option.some({ ...room, allocationId })
  }
  return { seen, choose }
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i)

const contract = (name: string, impl: Layer.Layer<GameAllocations, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("claim records what choose picks for the holder, and shows it to later claimers of that panel only", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const [panel, other] = [freshPanel(), freshPanel()]
        const [first, second, elsewhere] = [holder(), holder(), holder()]
        const claimed = yield* allocations.claim(panel, first, pick(401))
        assert.deepStrictEqual(claimed, Option.some({ holder: first, panel, ...room, allocationId: 401, created: false }))
        const watched = spy(402)
        yield* allocations.claim(other, elsewhere, watched.choose)
        yield* allocations.claim(panel, second, watched.choose)
        assert.deepStrictEqual(watched.seen, [[], [Option.getOrThrow(claimed)]])
      }))

    it.effect("onPanel lists the panel's live claims in the order they were made, created or not, released ones gone", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const [panel, other] = [freshPanel(), freshPanel()]
        const [first, second, third, elsewhere] = [holder(), holder(), holder(), holder()]
        assert.deepStrictEqual(yield* allocations.onPanel(panel), [])
        yield* allocations.claim(panel, first, pick(501))
        yield* allocations.claim(panel, second, pick(502))
        yield* allocations.claim(other, elsewhere, pick(501))
        yield* allocations.claim(panel, third, pick(503))
        yield* allocations.markCreated(second)
        yield* allocations.release(first)
        assert.deepStrictEqual(yield* allocations.onPanel(panel), [
          { holder: second, panel, ...room, allocationId: 502, created: true },
          { holder: third, panel, ...room, allocationId: 503, created: false }
        ])
      }))

    it.effect("claim is idempotent per holder: a retry gets its claim back without choosing again", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const panel = freshPanel()
        const h = holder()
        const first = yield* allocations.claim(panel, h, pick(401))
        const watched = spy(409)
        assert.deepStrictEqual(yield* allocations.claim(panel, h, watched.choose), first)
        assert.deepStrictEqual(watched.seen, [])
      }))

    it.effect("ten claims by one holder at the same time all get the one claim", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const panel = freshPanel()
        const h = holder()
        const claims = yield* Effect.all(
          range(1, 10).map(() => allocations.claim(panel, h, firstFree(range(1, 10)))),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(new Set(claims.map((c) => Option.getOrThrow(c).allocationId)), new Set([1]))
        const watched = spy(99)
        yield* allocations.claim(panel, holder(), watched.choose)
        assert.strictEqual(watched.seen[0]?.length, 1)
      }))

    it.effect("when choose finds nothing free, nothing is claimed", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const panel = freshPanel()
        const h = holder()
        assert.isTrue(Option.isNone(yield* allocations.claim(panel, h, () => Option.none())))
        assert.isTrue(Option.isNone(yield* allocations.held(h)))
        const watched = spy(401)
        yield* allocations.claim(panel, holder(), watched.choose)
        assert.deepStrictEqual(watched.seen, [[]])
      }))

    it.effect("held gives the holder's claim, and nothing for a holder without one", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const h = holder()
        const claimed = yield* allocations.claim(freshPanel(), h, pick(401))
        assert.deepStrictEqual(yield* allocations.held(h), claimed)
        assert.isTrue(Option.isNone(yield* allocations.held(holder())))
      }))

    it.effect("a released allocation goes to the next claimer; the released holder holds nothing", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const panel = freshPanel()
        const pool = [401, 402, 403]
        const [a, b, c] = [holder(), holder(), holder()]
        for (const h of [a, b, c]) yield* allocations.claim(panel, h, firstFree(pool))
        assert.isTrue(Option.isNone(yield* allocations.claim(panel, holder(), firstFree(pool))))
        yield* allocations.release(b)
        assert.isTrue(Option.isNone(yield* allocations.held(b)))
        const next = yield* allocations.claim(panel, holder(), firstFree(pool))
        assert.strictEqual(Option.getOrThrow(next).allocationId, 402)
      }))

    it.effect("a claim marked created shows as created to later claimers and in held", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const panel = freshPanel()
        const [built, building] = [holder(), holder()]
        const builtClaim = Option.getOrThrow(yield* allocations.claim(panel, built, pick(401)))
        const buildingClaim = Option.getOrThrow(yield* allocations.claim(panel, building, pick(402)))
        yield* allocations.markCreated(built)
        const watched = spy(403)
        yield* allocations.claim(panel, holder(), watched.choose)
        assert.deepStrictEqual(watched.seen, [[{ ...builtClaim, created: true }, buildingClaim]])
        assert.deepStrictEqual(yield* allocations.held(built), Option.some({ ...builtClaim, created: true }))
      }))

    it.effect("choosing an allocation another claim holds is a defect; the first holder keeps it", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const panel = freshPanel()
        const [first, second] = [holder(), holder()]
        const kept = yield* allocations.claim(panel, first, pick(401))
        const exit = yield* Effect.exit(allocations.claim(panel, second, pick(401)))
        assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
        assert.deepStrictEqual(yield* allocations.held(first), kept)
        assert.isTrue(Option.isNone(yield* allocations.held(second)))
      }))

    it.effect("the same allocation id on two panels is two different allocations", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const [panel, other] = [freshPanel(), freshPanel()]
        assert.isTrue(Option.isSome(yield* allocations.claim(panel, holder(), pick(401))))
        assert.isTrue(Option.isSome(yield* allocations.claim(other, holder(), pick(401))))
      }))

    it.effect("twenty orders claiming at once from ten allocations: ten get one each, ten get none", () =>
      Effect.gen(function*() {
        const allocations = yield* GameAllocations
        const panel = freshPanel()
        const pool = range(501, 10)
        const claims = yield* Effect.all(
          range(1, 20).map(() => allocations.claim(panel, holder(), firstFree(pool))),
          { concurrency: "unbounded" }
        )
        const given = claims.filter(Option.isSome).map((c) => c.value.allocationId)
        assert.deepStrictEqual(given.sort((x, y) => x - y), pool)
        assert.strictEqual(claims.filter(Option.isNone).length, 10)
        const watched = spy(999)
        yield* allocations.claim(panel, holder(), watched.choose)
        assert.strictEqual(watched.seen[0]?.length, 10)
      }))
  })

describe("GameAllocations contract", () => {
  contract("in memory", MemoryGameAllocations.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgGameAllocations.layer.pipe(Layer.provide(db)))
})

describe("game_allocation_claims table", () => {
  for (const [backend, db] of sqlBackends()) {
    layer(db, { excludeTestServices: true, timeout: "60 seconds" })(backend, (it) => {
      it.effect("refuses a second claim on an allocation of the same panel, even written around the adapter", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const insert = (h: string) =>
            sql`INSERT INTO game_allocation_claims (holder, panel, node, allocation_id, memory_mib, disk_mib)
                VALUES (${h}, 'ptero-raw', 3, 401, 2048, 10240)`
          yield* insert(holder())
          assert.isTrue(Exit.isFailure(yield* Effect.exit(insert(holder()))))
        }))
    })
  }
})
