// One IpAddresses contract (with the Catalog that owns the pools), against the in-memory fake, embedded PGlite and
// (when configured) real Postgres. Every test has pools, blocks and holders of its own: the store is shared.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import * as MemoryCatalog from "../../adapters/fake/MemoryCatalog.ts"
import * as MemoryIpAddresses from "../../adapters/fake/MemoryIpAddresses.ts"
import * as PgCatalog from "../../adapters/postgres/PgCatalog.ts"
import * as PgIpAddresses from "../../adapters/postgres/PgIpAddresses.ts"
import { formatAddress, hostAddresses, parseCidr } from "../../domain/catalog/ipv4.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { IpAddresses } from "../../ports/IpAddresses.ts"
import { sqlBackends } from "../support/databases.ts"

/** Creates pool `id` on block `cidr` (gateway: its first host) with its host addresses, or the first `limit` of them. */
const pool = (id: string, cidr: string, limit?: number) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const block = Result.getOrThrow(parseCidr(cidr))
    const gateway = block.network + 1
    yield* catalog.upsertCluster({ name: "ip-pve", url: "https://pve.example:8006", username: "root@pam", tokenId: null, tls: { ca: null, fingerprint: null, insecure: false } })
    const addresses = hostAddresses(block, gateway).slice(0, limit)
    yield* catalog.upsertIpPool({ id, cluster: "ip-pve", cidr, gateway: formatAddress(gateway), bridge: "vmbr0", nodes: ["n1"] }, addresses)
    return addresses
  })

