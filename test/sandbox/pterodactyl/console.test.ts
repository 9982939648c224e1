// Specification of the sandbox Wings console (reference/pterodactyl.md §3): the Origin check, the auth handshake,
// power and commands through the socket and the Client API, token expiry and re-auth, the denylist, deletion and
// suspension closing the socket.
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clients, Console, consoleToken, createServer, openConsole, type Sandbox, startSandbox } from "./pteroHttp.ts"
import { Claims, errorsOf, itemOf, readJson, Resources, Stats } from "./shapes.ts"

let sandbox: Sandbox
let app: ReturnType<typeof clients>["app"]
let client: ReturnType<typeof clients>["client"]

beforeAll(async () => {
  sandbox = await startSandbox()
  ;({ app, client } = clients(sandbox))
  sandbox.control.addAllocations(1, "127.0.0.1", Array.from({ length: 30 }, (_, i) => 25575 + i))
})
afterAll(() => sandbox.close())

const installedServer = async () => {
  const server = await createServer(app)
  await app.get(`/servers/${server.id}`)
  return server
}

const started = async (c: Console) => {
  const mark = c.frames.length
  c.send("set state", "start")
  await c.next("status", mark)
  while (!c.frames.slice(mark).some((f) => f.event === "status" && f.args?.[0] === "running")) await c.next("status", c.frames.length)
}

describe("the upgrade", () => {
  it("is refused with 403 unless Origin is exactly the panel URL", async () => {
    const server = await installedServer()
    const { socket } = await consoleToken(client, server.uuid)
    await expect(Console.open(socket, undefined)).rejects.toThrow("upgrade refused: 403")
    await expect(Console.open(socket, `${sandbox.url}/`)).rejects.toThrow("upgrade refused: 403")
    const ok = await Console.open(socket, sandbox.url)
    ok.close()
  })

  it("is refused before the handshake: 404 for an unknown server, an injected failure's status, 400 for another protocol", async () => {
    const server = await installedServer()
    const { socket } = await consoleToken(client, server.uuid)
    const unknown = socket.replace(server.uuid, "00000000-0000-4000-8000-000000000000")
    await expect(Console.open(unknown, sandbox.url)).rejects.toThrow("upgrade refused: 404")
    sandbox.control.failNext({ path: `/api/servers/${server.uuid}/ws`, times: 1, status: 502 })
    await expect(Console.open(socket, sandbox.url)).rejects.toThrow("upgrade refused: 502")
    const other = await new Promise<number>((resolve, reject) => {
      const req = request(socket.replace("ws", "http"), { headers: { Connection: "Upgrade", Upgrade: "h2c", Origin: sandbox.url } })
      req.once("response", (res) => resolve(res.statusCode ?? 0))
      req.once("upgrade", () => resolve(101))
      req.once("error", reject)
      req.end()
    })
    expect(other).toBe(400)
    const ok = await Console.open(socket, sandbox.url)
    ok.close()
  })

  it("hands out a token whose socket URL points at the node's Wings", async () => {
    const server = await installedServer()
    const { socket, token } = await consoleToken(client, server.identifier)
    expect(socket).toBe(`${sandbox.nodeUrl.replace("http", "ws")}/api/servers/${server.uuid}/ws`)
    const claims = readJson(Claims)(Buffer.from(token.split(".")[1]!, "base64url").toString())
    expect(claims).toMatchObject({ iss: sandbox.url, server_uuid: server.uuid, permissions: ["*", "admin.websocket.errors", "admin.websocket.install", "admin.websocket.transfer"] })
    expect(claims.aud).toContain(sandbox.nodeUrl)
    expect(sandbox.control.tokensIssued().at(-1)).toMatchObject({ kind: "websocket", serverUuid: server.uuid })
  })
})

