// Specification of the sandbox Application API for users and servers (reference/pterodactyl.md §2): creation rules
// one 422 per field and rule, allocations, external-id lookups, the install state machine and suspension quirks.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Answer,
  clients,
  createServer,
  firstFreeAllocation,
  getServer,
  paperServer,
  type Sandbox,
  startSandbox
} from "./pteroHttp.ts"
import { Allocation, AppServer, ClientServer, createdUserOf, errorsOf, itemOf, listOf, Node, User, validationErrorsOf } from "./shapes.ts"

let sandbox: Sandbox
let app: ReturnType<typeof clients>["app"]
let client: ReturnType<typeof clients>["client"]

beforeAll(async () => {
  sandbox = await startSandbox()
  ;({ app, client } = clients(sandbox))
  // The ten seeded ports are not enough for this file.
  sandbox.control.addAllocations(1, "127.0.0.1", Array.from({ length: 40 }, (_, i) => 25575 + i))
})
afterAll(() => sandbox.close())

const freeAllocation = () => firstFreeAllocation(app)

const create = async (overrides: Record<string, unknown> = {}) => {
  const res = await app.post("/servers", paperServer(await freeAllocation(), overrides))
  expect(res.status, res.text).toBe(201)
  return itemOf(AppServer)(res.json).attributes
}

const fields = (res: Answer) => validationErrorsOf(res.json).map((e) => `${e.meta.source_field}/${e.meta.rule}`)

describe("server creation validation", () => {
  it("requires every required egg variable even though it has a default", async () => {
    const res = await app.post("/servers", paperServer(await freeAllocation(), { environment: { MINECRAFT_VERSION: "latest", BUILD_NUMBER: "1" } }))
    expect(res.status).toBe(422)
    expect(errorsOf(res.json)).toEqual([{
      code: "ValidationException",
      status: "422",
      detail: "The Server Jar File variable field is required.",
      meta: { source_field: "environment.SERVER_JARFILE", rule: "required" }
    }])
  })

  it("validates egg variables by their regex and max rules, the non-editable one included", async () => {
    const res = await app.post("/servers", paperServer(await freeAllocation(), {
      environment: { SERVER_JARFILE: "server.zip", MINECRAFT_VERSION: "latest", BUILD_NUMBER: "x".repeat(21) }
    }))
    expect(fields(res)).toEqual(["environment.SERVER_JARFILE/regex", "environment.BUILD_NUMBER/max"])
  })

  it("reports io out of 10–1000, swap below -1 and a missing environment / feature_limits key", async () => {
    const body = paperServer(await freeAllocation(), { limits: { memory: 1024, swap: -2, disk: 1, io: 5, cpu: 0 }, feature_limits: { databases: 0 } })
    const { environment: _, ...withoutEnv } = body
    const res = await app.post("/servers", withoutEnv)
    expect(fields(res)).toEqual(expect.arrayContaining([
      "environment/present",
      "limits.swap/min",
      "limits.io/between",
      "feature_limits.backups/present"
    ]))
    expect(validationErrorsOf(res.json).find((e) => e.meta.source_field === "limits.io")?.detail).toBe("The limits.io must be between 10 and 1000.")
  })

  it("requires name, user, egg, docker_image and startup", async () => {
    const res = await app.post("/servers", { environment: {}, limits: { memory: 0, swap: 0, disk: 0, io: 500, cpu: 0 }, feature_limits: { databases: null, backups: null }, allocation: { default: await freeAllocation() } })
    expect(fields(res)).toEqual(["name/required", "user/required", "egg/required", "docker_image/required", "startup/required"])
  })

  it("refuses an allocation that is taken or unknown", async () => {
    const taken = await create()
    const again = await app.post("/servers", paperServer(taken.allocation))
    expect(again.status).toBe(422)
    expect(errorsOf(again.json)[0]).toMatchObject({ detail: "The selected allocation.default is invalid.", meta: { source_field: "allocation.default", rule: "exists" } })
    expect(fields(await app.post("/servers", paperServer(9999)))).toEqual(["allocation.default/exists"])
  })

  it("refuses a reused external_id with rule unique", async () => {
    await create({ external_id: "sub_unique" })
    expect(fields(await app.post("/servers", paperServer(await freeAllocation(), { external_id: "sub_unique" })))).toEqual(["external_id/unique"])
  })

  it("answers 201 installing with oom_disabled defaulting to true under limits", async () => {
    const server = await create({ external_id: "sub_created" })
    expect(server.status).toBe("installing")
    expect(server.container.installed).toBe(0)
    expect(server.limits.oom_disabled).toBe(true)
    expect(server.identifier).toBe(server.uuid.slice(0, 8))
    expect(itemOf(Node)((await app.get(`/nodes/1`)).json).attributes.allocated_resources.memory).toBeGreaterThanOrEqual(1024)
  })

  it("auto-deploys to a free allocation in the port range", async () => {
    const body: Record<string, unknown> = paperServer(0, { deploy: { locations: [1], dedicated_ip: false, port_range: ["25565-25574"] } })
    delete body["allocation"]
    const res = await app.post("/servers", body)
    expect(res.status, res.text).toBe(201)
    const id = itemOf(AppServer)(res.json).attributes.id
    const alloc = listOf(Allocation)((await app.get(`/nodes/1/allocations?filter[server_id]=${id}`)).json).data[0]?.attributes
    expect(alloc?.port).toBeGreaterThanOrEqual(25565)
    expect(alloc?.assigned).toBe(true)
  })
})

