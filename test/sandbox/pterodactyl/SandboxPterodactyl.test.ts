// The sandbox as Effect code uses it: a scoped resource, and a layer holding one instance, both closed with their scope;
// closing it drops what is still open on it.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  layerSandboxPterodactyl,
  sandboxPterodactyl,
  SandboxPterodactylInstance
} from "../../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { clients, Console, createServer, startSandbox } from "./pteroHttp.ts"
import { itemOf, SignedUrl, websocketOf } from "./shapes.ts"

const status = (url: string) =>
  Effect.promise(() => fetch(`${url}/api/application/nodes`, { headers: { Accept: "application/json" } }).then((r) => r.status))

describe("SandboxPterodactyl in Effect", () => {
  it.effect("is served while its scope is open and gone once it closes", () =>
    Effect.gen(function*() {
      const { url, nodeUrl } = yield* Effect.scoped(Effect.gen(function*() {
        const sandbox = yield* sandboxPterodactyl({ installDurationMs: 0 })
        assert.strictEqual(yield* status(sandbox.url), 401)
        return sandbox
      }))
      for (const base of [url, nodeUrl]) {
        const after = yield* Effect.promise(() => fetch(base).then(() => "answered", () => "refused"))
        assert.strictEqual(after, "refused")
      }
    }))

  it.effect("is provided by its layer, with keys of the documented shape", () =>
    Effect.gen(function*() {
      const sandbox = yield* SandboxPterodactylInstance
      assert.match(sandbox.applicationKey, /^ptla_[A-Za-z0-9]{43}$/)
      assert.match(sandbox.clientKey, /^ptlc_[A-Za-z0-9]{43}$/)
      assert.notStrictEqual(sandbox.url, sandbox.nodeUrl)
      assert.strictEqual(yield* status(sandbox.url), 401)
    }).pipe(Effect.provide(layerSandboxPterodactyl())))
})

describe("SandboxPterodactyl stopping", () => {
  it("drops an open console socket and a download left half read, and its scope closes at once", async () => {
    const sandbox = await startSandbox()
    const { app, client } = clients(sandbox)
    const server = await createServer(app)
    await app.get(`/servers/${server.id}`)
    const { socket, token } = websocketOf((await client.get(`/servers/${server.uuid}/websocket`)).json).data
    const console = await Console.open(socket, sandbox.url)
    const authed = console.next("auth success")
    console.send("auth", token)
    await authed
    sandbox.control.putFile(server.uuid, "/world.bin", { syntheticBytes: 64 * 1024 * 1024 })
    const signed = itemOf(SignedUrl)((await client.get(`/servers/${server.uuid}/files/download?file=/world.bin`)).json)
    const download = await fetch(signed.attributes.url)
    const reader = download.body?.getReader()
    assert.isDefined(reader)
    assert.isFalse((await reader.read()).done)
    assert.strictEqual(sandbox.control.downloadsInFlight(), 1)
    const started = Date.now()
    await sandbox.close()
    assert.isBelow(Date.now() - started, 2_000)
    assert.strictEqual((await console.closed).code, 1006)
    const rest = await (async () => {
      for (;;) if ((await reader.read()).done) return "ended"
    })().catch(() => "dropped")
    assert.strictEqual(rest, "dropped")
    assert.strictEqual(sandbox.control.downloadsInFlight(), 0)
  })
})
