// Specification of an owner's actions on a running VPS, on in-memory fakes: snapshot names and limits (also
// under concurrent requests, one held inside the hypervisor's call while others arrive), and a root-password reset
// that survives a restart.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import { placePaidOrder } from "../../support/simulatedStripe.ts"
import { vmRefOf } from "../../../domain/vps/Lifecycle.ts"
import {
  createSnapshot, deleteSnapshot, listSnapshots, ownedVps, powerVps, resetRootPassword, shutdownVps
} from "../../../domain/vps/VpsActions.ts"
import { normaliseSshPublicKey } from "../../../domain/vps/VpsOptions.ts"
import { Orders } from "../../../ports/Orders.ts"
import { ShutdownTimedOut, TaskFailed, Virtualization } from "../../../ports/Virtualization.ts"
import { SimulatedCluster } from "../../support/simulatedCluster.ts"
import { VpsRecords } from "../../../ports/VpsRecords.ts"
import { logIn, terminal } from "../../support/virtualizationMother.ts"
import { vpsEnv, vpsOptions } from "../../support/vpsEnv.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"

/** Alice's VPS, once its order completed (the in-memory workflows never sleep: this also runs under TestClock). */
const running = Effect.gen(function*() {
  const order = yield* placePaidOrder(alice, "vps-s", vpsOptions("act-1"))
  const orders = yield* Orders
  for (let i = 0; i < 20_000; i++) {
    const o = Option.getOrThrow(yield* orders.get(order.id))
    if (o.status === "completed") return Option.getOrThrow(yield* (yield* VpsRecords).get(o.serviceId!))
    if (o.status === "failed") return yield* Effect.die(new Error(o.failureReason ?? "failed"))
    yield* Effect.yieldNow
  }
  return yield* Effect.die(new Error("order did not complete"))
})

/**
 * Starts `request` and returns once it is inside the hypervisor's `operation` call, held there (as a real snapshot
 * task holds the VM for a while) until `release`. Other requests meanwhile reach the hypervisor unhindered.
 */
const heldInside = <A, E, R>(operation: "createSnapshot" | "deleteSnapshot", request: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const inner = yield* Virtualization
    const entered = yield* Deferred.make<void>()
    const released = yield* Deferred.make<void>()
    const gate = <A2, E2>(effect: Effect.Effect<A2, E2>) =>
      Deferred.succeed(entered, undefined).pipe(Effect.andThen(Deferred.await(released)), Effect.andThen(effect))
    const holding = Virtualization.of({
      ...inner,
      createSnapshot: (vm, name, description) =>
        operation === "createSnapshot" ? gate(inner.createSnapshot(vm, name, description)) : inner.createSnapshot(vm, name, description),
      deleteSnapshot: (vm, name) => operation === "deleteSnapshot" ? gate(inner.deleteSnapshot(vm, name)) : inner.deleteSnapshot(vm, name)
    })
    const fiber = yield* request.pipe(Effect.provideService(Virtualization, holding), Effect.forkChild)
    yield* Deferred.await(entered)
    return { fiber, release: Deferred.succeed(released, undefined) }
  })

/** How many calls the hypervisor has had of each snapshot operation. */
const upstreamCalls = Effect.gen(function*() {
  const cluster = SimulatedCluster
  return {
    list: yield* cluster.calls("listSnapshots"),
    create: yield* cluster.calls("createSnapshot"),
    delete: yield* cluster.calls("deleteSnapshot")
  }
})

const names = (all: ReadonlyArray<{ readonly name: string }>) => all.map((s) => s.name).sort()

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

  it.live("fill the plan's limit exactly, and no further, when many are asked for at once", () =>
    Effect.gen(function*() {
      const vps = yield* running
      const results = yield* Effect.all(
        Array.from({ length: 6 }, (_, i) => Effect.result(createSnapshot(alice, vps.id, `snap-${i}`, ""))),
        { concurrency: "unbounded" }
      )
      assert.strictEqual((yield* listSnapshots(alice, vps.id)).length, 2)
      assert.strictEqual(results.filter((r) => r._tag === "Success").length, 2)
      assert.deepStrictEqual(
        results.flatMap((r) => r._tag === "Failure" ? [r.failure._tag] : []),
        Array.from({ length: 4 }, () => "SnapshotLimitReached")
      )
    }).pipe(Effect.provide(vpsEnv())))
})

