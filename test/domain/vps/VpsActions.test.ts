// Specification of an owner's actions on a running VPS, on in-memory fakes: snapshot names and limits (also
// under concurrent requests), and a root-password reset that survives a restart.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { placeOrder } from "../../../domain/billing/Ordering.ts"
import { vmRefOf } from "../../../domain/vps/Lifecycle.ts"
import { createSnapshot, listSnapshots, ownedVps, powerVps, resetRootPassword, shutdownVps } from "../../../domain/vps/VpsActions.ts"
import { normaliseSshPublicKey } from "../../../domain/vps/VpsOptions.ts"
import { Orders } from "../../../ports/Orders.ts"
import { ShutdownTimedOut, Virtualization } from "../../../ports/Virtualization.ts"
import { MemoryCluster } from "../../../adapters/fake/MemoryVirtualization.ts"
import { VpsRecords } from "../../../ports/VpsRecords.ts"
import { logIn, terminal } from "../../support/virtualizationMother.ts"
import { vpsEnv, vpsOptions } from "../../support/vpsEnv.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"

const running = Effect.gen(function*() {
  const order = yield* placeOrder(alice, "vps-s", vpsOptions("act-1"))
  const orders = yield* Orders
  for (let i = 0; i < 500; i++) {
    const o = Option.getOrThrow(yield* orders.get(order.id))
    if (o.status === "completed") return Option.getOrThrow(yield* (yield* VpsRecords).get(o.serviceId!))
    if (o.status === "failed") return yield* Effect.die(new Error(o.failureReason ?? "failed"))
    yield* Effect.sleep("10 millis")
  }
  return yield* Effect.die(new Error("order did not complete"))
})

describe("VPS snapshots", () => {
  it.live("refuse names Proxmox would refuse, reserved names and duplicates, with their own errors", () =>
    Effect.gen(function*() {
      const vps = yield* running
      for (const name of ["a", "1abc", "current", "final-x", "with space", "x".repeat(41)]) {
        const error = yield* Effect.flip(createSnapshot(alice, vps.id, name, ""))
        assert.strictEqual(error._tag, "InvalidSnapshotName", name)
      }
      yield* createSnapshot(alice, vps.id, "before-upgrade", "")
      assert.strictEqual((yield* Effect.flip(createSnapshot(alice, vps.id, "before-upgrade", "")))._tag, "SnapshotExists")
    }).pipe(Effect.provide(vpsEnv())))

  it.live("never exceed the plan's limit, even when many are asked for at once", () =>
    Effect.gen(function*() {
      const vps = yield* running
      const results = yield* Effect.all(
        Array.from({ length: 6 }, (_, i) => Effect.result(createSnapshot(alice, vps.id, `snap-${i}`, ""))),
        { concurrency: "unbounded" }
      )
      const kept = yield* listSnapshots(alice, vps.id)
      assert.isAtMost(kept.length, 2)
      assert.strictEqual(results.filter((r) => r._tag === "Success").length, kept.length)
    }).pipe(Effect.provide(vpsEnv())))
})

describe("shutting down", () => {
  it.live("powers the guest off gracefully and records the VPS as stopped", () =>
    Effect.gen(function*() {
      const vps = yield* running
      const after = yield* shutdownVps(alice, vps.id, 60)
      assert.strictEqual(after.status, "stopped")
      assert.strictEqual((yield* (yield* Virtualization).status(vmRefOf(vps))).status, "stopped")
      // Idempotent, as a stop is: the guest is already off.
      assert.strictEqual((yield* shutdownVps(alice, vps.id, 60)).status, "stopped")
    }).pipe(Effect.provide(vpsEnv())))

  it.live("a guest that does not stop in time stays running and recorded so; a stop then forces it", () =>
    Effect.gen(function*() {
      const vps = yield* running
      yield* (yield* MemoryCluster).failNext("shutdown", new ShutdownTimedOut({ timeoutSeconds: 30 }))
      const error = yield* Effect.flip(shutdownVps(alice, vps.id, 30))
      assert.deepInclude(error, { _tag: "ShutdownTimedOut", timeoutSeconds: 30 })
      assert.strictEqual((yield* ownedVps(alice, vps.id)).status, "running")
      assert.strictEqual((yield* powerVps(alice, vps.id, "stop")).status, "stopped")
    }).pipe(Effect.provide(vpsEnv())))

  it.live("another customer's VPS does not exist for them", () =>
    Effect.gen(function*() {
      const vps = yield* running
      const error = yield* Effect.flip(shutdownVps("00000000-0000-4000-8000-0000000000b0", vps.id, 60))
      assert.strictEqual(error._tag, "VpsNotFound")
      assert.strictEqual((yield* ownedVps(alice, vps.id)).status, "running")
    }).pipe(Effect.provide(vpsEnv())))
})

describe("resetting the root password", () => {
  it.live("applies at once through the agent, and still holds after a restart", () =>
    Effect.gen(function*() {
      const vps = yield* running
      const { rootPassword } = yield* resetRootPassword(alice, vps.id)
      yield* powerVps(alice, vps.id, "stop")
      yield* powerVps(alice, vps.id, "start")
      yield* Effect.scoped(Effect.gen(function*() {
        const console = yield* (yield* Virtualization).openConsole(vmRefOf(vps))
        const term = yield* terminal(console)
        yield* logIn(term, "root", rootPassword)
      }))
    }).pipe(Effect.provide(vpsEnv())))
})

describe("SSH public keys", () => {
  it("are stored as OpenSSH writes them, whatever the spacing pasted", () => {
    assert.strictEqual(
      normaliseSshPublicKey("  ssh-ed25519\tAAAAC3Nza  me@laptop \n"),
      "ssh-ed25519 AAAAC3Nza me@laptop"
    )
  })
})