describe("lookups", () => {
  it("matches /external/{id} exactly and filter[external_id] partially", async () => {
    await create({ external_id: "order-12" })
    await create({ external_id: "order-123" })
    expect(itemOf(AppServer)((await app.get("/servers/external/order-12")).json).attributes.external_id).toBe("order-12")
    expect((await app.get("/servers/external/order-1")).status).toBe(404)
    const partial = listOf(AppServer)((await app.get("/servers?filter[external_id]=order-12")).json).data.map((d) => d.attributes.external_id)
    expect(partial.sort()).toEqual(["order-12", "order-123"])
  })

  it("creates users with unique email and username and the p_username rule, found exactly by external id", async () => {
    const ok = await app.post("/users", { email: "ann@example.com", username: "Ann_1", first_name: "Ann", last_name: "A", external_id: "u-7" })
    expect(ok.status).toBe(201)
    const created = createdUserOf(ok.json)
    expect(created.attributes.username).toBe("ann_1")
    expect(created.meta.resource).toBe(`${sandbox.url}/api/application/users/${created.attributes.id}`)
    const dup = await app.post("/users", { email: "ann@example.com", username: "ann_1", first_name: "A", last_name: "B" })
    expect(fields(dup)).toEqual(["email/unique", "username/unique"])
    const bad = await app.post("/users", { email: "b@example.com", username: "_bad", first_name: "A", last_name: "B" })
    expect(fields(bad)).toEqual(["username/p_username"])
    expect(itemOf(User)((await app.get("/users/external/u-7")).json).attributes.email).toBe("ann@example.com")
    expect((await app.get("/users/external/u-")).status).toBe(404)
    expect(listOf(User)((await app.get("/users?filter[email]=example.com")).json).data.length).toBe(1)
  })
})