describe("snapshot requests racing (the name is claimed in our records before the hypervisor is asked)", () => {
  it.effect("two of one name: the one inside the hypervisor's call is taken, the other is told it exists at once", () =>
    Effect.gen(function*() {
      const vps = yield* running
      const first = yield* heldInside("createSnapshot", createSnapshot(alice, vps.id, "same-name", ""))
      const before = yield* upstreamCalls
      const second = yield* Effect.flip(createSnapshot(alice, vps.id, "Same-Name", ""))
      assert.strictEqual(second._tag, "SnapshotExists")
      assert.deepStrictEqual(yield* upstreamCalls, before, "the refused request asked the hypervisor nothing")
      yield* first.release
      assert.deepStrictEqual(names(yield* Fiber.join(first.fiber)), ["same-name"])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("two names at the plan's limit: the one inside the hypervisor's call is kept, the other reaches the limit", () =>
    Effect.gen(function*() {
      const vps = yield* running
      yield* createSnapshot(alice, vps.id, "keep", "")
      const first = yield* heldInside("createSnapshot", createSnapshot(alice, vps.id, "snap-a", ""))
      const before = yield* upstreamCalls
      const second = yield* Effect.flip(createSnapshot(alice, vps.id, "snap-b", ""))
      assert.deepInclude(second, { _tag: "SnapshotLimitReached", limit: 2 })
      assert.strictEqual((yield* upstreamCalls).create, before.create, "the refused request created nothing")
      yield* first.release
      assert.deepStrictEqual(names(yield* Fiber.join(first.fiber)), ["keep", "snap-a"])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("one being taken cannot be deleted yet (busy); one being deleted can be neither deleted again nor retaken", () =>
    Effect.gen(function*() {
      const vps = yield* running
      const creation = yield* heldInside("createSnapshot", createSnapshot(alice, vps.id, "making", ""))
      const before = yield* upstreamCalls
      assert.strictEqual((yield* Effect.flip(deleteSnapshot(alice, vps.id, "making")))._tag, "SnapshotBusy")
      assert.deepStrictEqual(yield* upstreamCalls, before)
      yield* creation.release
      yield* Fiber.join(creation.fiber)

      const deletion = yield* heldInside("deleteSnapshot", deleteSnapshot(alice, vps.id, "making"))
      assert.strictEqual((yield* Effect.flip(deleteSnapshot(alice, vps.id, "making")))._tag, "SnapshotBusy")
      assert.strictEqual((yield* Effect.flip(createSnapshot(alice, vps.id, "making", "")))._tag, "SnapshotBusy")
      yield* deletion.release
      yield* Fiber.join(deletion.fiber)
      assert.deepStrictEqual(names(yield* createSnapshot(alice, vps.id, "making", "")), ["making"])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("the name is free again however a creation ends: the hypervisor refused it, or the request was abandoned", () =>
    Effect.gen(function*() {
      const vps = yield* running
      yield* SimulatedCluster.failNext(
        "createSnapshot",
        new TaskFailed({ operation: "createSnapshot", exitStatus: "simulated failure", log: [] })
      )
      assert.strictEqual((yield* Effect.flip(createSnapshot(alice, vps.id, "retry-me", "")))._tag, "TaskFailed")
      assert.deepStrictEqual(names(yield* createSnapshot(alice, vps.id, "retry-me", "")), ["retry-me"])

      const abandoned = yield* heldInside("createSnapshot", createSnapshot(alice, vps.id, "left", ""))
      yield* Fiber.interrupt(abandoned.fiber)
      assert.deepStrictEqual(names(yield* createSnapshot(alice, vps.id, "left", "")), ["left", "retry-me"])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a claim left by a process that died holds the name for 15 minutes, then lapses", () =>
    Effect.gen(function*() {
      const vps = yield* running
      const records = yield* VpsRecords
      // The process dies inside the hypervisor's call: the task never ran and nothing released the name.
      const dying = VpsRecords.of({ ...records, releaseSnapshotClaim: () => Effect.void })
      yield* SimulatedCluster.failNext(
        "createSnapshot",
        new TaskFailed({ operation: "createSnapshot", exitStatus: "connection lost", log: [] })
      )
      yield* Effect.flip(createSnapshot(alice, vps.id, "orphan", "").pipe(Effect.provideService(VpsRecords, dying)))
      yield* TestClock.adjust("14 minutes")
      assert.strictEqual((yield* Effect.flip(createSnapshot(alice, vps.id, "orphan", "")))._tag, "SnapshotExists")
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(names(yield* createSnapshot(alice, vps.id, "orphan", "")), ["orphan"])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("a claim the database could not release leaves the answer as the hypervisor gave it", () =>
    Effect.gen(function*() {
      const vps = yield* running
      const records = yield* VpsRecords
      const unreachable = VpsRecords.of({ ...records, releaseSnapshotClaim: () => Effect.die(new Error("database unreachable")) })
      const made = yield* createSnapshot(alice, vps.id, "kept", "").pipe(Effect.provideService(VpsRecords, unreachable))
      assert.deepStrictEqual(names(made), ["kept"])
      // The claim left behind and the snapshot listed are one name: it does not count twice toward the limit of two.
      assert.deepStrictEqual(names(yield* createSnapshot(alice, vps.id, "second", "")), ["kept", "second"])
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
      yield* SimulatedCluster.failNext("shutdown", new ShutdownTimedOut({ timeoutSeconds: 30 }))
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

