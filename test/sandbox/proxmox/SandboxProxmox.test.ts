// The sandbox as Effect code uses it: a scoped resource, and a layer holding one instance, both closed with their scope.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  layerSandboxProxmox,
  sandboxProxmox,
  SandboxProxmoxInstance
} from "../../../adapters/proxmox/sandbox/SandboxProxmox.ts"

const status = (url: string) => Effect.promise(() => fetch(`${url}/api2/json/version`).then((r) => r.status))

const TOKEN = { id: "root@pam!zh", secret: "s3cret" }
const call = (url: string, method: string, path: string, form?: string) =>
  fetch(`${url}/api2/json${path}`, {
    method,
    headers: { Authorization: `PVEAPIToken=${TOKEN.id}=${TOKEN.secret}`, "Content-Type": "application/x-www-form-urlencoded" },
    ...(form === undefined ? {} : { body: form })
  })

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

  it.effect("closes at once with calls under way: a hung one, and a config write waiting for a VM's flock", () =>
    Effect.gen(function*() {
      const started = { at: 0 }
      const pending = yield* Effect.scoped(Effect.gen(function*() {
        const sandbox = yield* sandboxProxmox({ taskDurations: { default: 0, resize: 60_000 }, tokens: [TOKEN] })
        const { url } = sandbox
        yield* Effect.promise(() => call(url, "POST", "/nodes/pve1/qemu/9000/clone", "newid=500&full=1"))
        const resize = yield* Effect.promise(() => call(url, "PUT", "/nodes/pve1/qemu/500/resize", "disk=scsi0&size=%2B1G"))
        assert.strictEqual(resize.status, 200)
        sandbox.control.inject({ match: { path: /\/version$/ }, kind: { _tag: "hang" } })
        const answers = [call(url, "PUT", "/nodes/pve1/qemu/500/config", "cores=2"), call(url, "GET", "/version")]
          .map((answer) => answer.then((r) => `answered ${r.status}`, () => "cut"))
        while (sandbox.control.requests().length < 4) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
        started.at = Date.now()
        return answers
      }))
      assert.isBelow(Date.now() - started.at, 1_000)
      assert.deepStrictEqual(yield* Effect.promise(() => Promise.all(pending)), ["cut", "cut"])
    }))

  it.effect("is provided by its layer", () =>
    Effect.gen(function*() {
      const sandbox = yield* SandboxProxmoxInstance
      assert.strictEqual(yield* status(sandbox.url), 401)
      assert.isTrue(sandbox.control.state().vms.some((vm) => vm.vmid === 9000 && vm.template))
    }).pipe(Effect.provide(layerSandboxProxmox())))
})
