// The Application-API operations specified against the simulated panel in memory: the exact requests (method, path,
// key, body of reference/pterodactyl.md §2) in its request log, the decoding of users, servers, nodes, allocations
// and eggs, the lookups by external id, idempotent creation, and the caches of eggs and nodes. The lookups and
// deletions that must never guess are in requests.test.ts.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { NewServer } from "../../../ports/GamePanel.ts"
import { aServer, calls, onSimulation } from "./onSimulation.ts"

const newServer = (allocation: number): NewServer => ({
  name: "survival",
  orderId: "gs_42",
  user: 1,
  egg: 5,
  dockerImage: "ghcr.io/pterodactyl/yolks:java_17",
  startup: "java -jar {{SERVER_JARFILE}}",
  environment: { SERVER_JARFILE: "server.jar", MINECRAFT_VERSION: "latest", BUILD_NUMBER: "latest" },
  limits: { memoryMiB: 2048, swapMiB: 0, diskMiB: 10240, io: 500, cpuPercent: 200 },
  oomDisabled: false,
  featureLimits: { databases: 0, backups: 2, allocations: 1 },
  allocation,
  startOnCompletion: true
})

const jsonOf = (body: Buffer | undefined): unknown => JSON.parse(String(body))

describe("PterodactylGamePanel, Application API", () => {
  it.live("creates a user with the exact body and a JSON content type, then finds it by external id; a 404 is null", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const created = yield* panel.createUser("p1", { userId: "u_7", email: "u7@users.zh.invalid", username: "zh_u7", firstName: "Ann", lastName: "Lee" })
        const [post] = calls(sim, "POST /api/application/users")
        assert.match(String(post?.contentType), /^application\/json/)
        assert.deepStrictEqual(jsonOf(post?.body), {
          email: "u7@users.zh.invalid",
          username: "zh_u7",
          first_name: "Ann",
          last_name: "Lee",
          external_id: "u_7"
        })
        const user = yield* panel.userFor("p1", "u_7")
        assert.deepStrictEqual(user, { id: created.id, userId: "u_7", uuid: created.uuid, username: "zh_u7", email: "u7@users.zh.invalid" })
        assert.isNull(yield* panel.userFor("p1", "u 8"))
        const [lookup] = calls(sim, "GET /api/application/users/external/u_7")
        assert.deepStrictEqual([lookup?.key, lookup?.accept], ["application", "application/json"])
        const [missing] = calls(sim, "GET /api/application/users/external/u%208")
        assert.deepStrictEqual(missing?.query, {})
      })))

  it.live("creates a server with the body of §2.2 and decodes the 201 item", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const [free] = yield* panel.freeAllocations("p1", 1)
        const allocation = free?.id ?? 0
        const server = yield* panel.createServer("p1", newServer(allocation))
        const [held] = sim.control.servers()
        assert.deepStrictEqual(server, {
          id: held?.id ?? 0,
          orderId: "gs_42",
          uuid: held?.uuid ?? "",
          identifier: held?.identifier ?? "",
          name: "survival",
          state: "installing",
          suspended: false,
          node: 1,
          allocation,
          user: 1
        })
        const [request] = calls(sim, "POST /api/application/servers")
        assert.deepStrictEqual(jsonOf(request?.body), {
          name: "survival",
          user: 1,
          egg: 5,
          docker_image: "ghcr.io/pterodactyl/yolks:java_17",
          startup: "java -jar {{SERVER_JARFILE}}",
          environment: { SERVER_JARFILE: "server.jar", MINECRAFT_VERSION: "latest", BUILD_NUMBER: "latest" },
          limits: { memory: 2048, swap: 0, disk: 10240, io: 500, cpu: 200, threads: null },
          oom_disabled: false,
          feature_limits: { databases: 0, backups: 2, allocations: 1 },
          allocation: { default: allocation },
          external_id: "gs_42",
          start_on_completion: true,
          description: ""
        })
      }), { simulation: { installDurationMs: 60_000 } }))

  it.live("a creation whose answer was lost is found by its external id instead of being sent twice", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const [free] = yield* panel.freeAllocations("p1", 1)
        sim.control.failNext({ kind: "answerLost", method: "POST", path: "/api/application/servers", times: 1, status: 504 })
        const server = yield* panel.createServer("p1", newServer(free?.id ?? 0))
        assert.deepStrictEqual(sim.control.servers().map((s) => [s.id, s.external_id]), [[server.id, "gs_42"]])
        assert.strictEqual(calls(sim, "POST /api/application/servers").length, 1)
        assert.strictEqual(calls(sim, "GET /api/application/servers/external/gs_42").length, 1)
      })))

  it.live("servers pages through every page of the panel's servers", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const first = yield* aServer(panel, "gs_1")
        const second = yield* aServer(panel, "gs_2")
        sim.control.setExternalId(second.id, null)
        const servers = yield* panel.servers("p1")
        assert.deepStrictEqual(servers.map((s) => [s.id, s.orderId]), [[first.id, "gs_1"], [second.id, null]])
        assert.deepStrictEqual(calls(sim, "GET /api/application/servers?").length, 0)
        assert.deepStrictEqual(calls(sim, "GET /api/application/servers").filter((r) => r.path === "/api/application/servers").map((r) => r.query["page"]), ["1", "2"])
      }), { adapter: { pageSize: 1 } }))

  it.live("nodes carry their capacity and allocated_resources", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const hidden = sim.control.addNode({ name: "node-2", public: false, memory: 8192, disk: 51200, disk_overallocate: -1 })
        const before = yield* panel.nodes("p1")
        assert.deepStrictEqual(before[0], {
          id: 1,
          name: "node-1",
          public: true,
          maintenance: false,
          memoryMiB: 16384,
          memoryOverallocate: 0,
          diskMiB: 102400,
          diskOverallocate: 0,
          allocatedMemoryMiB: 0,
          allocatedDiskMiB: 0
        })
        assert.deepStrictEqual([before[1]?.id, before[1]?.public, before[1]?.diskOverallocate], [hidden, false, -1])
        yield* aServer(panel)
        const after = yield* panel.nodes("p1")
        assert.deepStrictEqual([after[0]?.allocatedMemoryMiB, after[0]?.allocatedDiskMiB], [1024, 3072])
      })))

  it.effect("nodes are cached 5 s, eggs 60 s, servers never", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const count = (route: string) => sim.control.requests().filter((r) => `${r.method} ${r.path}` === route).length
        const eggs = count("GET /api/application/nests/1/eggs/5")
        yield* panel.nodes("p1")
        yield* panel.server("p1", server.id)
        yield* TestClock.adjust("4 seconds")
        yield* panel.nodes("p1")
        yield* panel.egg("p1", 5)
        yield* panel.server("p1", server.id)
        assert.strictEqual(count("GET /api/application/nodes"), 1)
        assert.strictEqual(count(`GET /api/application/servers/${server.id}`), 2)
        yield* TestClock.adjust("2 seconds")
        yield* panel.nodes("p1")
        assert.strictEqual(count("GET /api/application/nodes"), 2)
        assert.strictEqual(count("GET /api/application/nests/1/eggs/5"), eggs)
        yield* TestClock.adjust("55 seconds")
        yield* panel.egg("p1", 5)
        assert.strictEqual(count("GET /api/application/nests/1/eggs/5"), eggs + 1)
      })))

  it.effect("the cached nodes are dropped when this adapter creates or deletes a server", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const nodes = () => calls(sim, "GET /api/application/nodes").filter((r) => r.path === "/api/application/nodes").length
        const [free] = yield* panel.freeAllocations("p1", 1)
        yield* panel.nodes("p1")
        const server = yield* panel.createServer("p1", newServer(free?.id ?? 0))
        yield* panel.nodes("p1")
        assert.strictEqual(nodes(), 2)
        yield* panel.deleteOurServer("p1", server.id, "gs_42")
        yield* panel.nodes("p1")
        yield* panel.nodes("p1")
        assert.strictEqual(nodes(), 3)
      })))

  it.live("free allocations page through every page with filter[server_id]=false", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        yield* aServer(panel)
        const free = yield* panel.freeAllocations("p1", 1)
        assert.deepStrictEqual(free.map((a) => a.port), [25566, 25567, 25568, 25569, 25570, 25571, 25572, 25573, 25574])
        assert.deepStrictEqual(free[0], { id: free[0]?.id ?? 0, node: 1, ip: "127.0.0.1", alias: null, port: 25566, assigned: false })
        const requests = calls(sim, "GET /api/application/nodes/1/allocations").slice(-3)
        assert.deepStrictEqual(requests.map((r) => r.query["page"]), ["1", "2", "3"])
        for (const r of requests) assert.strictEqual(r.query["filter[server_id]"], "false")
      }), { adapter: { pageSize: 4 } }))

  it.live("a panel older than 1.8 ignores filter[server_id]: the assigned allocations it lists are left out", () =>
    onSimulation((panel) =>
      Effect.gen(function*() {
        const server = yield* aServer(panel)
        const free = yield* panel.freeAllocations("p1", 1)
        assert.strictEqual(free.length, 9)
        assert.notInclude(free.map((a) => a.id), server.allocation)
      }), { simulation: { allocationServerFilter: false } }))

  it.live("an egg is looked for in every nest; both docker_images shapes are accepted", () =>
    onSimulation((panel, sim) =>
      Effect.gen(function*() {
        const listShaped = yield* panel.egg("p1", 6)
        assert.strictEqual(listShaped.nest, 2)
        assert.deepStrictEqual(listShaped.dockerImages, { "ghcr.io/pterodactyl/yolks:debian": "ghcr.io/pterodactyl/yolks:debian" })
        assert.deepStrictEqual(listShaped.variables, [{
          name: "Bedrock Version",
          envVariable: "BEDROCK_VERSION",
          defaultValue: "latest",
          userViewable: true,
          userEditable: true,
          accepts: { required: true, checks: [{ _tag: "AtMost", bound: 20, of: "length" }] }
        }])
        assert.strictEqual(calls(sim, "GET /api/application/nests/2/eggs/6")[0]?.query["include"], "variables")
        const objectShaped = yield* panel.egg("p1", 5)
        assert.deepStrictEqual(objectShaped.dockerImages, { "Java 17": "ghcr.io/pterodactyl/yolks:java_17", "Java 21": "ghcr.io/pterodactyl/yolks:java_21" })
        assert.deepInclude(objectShaped.variables.map((v) => v.accepts), { required: true, checks: [{ _tag: "Matches", pattern: /^([\w\d._-]+)(\.jar)$/ }] })
        const missing = yield* Effect.flip(panel.egg("p1", 9))
        assert.strictEqual(missing._tag, "PanelResourceNotFound")
        assert.deepStrictEqual(calls(sim, "GET /api/application/nests/").filter((r) => r.path.endsWith("/eggs/9")).length, 2)
      })))

  it.live("a panel not in the catalog is PanelUnknown", () =>
    onSimulation((panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(panel.server("nope", 1))
        assert.strictEqual(error._tag, "PanelUnknown")
      })))
})