describe("the protocol", () => {
  it("answers auth with auth success, then status and stats while offline", async () => {
    const server = await installedServer()
    const c = await openConsole(sandbox, client, server.uuid)
    expect((await c.next("status", 0)).args).toEqual(["offline"])
    expect(readJson(Stats)((await c.next("stats", 0)).args![0]!).state).toBe("offline")
    expect(sandbox.control.consoleSockets(server.uuid)).toBe(1)
    c.close()
    await c.closed
  })

  it("ignores binary frames: only text frames are read", async () => {
    const server = await installedServer()
    const { socket, token } = await consoleToken(client, server.uuid)
    const c = await Console.open(socket, sandbox.url)
    c.ws.send(Buffer.from(JSON.stringify({ event: "auth", args: [token] })))
    c.send("send stats")
    expect((await c.next("jwt error")).args).toEqual(["jwt: no jwt present"])
    expect(c.frames.some((f) => f.event === "auth success")).toBe(false)
    c.close()
    await c.closed
  })

  it("answers jwt error to a bad token and to any message before auth", async () => {
    const server = await installedServer()
    const { socket } = await consoleToken(client, server.uuid)
    const c = await Console.open(socket, sandbox.url)
    c.send("send stats")
    expect((await c.next("jwt error")).args).toEqual(["jwt: no jwt present"])
    c.send("auth", "a.b.c")
    expect((await c.next("jwt error", c.frames.length)).event).toBe("jwt error")
    const other = await installedServer()
    c.send("auth", (await consoleToken(client, other.uuid)).token)
    expect((await c.next("jwt error", c.frames.length)).args).toEqual(["jwt: server uuid mismatch"])
    c.close()
  })

  it("starts with startup lines ending Done, runs commands, streams stats and stops", async () => {
    const server = await installedServer()
    const c = await openConsole(sandbox, client, server.uuid)
    await started(c)
    expect(c.lines().at(-1)).toMatch(/Done \(.*\)! For help, type "help"/)
    const mark = c.frames.length
    c.send("send command", "say hello world")
    await c.next("console output", mark)
    while (c.lines(mark).length < 2) await c.next("console output", c.frames.length)
    expect(c.lines(mark)).toEqual(["say hello world", "[Server thread/INFO]: [Server] hello world"])
    expect(readJson(Stats)((await c.next("stats", c.frames.length)).args![0]!).state).toBe("running")
    const logs = c.frames.length
    c.send("send logs")
    await c.next("console output", logs)
    c.send("set state", "stop")
    await c.next("status", c.frames.length)
    while (sandbox.control.servers().find((s) => s.uuid === server.uuid)?.power !== "offline") await c.next("status", c.frames.length)
    c.close()
  })

  it("answers unknown commands, and ignores commands while offline", async () => {
    const server = await installedServer()
    const c = await openConsole(sandbox, client, server.uuid)
    const offline = c.frames.length
    c.send("send command", "list")
    c.send("send stats")
    await c.next("stats", offline)
    expect(c.lines(offline)).toEqual([])
    await started(c)
    const mark = c.frames.length
    c.send("send command", "frobnicate")
    while (c.lines(mark).length < 2) await c.next("console output", c.frames.length)
    expect(c.lines(mark)[1]).toBe("[Server thread/INFO]: Unknown command. Type \"help\" for help.")
    c.close()
  })

  it("drives the same state machine from the Client API power and command routes", async () => {
    const server = await installedServer()
    const c = await openConsole(sandbox, client, server.uuid)
    const offline = await client.post(`/servers/${server.uuid}/command`, { command: "list" })
    expect(offline.status).toBe(502)
    expect(errorsOf(offline.json)[0].detail).toBe("Server must be online in order to send commands.")
    expect((await client.post(`/servers/${server.uuid}/power`, { signal: "explode" })).status).toBe(422)
    const mark = c.frames.length
    expect((await client.post(`/servers/${server.uuid}/power`, { signal: "start" })).status).toBe(204)
    expect((await c.next("status", mark)).args).toEqual(["starting"])
    while (sandbox.control.servers().find((s) => s.uuid === server.uuid)?.power !== "running") await c.next("status", c.frames.length)
    const cmd = c.frames.length
    expect((await client.post(`/servers/${server.uuid}/command`, { command: "list" })).status).toBe(204)
    while (c.lines(cmd).length < 2) await c.next("console output", c.frames.length)
    expect(c.lines(cmd)[1]).toContain("There are 0 of a max of 20 players online")
    const res = itemOf(Resources)((await client.get(`/servers/${server.uuid}/resources`)).json)
    expect(res.object).toBe("stats")
    expect(res.attributes.current_state).toBe("running")
    sandbox.control.emitConsole(server.uuid, "hello from control")
    expect((await c.next("console output", c.frames.length)).args).toEqual(["hello from control"])
    c.close()
  })
})