describe("install state machine", () => {
  it("succeeds: installing in the 201, null on the next read", async () => {
    const server = await create()
    expect((await getServer(app, server.id)).status).toBe(null)
    expect((await getServer(app, server.id)).container.installed).toBe(1)
  })

  it("fails per external id: install_failed, installed 0, and a failed reinstall is reinstall_failed", async () => {
    sandbox.control.setInstallOutcome({ externalId: "will-fail" }, "fail")
    const server = await create({ external_id: "will-fail" })
    const after = await getServer(app, server.id)
    expect(after.status).toBe("install_failed")
    expect(after.container.installed).toBe(0)
    expect((await app.post(`/servers/${server.id}/reinstall`)).status).toBe(204)
    expect((await getServer(app, server.id)).status).toBe("reinstall_failed")
  })

  it("hangs: stays installing, the Client API answers 409 except GET server", async () => {
    sandbox.control.setInstallOutcome({ externalId: "will-hang" }, "hang")
    const server = await create({ external_id: "will-hang" })
    expect((await getServer(app, server.id)).status).toBe("installing")
    expect(itemOf(ClientServer)((await client.get(`/servers/${server.identifier}`)).json).attributes.is_installing).toBe(true)
    const files = await client.get(`/servers/${server.uuid}/files/list`)
    expect(files.status).toBe(409)
    expect(errorsOf(files.json)[0].detail).toBe("This server has not yet completed its installation process, please try again later.")
    // The root admin still gets a console token while installing (§3.4).
    expect((await client.get(`/servers/${server.uuid}/websocket`)).status).toBe(200)
  })

  it("keeps a suspension through the install callback, and unsuspend then reads as installed", async () => {
    const slow = await startSandbox({ installDurationMs: 150 })
    try {
      const a = clients(slow).app
      const server = await createServer(a)
      expect((await a.post(`/servers/${server.id}/suspend`)).status).toBe(204)
      await new Promise((r) => setTimeout(r, 250))
      expect((await getServer(a, server.id)).status).toBe("suspended")
      expect((await a.post(`/servers/${server.id}/unsuspend`)).status).toBe(204)
      expect((await getServer(a, server.id)).status).toBe(null)
    } finally {
      await slow.close()
    }
  })

  it("unsuspend mid-install sets status null at once", async () => {
    sandbox.control.setInstallOutcome({ externalId: "mid" }, "hang")
    const server = await create({ external_id: "mid" })
    await app.post(`/servers/${server.id}/suspend`)
    await app.post(`/servers/${server.id}/unsuspend`)
    expect((await getServer(app, server.id)).status).toBe(null)
  })
})

describe("suspension, reinstall and deletion", () => {
  it("suspend is idempotent, sets suspended, and the Client API answers 409 except GET server", async () => {
    const server = await create()
    await app.get(`/servers/${server.id}`)
    expect((await app.post(`/servers/${server.id}/suspend`)).status).toBe(204)
    expect((await app.post(`/servers/${server.id}/suspend`)).status).toBe(204)
    const read = await getServer(app, server.id)
    expect([read.status, read.suspended]).toEqual(["suspended", true])
    expect((await client.get(`/servers/${server.uuid}`)).status).toBe(200)
    for (const path of ["/resources", "/websocket", "/files/list", "/backups"]) {
      const res = await client.get(`/servers/${server.uuid}${path}`)
      expect(res.status, path).toBe(409)
      expect(errorsOf(res.json)[0]).toMatchObject({ code: "ConflictHttpException", detail: "This server is currently suspended and the functionality requested is unavailable." })
    }
    expect((await client.post(`/servers/${server.uuid}/power`, { signal: "start" })).status).toBe(409)
  })

  it("reinstall lifts a suspension by setting installing", async () => {
    sandbox.control.setInstallOutcome({ externalId: "re-hang" }, "hang")
    const server = await create({ external_id: "re-hang" })
    await app.post(`/servers/${server.id}/suspend`)
    await app.post(`/servers/${server.id}/reinstall`)
    const read = await getServer(app, server.id)
    expect([read.status, read.suspended]).toEqual(["installing", false])
  })

  it("delete and force delete free the allocation; unknown servers 404", async () => {
    const a = await create()
    const b = await create()
    expect((await app.delete(`/servers/${a.id}`)).status).toBe(204)
    expect((await app.delete(`/servers/${b.id}/force`)).status).toBe(204)
    expect((await app.get(`/servers/${a.id}`)).status).toBe(404)
    expect((await client.get(`/servers/${b.uuid}`)).status).toBe(404)
    const free = listOf(Allocation)((await app.get("/nodes/1/allocations?filter[server_id]=false&per_page=100")).json).data.map((d) => d.attributes.id)
    expect(free).toEqual(expect.arrayContaining([a.allocation, b.allocation]))
    expect(sandbox.control.servers().some((s) => s.id === a.id)).toBe(false)
  })

  it("addNode and addAllocations extend the panel", async () => {
    const node = sandbox.control.addNode({ name: "node-extra", memory: 2048 })
    const [alloc] = sandbox.control.addAllocations(node, "127.0.0.2", [30000])
    const server = itemOf(AppServer)((await app.post("/servers", paperServer(alloc!))).json).attributes
    expect(server.node).toBe(node)
    expect(itemOf(Node)((await app.get(`/nodes/${node}`)).json).attributes.name).toBe("node-extra")
  })
})
