// The Application-API operations specified against a scripted panel on loopback: the exact requests (method, path,
// headers, body of reference/pterodactyl.md §2), the decoding of users, servers, nodes, allocations and eggs, the
// lookups by external id, idempotent creation, and the caches of eggs and nodes. The lookups and deletions a faithful
// panel shows as well are specified on the simulated panel (requests.test.ts).
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { NewServer } from "../../../ports/GamePanel.ts"
import { applicationKey, errors, list, scenario, serverAttributes, serverItem, userItem } from "./stubPanel.ts"

const newServer: NewServer = {
  name: "survival",
  orderId: "gs_42",
  user: 3,
  egg: 5,
  dockerImage: "ghcr.io/pterodactyl/yolks:java_17",
  startup: "java -jar {{SERVER_JARFILE}}",
  environment: { SERVER_JARFILE: "server.jar", MINECRAFT_VERSION: "latest", BUILD_NUMBER: "latest" },
  limits: { memoryMiB: 2048, swapMiB: 0, diskMiB: 10240, io: 500, cpuPercent: 200 },
  oomDisabled: false,
  featureLimits: { databases: 0, backups: 2, allocations: 1 },
  allocation: 401,
  startOnCompletion: true
}

const node = (id: number, overrides: Record<string, unknown> = {}) => ({
  id,
  uuid: `node-${id}`,
  public: true,
  name: `node-${id}`,
  location_id: 1,
  fqdn: "wings.internal",
  scheme: "https",
  maintenance_mode: false,
  memory: 16384,
  memory_overallocate: 0,
  disk: 102400,
  disk_overallocate: -1,
  allocated_resources: { memory: 4096, disk: 20480 },
  ...overrides
})

const allocation = (id: number, port: number) => ({ id, ip: "10.0.0.5", alias: "play.zh.example", port, notes: null, assigned: false })

const egg = (nest: number, dockerImages: unknown) => ({
  json: {
    object: "egg",
    attributes: {
      id: 5,
      uuid: "e5",
      name: "Paper",
      nest,
      author: "a@b.c",
      description: "",
      docker_image: "ghcr.io/pterodactyl/yolks:java_17",
      docker_images: dockerImages,
      startup: "java -jar {{SERVER_JARFILE}}",
      relationships: {
        variables: {
          object: "list",
          data: [{
            object: "egg_variable",
            attributes: {
              id: 1,
              egg_id: 5,
              name: "Server Jar File",
              description: "",
              env_variable: "SERVER_JARFILE",
              default_value: "server.jar",
              user_viewable: true,
              user_editable: true,
              rules: "required|regex:/^([\\w\\d._-]+)(\\.jar)$/"
            }
          }]
        }
      }
    }
  }
})