const contract = (name: string, impl: Layer.Layer<IpAddresses | Catalog, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("assigns the lowest free address of the pool, with what the VM's network needs", () =>
      Effect.gen(function*() {
        yield* pool("first", "10.1.0.0/28")
        assert.deepStrictEqual(yield* (yield* IpAddresses).assign("first-order", ["first"]), {
          pool: "first",
          address: "10.1.0.2",
          prefixLength: 28,
          gateway: "10.1.0.1",
          bridge: "vmbr0"
        })
      }))

    it.effect("hands addresses out in numeric order (.9 before .10)", () =>
      Effect.gen(function*() {
        const addresses = yield* pool("numeric", "10.2.0.0/28")
        const ip = yield* IpAddresses
        const got = yield* Effect.forEach(addresses.slice(0, 10), (_, i) => ip.assign(`numeric-${i}`, ["numeric"]))
        assert.deepStrictEqual(got.map((a) => a.address), addresses.slice(0, 10))
        assert.deepStrictEqual(got.slice(7, 9).map((a) => a.address), ["10.2.0.9", "10.2.0.10"])
      }))

    it.effect("50 concurrent assignments for 50 holders on a pool of 10: 10 distinct addresses, 40 PoolExhausted", () =>
      Effect.gen(function*() {
        const addresses = yield* pool("crowd", "10.3.0.0/28", 10)
        const ip = yield* IpAddresses
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => `crowd-${i}`),
          (holder) => Effect.result(ip.assign(holder, ["crowd"])),
          { concurrency: "unbounded" }
        )
        const won = outcomes.filter(Result.isSuccess).map((r) => r.success.address)
        const lost = outcomes.filter(Result.isFailure).map((r) => r.failure._tag)
        assert.strictEqual(won.length, 10)
        assert.deepStrictEqual([...new Set(won)].sort(), [...addresses].sort())
        assert.deepStrictEqual(lost, Array.from({ length: 40 }, () => "PoolExhausted"))
        assert.deepStrictEqual((yield* (yield* Catalog).ipPools).filter((p) => p.id === "crowd").map((p) => [p.free, p.assigned]), [[0, 10]])
      }))

    it.effect("is idempotent per holder, also when the same holder asks concurrently", () =>
      Effect.gen(function*() {
        yield* pool("idem-a", "10.4.0.0/29")
        yield* pool("idem-b", "10.4.1.0/29")
        const ip = yield* IpAddresses
        const first = yield* ip.assign("idem-order", ["idem-a"])
        assert.deepStrictEqual(yield* ip.assign("idem-order", ["idem-b"]), first)
        const same = yield* Effect.forEach(Array.from({ length: 10 }), () => ip.assign("idem-rush", ["idem-b"]), { concurrency: "unbounded" })
        assert.deepStrictEqual(new Set(same.map((a) => a.address)).size, 1)
        assert.deepStrictEqual((yield* (yield* Catalog).ipPools).filter((p) => p.id === "idem-b").map((p) => p.assigned), [1])
      }))

    it.effect("takes from the pools in the order given, moving on when one is exhausted or unknown", () =>
      Effect.gen(function*() {
        yield* pool("order-a", "10.5.0.0/30")
        yield* pool("order-b", "10.5.1.0/30")
        const ip = yield* IpAddresses
        assert.strictEqual((yield* ip.assign("order-1", ["order-b", "order-a"])).pool, "order-b")
        assert.strictEqual((yield* ip.assign("order-2", ["order-none", "order-b", "order-a"])).pool, "order-a")
        const exhausted = yield* Effect.flip(ip.assign("order-3", ["order-b", "order-a"]))
        assert.deepStrictEqual(exhausted._tag === "PoolExhausted" ? exhausted.pools : exhausted, ["order-b", "order-a"])
      }))

    it.effect("a released address is free again; releasing what is not held is fine", () =>
      Effect.gen(function*() {
        yield* pool("reuse", "10.6.0.0/30")
        const ip = yield* IpAddresses
        const a = yield* ip.assign("reuse-1", ["reuse"])
        assert.strictEqual((yield* Effect.flip(ip.assign("reuse-2", ["reuse"])))._tag, "PoolExhausted")
        yield* ip.release("reuse-1")
        yield* ip.release("reuse-1")
        yield* ip.release("reuse-never")
        assert.isUndefined(yield* ip.held("reuse-1"))
        assert.deepStrictEqual(yield* ip.assign("reuse-2", ["reuse"]), a)
        assert.deepStrictEqual(yield* ip.held("reuse-2"), a)
      }))

    it.effect("a retired pool gives nothing new, while its holders keep their addresses", () =>
      Effect.gen(function*() {
        yield* pool("old", "10.7.0.0/29")
        const ip = yield* IpAddresses
        const kept = yield* ip.assign("old-1", ["old"])
        yield* (yield* Catalog).retire("ipPool", "old")
        assert.strictEqual((yield* Effect.flip(ip.assign("old-2", ["old"])))._tag, "PoolExhausted")
        assert.deepStrictEqual(yield* ip.held("old-1"), kept)
      }))

    it.effect("an address dropped from its pool stays with its holder and, once released, is never assigned again", () =>
      Effect.gen(function*() {
        const addresses = yield* pool("shrink", "10.8.0.0/29")
        const catalog = yield* Catalog
        const ip = yield* IpAddresses
        const held = yield* ip.assign("shrink-1", ["shrink"])
        const shrunk = { id: "shrink", cluster: "ip-pve", cidr: "10.8.0.0/29", gateway: "10.8.0.1", bridge: "vmbr0", nodes: ["n1"] }
        assert.strictEqual(yield* catalog.upsertIpPool(shrunk, [addresses[3]!]), "updated")
        assert.deepStrictEqual(yield* ip.held("shrink-1"), held)
        yield* ip.release("shrink-1")
        assert.strictEqual((yield* ip.assign("shrink-2", ["shrink"])).address, addresses[3])
        assert.strictEqual((yield* Effect.flip(ip.assign("shrink-3", ["shrink"])))._tag, "PoolExhausted")
        assert.strictEqual(yield* catalog.upsertIpPool(shrunk, [addresses[3]!, held.address]), "updated")
        assert.strictEqual((yield* ip.assign("shrink-3", ["shrink"])).address, held.address)
      }))
  })

describe("IpAddresses contract", () => {
  contract("in memory", MemoryIpAddresses.layer.pipe(Layer.provideMerge(MemoryCatalog.layer)))
  for (const [backend, db] of sqlBackends()) {
    contract(backend, Layer.mergeAll(PgIpAddresses.layer, PgCatalog.layer).pipe(Layer.provide(db)))
  }
})
