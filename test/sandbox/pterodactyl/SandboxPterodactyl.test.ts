// The sandbox as Effect code uses it: a scoped resource, and a layer holding one instance, both closed with their scope.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  layerSandboxPterodactyl,
  sandboxPterodactyl,
  SandboxPterodactylInstance
} from "../../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"

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
