// One Placement contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryPlacement from "../../adapters/fake/MemoryPlacement.ts"
import * as PgPlacement from "../../adapters/postgres/PgPlacement.ts"
import type { Reservation } from "../../domain/vps/Vps.ts"
import { Placement } from "../../ports/Placement.ts"
import { sqlBackends } from "../support/databases.ts"

/** A cluster name no other test uses: tests share one backend. */
const freshCluster = () => `pve-${randomUUID().slice(0, 8)}`
const holder = () => `order-${randomUUID()}`
const small = { cpus: 2, memoryMiB: 2048, diskGiB: 40 }

/** Picks `node` while it holds fewer than `max` of the pending reservations, as chooseNode counts them. */
const atMost = (max: number, node = "pve1") => (pending: ReadonlyArray<Reservation>) =>
  pending.filter((r) => r.node === node).length < max ? Option.some({ node, ...small }) : Option.none()

/** Records what `choose` was shown, and picks `node`. */
const spy = (node: string) => {
  const seen: Array<ReadonlyArray<Reservation>> = []
  const choose = (pending: ReadonlyArray<Reservation>) => {
    seen.push(pending)
    return Option.some({ node, ...small })
  }
  return { seen, choose }
}

const contract = (name: string, impl: Layer.Layer<Placement, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("reserve records what choose picks for the holder, and shows it to later reservers of that cluster only", () =>
      Effect.gen(function*() {
        const placement = yield* Placement
        const [cluster, other] = [freshCluster(), freshCluster()]
        const [first, second, elsewhere] = [holder(), holder(), holder()]
        const reserved = yield* placement.reserve(cluster, first, () => Option.some({ node: "pve2", ...small }))
        assert.deepStrictEqual(reserved, Option.some({ holder: first, cluster, node: "pve2", ...small }))
        const watched = spy("pve3")
        yield* placement.reserve(other, elsewhere, watched.choose)
        yield* placement.reserve(cluster, second, watched.choose)
        assert.deepStrictEqual(watched.seen, [[], [Option.getOrThrow(reserved)]])
      }))

    it.effect("reserve is idempotent per holder: a retry gets its reservation back without choosing again", () =>
      Effect.gen(function*() {
        const placement = yield* Placement
        const cluster = freshCluster()
        const h = holder()
        const first = yield* placement.reserve(cluster, h, () => Option.some({ node: "pve1", ...small }))
        const watched = spy("pve9")
        assert.deepStrictEqual(yield* placement.reserve(cluster, h, watched.choose), first)
        assert.deepStrictEqual(watched.seen, [])
      }))

    it.effect("when choose finds no room, nothing is reserved", () =>
      Effect.gen(function*() {
        const placement = yield* Placement
        const cluster = freshCluster()
        assert.isTrue(Option.isNone(yield* placement.reserve(cluster, holder(), () => Option.none())))
        const watched = spy("pve1")
        yield* placement.reserve(cluster, holder(), watched.choose)
        assert.deepStrictEqual(watched.seen, [[]])
      }))

    it.effect("a released reservation no longer counts", () =>
      Effect.gen(function*() {
        const placement = yield* Placement
        const cluster = freshCluster()
        const [released, kept] = [holder(), holder()]
        yield* placement.reserve(cluster, released, atMost(5))
        const keptReservation = Option.getOrThrow(yield* placement.reserve(cluster, kept, atMost(5)))
        yield* placement.releaseReservation(released)
        const watched = spy("pve1")
        yield* placement.reserve(cluster, holder(), watched.choose)
        assert.deepStrictEqual(watched.seen, [[keptReservation]])
      }))

    it.effect("twenty orders reserving at once on a node with room for three get exactly three reservations", () =>
      Effect.gen(function*() {
        const placement = yield* Placement
        const cluster = freshCluster()
        const results = yield* Effect.all(
          Array.from({ length: 20 }, () => placement.reserve(cluster, holder(), atMost(3))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Option.isSome).length, 3)
        const watched = spy("pve1")
        yield* placement.reserve(cluster, holder(), watched.choose)
        assert.strictEqual(watched.seen[0]?.length, 3)
      }))

  })

describe("Placement contract", () => {
  contract("in memory", MemoryPlacement.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgPlacement.layer.pipe(Layer.provide(db)))
})
