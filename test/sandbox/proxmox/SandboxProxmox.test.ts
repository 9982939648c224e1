// The sandbox as Effect code uses it: a scoped resource, and a layer holding one instance, both closed with their scope.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  layerSandboxProxmox,
  sandboxProxmox,
  SandboxProxmoxInstance
} from "../../../adapters/proxmox/sandbox/SandboxProxmox.ts"

const status = (url: string) => Effect.promise(() => fetch(`${url}/api2/json/version`).then((r) => r.status))

describe("SandboxProxmox in Effect", () => {
  it.effect("is served while its scope is open and gone once it closes", () =>
    Effect.gen(function*() {
      const url = yield* Effect.scoped(Effect.gen(function*() {
        const sandbox = yield* sandboxProxmox({ taskDurations: { default: 0 } })
        assert.strictEqual(yield* status(sandbox.url), 401)
        return sandbox.url
      }))
      const after = yield* Effect.promise(() => fetch(`${url}/api2/json/version`).then(() => "answered", () => "refused"))
      assert.strictEqual(after, "refused")
    }))

  it.effect("is provided by its layer", () =>
    Effect.gen(function*() {
      const sandbox = yield* SandboxProxmoxInstance
      assert.strictEqual(yield* status(sandbox.url), 401)
      assert.isTrue(sandbox.control.state().vms.some((vm) => vm.vmid === 9000 && vm.template))
    }).pipe(Effect.provide(layerSandboxProxmox())))
})
