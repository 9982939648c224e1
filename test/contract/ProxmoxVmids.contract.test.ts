// One ProxmoxVmids contract (the Proxmox adapter's VMIDs), run against the in-memory fake, embedded PGlite and (when
// configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryProxmoxVmids from "../../adapters/fake/MemoryProxmoxVmids.ts"
import * as PgProxmoxVmids from "../../adapters/postgres/PgProxmoxVmids.ts"
import { ProxmoxVmids } from "../../ports/ProxmoxVmids.ts"
import { sqlBackends } from "../support/databases.ts"

/** A cluster name no other test uses: tests share one backend. */
const freshCluster = () => `pve-${randomUUID().slice(0, 8)}`
const holder = () => `order-${randomUUID()}`
const range = (from: number, to: number) => ({ from, to })

const contract = (name: string, impl: Layer.Layer<ProxmoxVmids, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("allocate hands out the lowest free VMID of the range, the same one again to the same holder", () =>
      Effect.gen(function*() {
        const vmids = yield* ProxmoxVmids
        const [cluster, other] = [freshCluster(), freshCluster()]
        const [a, b, c] = [holder(), holder(), holder()]
        assert.deepStrictEqual(yield* vmids.allocate(cluster, a, range(100, 200)), Option.some(100))
        assert.deepStrictEqual(yield* vmids.allocate(cluster, b, range(100, 200)), Option.some(101))
        assert.deepStrictEqual(yield* vmids.allocate(cluster, a, range(100, 200)), Option.some(100))
        assert.deepStrictEqual(yield* vmids.allocate(other, c, range(100, 200)), Option.some(100))
      }))

    it.effect("a released VMID is handed out again, lowest first", () =>
      Effect.gen(function*() {
        const vmids = yield* ProxmoxVmids
        const cluster = freshCluster()
        const [a, b, c] = [holder(), holder(), holder()]
        for (const h of [a, b, c]) yield* vmids.allocate(cluster, h, range(500, 510))
        yield* vmids.release(a)
        yield* vmids.release(b)
        assert.deepStrictEqual(yield* vmids.allocate(cluster, holder(), range(500, 510)), Option.some(500))
        assert.deepStrictEqual(yield* vmids.allocate(cluster, c, range(500, 510)), Option.some(502))
      }))

    it.effect("a full range gives nothing", () =>
      Effect.gen(function*() {
        const vmids = yield* ProxmoxVmids
        const cluster = freshCluster()
        assert.deepStrictEqual(yield* vmids.allocate(cluster, holder(), range(700, 702)), Option.some(700))
        assert.deepStrictEqual(yield* vmids.allocate(cluster, holder(), range(700, 702)), Option.some(701))
        assert.isTrue(Option.isNone(yield* vmids.allocate(cluster, holder(), range(700, 702))))
        assert.isTrue(Option.isNone(yield* vmids.allocate(cluster, holder(), range(700, 700))))
      }))

    it.effect("twenty holders allocating at once get twenty distinct VMIDs, the lowest twenty", () =>
      Effect.gen(function*() {
        const vmids = yield* ProxmoxVmids
        const cluster = freshCluster()
        const given = yield* Effect.all(
          Array.from({ length: 20 }, () => vmids.allocate(cluster, holder(), range(1000, 2000))),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(
          given.map(Option.getOrThrow).sort((x, y) => x - y),
          Array.from({ length: 20 }, (_, i) => 1000 + i)
        )
      }))

    it.effect("eight holders racing for a range of five: five get one, three get none", () =>
      Effect.gen(function*() {
        const vmids = yield* ProxmoxVmids
        const cluster = freshCluster()
        const answers = yield* Effect.all(
          Array.from({ length: 8 }, () => vmids.allocate(cluster, holder(), range(300, 305))),
          { concurrency: "unbounded" }
        )
        const given = answers.filter(Option.isSome).map(Option.getOrThrow)
        assert.deepStrictEqual(given.sort((x, y) => x - y), [300, 301, 302, 303, 304])
        assert.strictEqual(answers.filter(Option.isNone).length, 3)
      }))

    it.effect("a VMID set aside is never handed out again; its holder gets another", () =>
      Effect.gen(function*() {
        const vmids = yield* ProxmoxVmids
        const cluster = freshCluster()
        const h = holder()
        assert.deepStrictEqual(yield* vmids.allocate(cluster, h, range(100, 110)), Option.some(100))
        yield* vmids.setAside(cluster, 100)
        assert.deepStrictEqual(yield* vmids.allocate(cluster, h, range(100, 110)), Option.some(101))
        yield* vmids.release(h)
        yield* vmids.setAside(cluster, 102)
        yield* vmids.setAside(cluster, 102)
        const next = [holder(), holder(), holder()]
        const given: Array<number> = []
        for (const n of next) given.push(Option.getOrThrow(yield* vmids.allocate(cluster, n, range(100, 110))))
        assert.deepStrictEqual(given, [101, 103, 104])
      }))

    it.effect("setting a VMID aside on one cluster leaves the same VMID free on another", () =>
      Effect.gen(function*() {
        const vmids = yield* ProxmoxVmids
        const [cluster, other] = [freshCluster(), freshCluster()]
        yield* vmids.setAside(cluster, 100)
        assert.deepStrictEqual(yield* vmids.allocate(cluster, holder(), range(100, 110)), Option.some(101))
        assert.deepStrictEqual(yield* vmids.allocate(other, holder(), range(100, 110)), Option.some(100))
      }))
    it.effect("holders lists the orders holding VMIDs on the cluster, not the ones set aside", () =>
      Effect.gen(function*() {
        const vmids = yield* ProxmoxVmids
        const [cluster, other] = [freshCluster(), freshCluster()]
        const [a, b, c] = [holder(), holder(), holder()]
        yield* vmids.allocate(cluster, a, range(100, 110))
        yield* vmids.allocate(cluster, b, range(100, 110))
        yield* vmids.allocate(other, c, range(100, 110))
        yield* vmids.setAside(cluster, 105)
        assert.deepStrictEqual(yield* vmids.holders(cluster), new Map([[100, a], [101, b]]))
        yield* vmids.release(a)
        assert.deepStrictEqual(yield* vmids.holders(cluster), new Map([[101, b]]))
      }))
  })

describe("ProxmoxVmids contract", () => {
  contract("in memory", MemoryProxmoxVmids.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgProxmoxVmids.layer.pipe(Layer.provide(db)))
})