describe("PterodactylGamePanel, Application API", () => {
  it.live("finds a user by external id with the application key, and answers null for a 404", () =>
    scenario((stub) => {
      stub.route("GET /api/application/users/external/u_7", () => userItem())
      stub.route("GET /api/application/users/external/u 8", () => errors(404, "NotFoundHttpException", "not found"))
    }, (panel, stub) =>
      Effect.gen(function*() {
        const user = yield* panel.userFor("p1", "u_7")
        assert.deepStrictEqual(user, {
          id: 3,
          userId: "u_7",
          uuid: "c4022c6c-9bf1-4a23-bff9-519cef6b7a3a",
          username: "zh_u7",
          email: "u7@users.zh.invalid"
        })
        assert.isNull(yield* panel.userFor("p1", "u 8"))
        const [request] = stub.calls("GET /api/application/users/external/u_7")
        assert.strictEqual(request?.headers.authorization, `Bearer ${applicationKey}`)
        assert.strictEqual(request?.headers.accept, "application/json")
        assert.strictEqual(stub.calls("GET /api/application/users/external/u 8")[0]?.query.toString(), "")
      })))

  it.live("creates a user with the exact body and a JSON content type", () =>
    scenario((stub) => stub.route("POST /api/application/users", () => ({ ...userItem(), status: 201 })), (panel, stub) =>
      Effect.gen(function*() {
        const user = yield* panel.createUser("p1", {
          userId: "u_7",
          email: "u7@users.zh.invalid",
          username: "zh_u7",
          firstName: "Ann",
          lastName: "Lee"
        })
        assert.strictEqual(user.id, 3)
        const [request] = stub.calls("POST /api/application/users")
        assert.match(String(request?.headers["content-type"]), /^application\/json/)
        assert.deepStrictEqual(JSON.parse(String(request?.body)), {
          email: "u7@users.zh.invalid",
          username: "zh_u7",
          first_name: "Ann",
          last_name: "Lee",
          external_id: "u_7"
        })
      })))

  it.live("creates a server with the body of §2.2 and decodes the 201 item", () =>
    scenario((stub) => stub.route("POST /api/application/servers", () => ({ ...serverItem(), status: 201 })), (panel, stub) =>
      Effect.gen(function*() {
        const server = yield* panel.createServer("p1", newServer)
        assert.deepStrictEqual(server, {
          id: 12,
          orderId: "gs_42",
          uuid: "4600605e-6e5a-4f29-b3c4-fc01b7aa1192",
          identifier: "4600605e",
          name: "survival",
          state: "installing",
          suspended: false,
          node: 1,
          allocation: 401,
          user: 3
        })
        const [request] = stub.calls("POST /api/application/servers")
        assert.deepStrictEqual(JSON.parse(String(request?.body)), {
          name: "survival",
          user: 3,
          egg: 5,
          docker_image: "ghcr.io/pterodactyl/yolks:java_17",
          startup: "java -jar {{SERVER_JARFILE}}",
          environment: { SERVER_JARFILE: "server.jar", MINECRAFT_VERSION: "latest", BUILD_NUMBER: "latest" },
          limits: { memory: 2048, swap: 0, disk: 10240, io: 500, cpu: 200, threads: null },
          oom_disabled: false,
          feature_limits: { databases: 0, backups: 2, allocations: 1 },
          allocation: { default: 401 },
          external_id: "gs_42",
          start_on_completion: true,
          description: ""
        })
      })))

  it.live("a creation whose answer was lost is found by its external id instead of being sent twice", () =>
    scenario((stub) => {
      stub.route("POST /api/application/servers", () => errors(504, "DaemonConnectionException", "no answer"))
      stub.route("GET /api/application/servers/external/gs_42", () => serverItem())
    }, (panel, stub) =>
      Effect.gen(function*() {
        const server = yield* panel.createServer("p1", newServer)
        assert.strictEqual(server.id, 12)
        assert.strictEqual(stub.calls("POST /api/application/servers").length, 1)
      })))

  it.live("servers pages through every page of the panel's servers", () =>
    scenario((stub) => {
      stub.route("GET /api/application/servers", (request) =>
        request.query.get("page") === "1"
          ? list([serverAttributes({ id: 12 })], "server", 1, 2)
          : list([serverAttributes({ id: 13, external_id: null })], "server", 2, 2))
    }, (panel) =>
      Effect.gen(function*() {
        const servers = yield* panel.servers("p1")
        assert.deepStrictEqual(servers.map((s) => [s.id, s.orderId]), [[12, "gs_42"], [13, null]])
      })))

  it.live("nodes carry allocated_resources", () =>
    scenario((stub) => stub.route("GET /api/application/nodes", () => list([node(1), node(2, { public: false, maintenance_mode: true })], "node")), (panel) =>
      Effect.gen(function*() {
        const nodes = yield* panel.nodes("p1")
        assert.deepStrictEqual(nodes[0], {
          id: 1,
          name: "node-1",
          public: true,
          maintenance: false,
          memoryMiB: 16384,
          memoryOverallocate: 0,
          diskMiB: 102400,
          diskOverallocate: -1,
          allocatedMemoryMiB: 4096,
          allocatedDiskMiB: 20480
        })
        assert.deepStrictEqual([nodes[1]?.public, nodes[1]?.maintenance], [false, true])
      })))

  it.effect("nodes are cached 5 s, eggs 60 s, servers never", () =>
    scenario((stub) => {
      stub.route("GET /api/application/nodes", () => list([node(1)], "node"))
      stub.route("GET /api/application/nests", () => list([{ id: 1 }], "nest"))
      stub.route("GET /api/application/nests/1/eggs/5", () => egg(1, { "Java 17": "ghcr.io/pterodactyl/yolks:java_17" }))
      stub.route("GET /api/application/servers/12", () => serverItem())
    }, (panel, stub) =>
      Effect.gen(function*() {
        yield* panel.nodes("p1")
        yield* panel.egg("p1", 5)
        yield* panel.server("p1", 12)
        yield* TestClock.adjust("4 seconds")
        yield* panel.nodes("p1")
        yield* panel.egg("p1", 5)
        yield* panel.server("p1", 12)
        assert.strictEqual(stub.calls("GET /api/application/nodes").length, 1)
        assert.strictEqual(stub.calls("GET /api/application/servers/12").length, 2)
        yield* TestClock.adjust("2 seconds")
        yield* panel.nodes("p1")
        assert.strictEqual(stub.calls("GET /api/application/nodes").length, 2)
        assert.strictEqual(stub.calls("GET /api/application/nests/1/eggs/5").length, 1)
        yield* TestClock.adjust("55 seconds")
        yield* panel.egg("p1", 5)
        assert.strictEqual(stub.calls("GET /api/application/nests/1/eggs/5").length, 2)
      })))

  it.effect("the cached nodes are dropped when this adapter creates or deletes a server", () =>
    scenario((stub) => {
      stub.route("GET /api/application/nodes", () => list([node(1)], "node"))
      stub.route("POST /api/application/servers", () => ({ ...serverItem(), status: 201 }))
      stub.route("GET /api/application/servers/12", () => serverItem())
      stub.route("DELETE /api/application/servers/12", () => ({ status: 204 }))
    }, (panel, stub) =>
      Effect.gen(function*() {
        yield* panel.nodes("p1")
        yield* panel.createServer("p1", newServer)
        yield* panel.nodes("p1")
        assert.strictEqual(stub.calls("GET /api/application/nodes").length, 2)
        yield* panel.deleteOurServer("p1", 12, "gs_42")
        yield* panel.nodes("p1")
        yield* panel.nodes("p1")
        assert.strictEqual(stub.calls("GET /api/application/nodes").length, 3)
      })))

  it.live("free allocations page through every page with filter[server_id]=false", () =>
    scenario((stub) =>
      stub.route("GET /api/application/nodes/1/allocations", (request) => {
        const page = Number(request.query.get("page") ?? "1")
        return page === 1
          ? list([allocation(401, 25565), allocation(402, 25566)], "allocation", 1, 3)
          : page === 2
          ? list([allocation(403, 25567)], "allocation", 2, 3)
          : list([{ ...allocation(404, 25568), assigned: true }, allocation(405, 25569)], "allocation", 3, 3)
      }), (panel, stub) =>
      Effect.gen(function*() {
        const free = yield* panel.freeAllocations("p1", 1)
        assert.deepStrictEqual(free.map((a) => a.id), [401, 402, 403, 405])
        assert.deepStrictEqual(free[0], { id: 401, node: 1, ip: "10.0.0.5", alias: "play.zh.example", port: 25565, assigned: false })
        const requests = stub.calls("GET /api/application/nodes/1/allocations")
        assert.deepStrictEqual(requests.map((r) => r.query.get("page")), ["1", "2", "3"])
        for (const r of requests) assert.strictEqual(r.query.get("filter[server_id]"), "false")
      })))

  it.live("an egg is looked for in every nest; both docker_images shapes are accepted", () =>
    scenario((stub) => {
      stub.route("GET /api/application/nests", (request) =>
        request.query.get("page") === "2" ? list([{ id: 2 }], "nest", 2, 2) : list([{ id: 1 }], "nest", 1, 2))
      stub.route("GET /api/application/nests/1/eggs/5", () => errors(404, "NotFoundHttpException", "no"))
      stub.route("GET /api/application/nests/2/eggs/5", () => egg(2, ["ghcr.io/pterodactyl/yolks:debian"]))
      stub.route("GET /api/application/nests/1/eggs/6", () => egg(1, { "Java 17": "ghcr.io/pterodactyl/yolks:java_17" }))
      stub.route("GET /api/application/nests/2/eggs/9", () => errors(404, "NotFoundHttpException", "no"))
      stub.route("GET /api/application/nests/1/eggs/9", () => errors(404, "NotFoundHttpException", "no"))
    }, (panel, stub) =>
      Effect.gen(function*() {
        const listShaped = yield* panel.egg("p1", 5)
        assert.strictEqual(listShaped.nest, 2)
        assert.deepStrictEqual(listShaped.dockerImages, { "ghcr.io/pterodactyl/yolks:debian": "ghcr.io/pterodactyl/yolks:debian" })
        assert.deepStrictEqual(listShaped.variables, [{
          name: "Server Jar File",
          envVariable: "SERVER_JARFILE",
          defaultValue: "server.jar",
          userViewable: true,
          userEditable: true,
          accepts: { required: true, checks: [{ _tag: "Matches", pattern: /^([\w\d._-]+)(\.jar)$/ }] }
        }])
        assert.strictEqual(stub.calls("GET /api/application/nests/2/eggs/5")[0]?.query.get("include"), "variables")
        const objectShaped = yield* panel.egg("p1", 6)
        assert.deepStrictEqual(objectShaped.dockerImages, { "Java 17": "ghcr.io/pterodactyl/yolks:java_17" })
        const missing = yield* Effect.flip(panel.egg("p1", 9))
        assert.strictEqual(missing._tag, "PanelResourceNotFound")
      })))

  it.live("a panel not in the catalog is PanelUnknown", () =>
    scenario(() => {}, (panel) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(panel.server("nope", 1))
        assert.strictEqual(error._tag, "PanelUnknown")
      })))
})

