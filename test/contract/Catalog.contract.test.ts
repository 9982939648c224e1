// One Catalog contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
// The suite shares one store per backend, so every test works on names of its own.
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import * as MemoryCatalog from "../../adapters/fake/MemoryCatalog.ts"
import * as PgCatalog from "../../adapters/postgres/PgCatalog.ts"
import type { GamePlan, VpsPlan } from "../../domain/catalog/Plan.ts"
import { Catalog, type ClusterEntry } from "../../ports/Catalog.ts"
import { sqlBackends } from "../support/databases.ts"

const cluster = (name: string, overrides: Partial<ClusterEntry> = {}): ClusterEntry => ({
  name,
  url: `https://${name}.example:8006`,
  username: "root@pam",
  tokenId: null,
  tls: { ca: null, fingerprint: null, insecure: false },
  ...overrides
})

const vps = (id: string, overrides: Partial<VpsPlan> = {}): VpsPlan => ({
  kind: "vps", id, name: `VPS ${id}`, priceCents: 500, vcpu: 1, ramMiB: 1024, diskGiB: 20, templates: ["debian-12"], snapshotLimit: 2,
  ...overrides
})

const game = (id: string, overrides: Partial<GamePlan> = {}): GamePlan => ({
  kind: "game", id, name: `Game ${id}`, priceCents: 600, panel: "panel", eggId: 5, dockerImage: "ghcr.io/pterodactyl/yolks:java_17",
  memoryMiB: 2048, diskMiB: 10240, cpuPercent: 200, io: 500, databases: 0, backups: 2, allocations: 1,
  environment: { SERVER_JARFILE: "server.jar", EULA: "true" }, userVariables: ["MINECRAFT_VERSION"],
  ...overrides
})