describe("token lifecycle", () => {
  it("warns token expiring, then token expired, then jwt error until a re-auth on the same socket", async () => {
    const short = await startSandbox({ wingsTokenTtlMs: 800 })
    try {
      const { app: a, client: cl } = clients(short)
      const server = await createServer(a)
      await a.get(`/servers/${server.id}`)
      const c = await openConsole(short, cl, server.uuid)
      await c.next("token expiring", 0)
      await c.next("token expired", 0)
      const mark = c.frames.length
      c.send("send stats")
      expect((await c.next("jwt error", mark)).args).toEqual(["jwt: exp claim is invalid"])
      const reauth = c.frames.length
      c.send("auth", (await consoleToken(cl, server.uuid)).token)
      await c.next("auth success", reauth)
      const after = c.frames.length
      c.send("send stats")
      await c.next("stats", after)
      // A re-auth does not replay the first-auth status, nor add a second listener.
      expect(c.frames.slice(reauth).filter((f) => f.event === "status")).toEqual([])
      short.control.emitConsole(server.uuid, "once")
      await c.next("console output", after)
      const fence = c.frames.length
      c.send("send stats")
      await c.next("stats", fence)
      expect(c.lines(after)).toEqual(["once"])
      expect(short.control.consoleSockets(server.uuid)).toBe(1)
      c.close()
    } finally {
      await short.close()
    }
  })

  it("deny-lists every issued token after expireWingsTokens (as after a Wings restart)", async () => {
    const server = await installedServer()
    const c = await openConsole(sandbox, client, server.uuid)
    sandbox.control.expireWingsTokens()
    const mark = c.frames.length
    c.send("send stats")
    expect((await c.next("jwt error", mark)).args).toEqual(["jwt: created too far in past (denylist)"])
    const fresh = c.frames.length
    c.send("auth", (await consoleToken(client, server.uuid)).token)
    await c.next("auth success", fresh)
    c.close()
  })
})

describe("server events closing the socket", () => {
  it("sends deleted and closes 1001 when the server is deleted", async () => {
    const server = await installedServer()
    const c = await openConsole(sandbox, client, server.uuid)
    await app.delete(`/servers/${server.id}`)
    expect((await c.next("deleted", 0)).args).toEqual(["null"])
    expect((await c.closed).code).toBe(1001)
  })

  it("closes 4409 when the server is suspended, and refuses start while suspended", async () => {
    const server = await installedServer()
    const c = await openConsole(sandbox, client, server.uuid)
    await app.post(`/servers/${server.id}/suspend`)
    expect(await c.closed).toEqual({ code: 4409, reason: "server is suspended" })
    expect(sandbox.control.consoleSockets(server.uuid)).toBe(0)
  })

  it("answers set state start with daemon error while suspended on a socket that stayed open", async () => {
    const server = await installedServer()
    const { token, socket } = await consoleToken(client, server.uuid)
    await app.post(`/servers/${server.id}/suspend`)
    const c = await Console.open(socket, sandbox.url)
    c.send("auth", token)
    await c.next("auth success", 0)
    c.send("set state", "start")
    expect((await c.next("daemon error", 0)).args![0]).toContain(server.uuid)
    c.close()
  })
})