const contract = (name: string, impl: Layer.Layer<Catalog, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("an upserted cluster is created once, then unchanged, then updated when it differs", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        const pve = cluster("up-pve", { tls: { ca: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", fingerprint: null, insecure: false } })
        assert.deepStrictEqual(
          [yield* c.upsertCluster(pve), yield* c.upsertCluster(pve), yield* c.upsertCluster({ ...pve, tokenId: "api@pve!zh" })],
          ["created", "unchanged", "updated"]
        )
        assert.deepStrictEqual(Option.getOrThrow(yield* c.cluster("up-pve")), { ...pve, tokenId: "api@pve!zh", retired: false })
        assert.isTrue(Option.isNone(yield* c.cluster("up-never")))
      }))

    it.effect("lists clusters and panels by name", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        for (const n of ["list-b", "list-C", "list-a"]) {
          yield* c.upsertCluster(cluster(n))
          yield* c.upsertPanel({ name: n, url: `https://${n}.example` })
        }
        assert.deepStrictEqual((yield* c.clusters).map((x) => x.name).filter((n) => n.startsWith("list-")), ["list-C", "list-a", "list-b"])
        assert.deepStrictEqual((yield* c.panels).filter((p) => p.name.startsWith("list-")).map((p) => p.name), ["list-C", "list-a", "list-b"])
      }))

    it.effect("an upserted panel keeps its URL; the same panel again is unchanged", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        const panel = { name: "up-panel", url: "https://panel.example" }
        assert.deepStrictEqual(
          [yield* c.upsertPanel(panel), yield* c.upsertPanel(panel), yield* c.upsertPanel({ ...panel, url: "https://games.example" })],
          ["created", "unchanged", "updated"]
        )
        assert.deepStrictEqual(Option.getOrThrow(yield* c.panel("up-panel")), { name: "up-panel", url: "https://games.example", retired: false })
      }))

    it.effect("a template has one row per node; templates(id) gives the active copies on active clusters", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        yield* c.upsertCluster(cluster("tpl-a"))
        yield* c.upsertCluster(cluster("tpl-b"))
        const copy = (clusterName: string, node: string, vmid: number) => ({ id: "tpl-debian", name: "Debian 12", cluster: clusterName, node, vmid })
        assert.deepStrictEqual(
          [
            yield* c.upsertTemplate(copy("tpl-b", "n1", 9001)),
            yield* c.upsertTemplate(copy("tpl-a", "n2", 9002)),
            yield* c.upsertTemplate(copy("tpl-a", "n1", 9000)),
            yield* c.upsertTemplate(copy("tpl-a", "n1", 9000)),
            yield* c.upsertTemplate({ ...copy("tpl-a", "n2", 9002), name: "Debian 12 (bookworm)" })
          ],
          ["created", "created", "created", "unchanged", "updated"]
        )
        assert.deepStrictEqual((yield* c.templates("tpl-debian")).map((t) => `${t.cluster}/${t.node}`), ["tpl-a/n1", "tpl-a/n2", "tpl-b/n1"])
        yield* c.retire("cluster", "tpl-b")
        assert.deepStrictEqual(yield* c.templates("tpl-debian"), [copy("tpl-a", "n1", 9000), { ...copy("tpl-a", "n2", 9002), name: "Debian 12 (bookworm)" }])
        const all = (yield* c.allTemplates).filter((t) => t.id === "tpl-debian")
        assert.deepStrictEqual(all.map((t) => t.retired), [false, false, false])
      }))

    it.effect("a template or a pool on an unknown cluster is a defect", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        const template = yield* Effect.exit(c.upsertTemplate({ id: "orphan", name: "Orphan", cluster: "fk-none", node: "n1", vmid: 9000 }))
        assert.isTrue(Exit.isFailure(template) && Cause.hasDies(template.cause))
        const pool = { id: "fk-pool", cluster: "fk-none", cidr: "192.0.2.0/30", gateway: "192.0.2.1", bridge: "vmbr0", nodes: ["n1"] }
        const exit = yield* Effect.exit(c.upsertIpPool(pool, ["192.0.2.2"]))
        assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      }))

    it.effect("plans are stored whole; a plan with the same content in another key order is unchanged", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        const mc = game("plan-mc")
        assert.strictEqual(yield* c.upsertPlan(vps("plan-s")), "created")
        assert.strictEqual(yield* c.upsertPlan(mc), "created")
        assert.strictEqual(yield* c.upsertPlan({ ...mc, environment: { EULA: "true", SERVER_JARFILE: "server.jar" } }), "unchanged")
        assert.strictEqual(yield* c.upsertPlan({ ...mc, priceCents: 700 }), "updated")
        assert.deepStrictEqual(Option.getOrThrow(yield* c.plan("plan-mc")), { ...mc, priceCents: 700, retired: false })
        assert.deepStrictEqual(Option.getOrThrow(yield* c.plan("plan-s")), { ...vps("plan-s"), retired: false })
        assert.isTrue(Option.isNone(yield* c.plan("plan-none")))
      }))

    it.effect("active plans come by price, then id; allPlans has the retired ones too, by id", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        yield* c.upsertPlan(vps("sort-c", { priceCents: 900 }))
        yield* c.upsertPlan(vps("sort-b", { priceCents: 100 }))
        yield* c.upsertPlan(game("sort-a", { priceCents: 100 }))
        yield* c.upsertPlan(vps("sort-d", { priceCents: 50 }))
        yield* c.retire("plan", "sort-d")
        assert.deepStrictEqual((yield* c.plans).map((p) => p.id).filter((id) => id.startsWith("sort-")), ["sort-a", "sort-b", "sort-c"])
        assert.deepStrictEqual(
          (yield* c.allPlans).filter((p) => p.id.startsWith("sort-")).map((p) => [p.id, p.retired]),
          [["sort-a", false], ["sort-b", false], ["sort-c", false], ["sort-d", true]]
        )
      }))

    it.effect("retire says whether the entry exists, may be repeated, and upserting never brings it back", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        yield* c.upsertCluster(cluster("ret-pve"))
        yield* c.upsertPanel({ name: "ret-panel", url: "https://ret.example" })
        yield* c.upsertTemplate({ id: "ret-tpl", name: "T", cluster: "ret-pve", node: "n1", vmid: 9100 })
        yield* c.upsertIpPool({ id: "ret-pool", cluster: "ret-pve", cidr: "192.0.2.4/30", gateway: "192.0.2.5", bridge: "vmbr0", nodes: ["n1"] }, ["192.0.2.6"])
        yield* c.upsertPlan(vps("ret-plan"))
        const entries = [["plan", "ret-plan"], ["template", "ret-tpl"], ["ipPool", "ret-pool"], ["cluster", "ret-pve"], ["panel", "ret-panel"]] as const
        for (const [kind, id] of entries) {
          assert.isTrue(yield* c.retire(kind, id), `${kind} ${id}`)
          assert.isTrue(yield* c.retire(kind, id), `${kind} ${id} again`)
          assert.isFalse(yield* c.retire(kind, `${id}-unknown`), `${kind} unknown`)
        }
        assert.strictEqual(yield* c.upsertPlan(vps("ret-plan", { priceCents: 1 })), "updated")
        assert.strictEqual(yield* c.upsertCluster(cluster("ret-pve")), "unchanged")
        assert.isTrue(Option.getOrThrow(yield* c.plan("ret-plan")).retired)
        assert.isTrue(Option.getOrThrow(yield* c.cluster("ret-pve")).retired)
        assert.isTrue(Option.getOrThrow(yield* c.panel("ret-panel")).retired)
        assert.isTrue((yield* c.ipPools).find((p) => p.id === "ret-pool")?.retired)
        assert.deepStrictEqual((yield* c.allTemplates).filter((t) => t.id === "ret-tpl").map((t) => t.retired), [true])
        assert.deepStrictEqual(yield* c.templates("ret-tpl"), [])
        assert.isFalse((yield* c.plans).some((p) => p.id === "ret-plan"))
      }))

    it.effect("a pool lists its free addresses; upserting the same pool and addresses again is unchanged", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        yield* c.upsertCluster(cluster("pool-pve"))
        const pool = { id: "pool-a", cluster: "pool-pve", cidr: "198.51.100.0/29", gateway: "198.51.100.1", bridge: "vmbr0", nodes: ["n1", "n2"] }
        const hosts = ["198.51.100.2", "198.51.100.3", "198.51.100.4", "198.51.100.5", "198.51.100.6"]
        assert.strictEqual(yield* c.upsertIpPool(pool, hosts), "created")
        assert.strictEqual(yield* c.upsertIpPool(pool, hosts), "unchanged")
        assert.strictEqual(yield* c.upsertIpPool({ ...pool, bridge: "vmbr1" }, hosts), "updated")
        assert.strictEqual(yield* c.upsertIpPool({ ...pool, bridge: "vmbr1" }, hosts.slice(0, 3)), "updated")
        assert.deepStrictEqual((yield* c.ipPools).find((p) => p.id === "pool-a"), { ...pool, bridge: "vmbr1", retired: false, free: 3, assigned: 0 })
      }))

    it.effect("an address already in another pool is not added to a second one", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        yield* c.upsertCluster(cluster("dup-pve"))
        const pool = (id: string) => ({ id, cluster: "dup-pve", cidr: "198.51.100.64/30", gateway: "198.51.100.65", bridge: "vmbr0", nodes: ["n1"] })
        yield* c.upsertIpPool(pool("dup-a"), ["198.51.100.66"])
        yield* c.upsertIpPool(pool("dup-b"), ["198.51.100.66"])
        const pools = (yield* c.ipPools).filter((p) => p.id.startsWith("dup-"))
        assert.deepStrictEqual(pools.map((p) => [p.id, p.free]), [["dup-a", 1], ["dup-b", 0]])
      }))

    it.effect("a plan taken off sale says it was on sale, stays off when its file entry is applied again, and comes back", () =>
      Effect.gen(function*() {
        const c = yield* Catalog
        yield* c.upsertPlan(vps("sale-a"))
        assert.isFalse((yield* c.offSale).has("sale-a"))
        assert.deepStrictEqual(yield* c.setOnSale("sale-a", false), Option.some(true))
        assert.deepStrictEqual(yield* c.setOnSale("sale-a", false), Option.some(false))
        assert.strictEqual(yield* c.upsertPlan(vps("sale-a", { priceCents: 900 })), "updated")
        assert.isTrue((yield* c.offSale).has("sale-a"))
        // Still an active plan: subscriptions on it renew with its terms.
        assert.isTrue((yield* c.plans).some((p) => p.id === "sale-a"))
        assert.deepStrictEqual(yield* c.setOnSale("sale-a", true), Option.some(false))
        assert.isFalse((yield* c.offSale).has("sale-a"))
        assert.isTrue(Option.isNone(yield* c.setOnSale("sale-never", false)))
      }))
  })

describe("Catalog contract", () => {
  contract("in memory", MemoryCatalog.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgCatalog.layer.pipe(Layer.provide(db)))
})
