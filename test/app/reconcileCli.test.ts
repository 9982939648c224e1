// `npm run admin -- reconcile [--json]`: in-process on fakes with planted trouble (the text report and the JSON one
// say the same), and as a process beside a running server, reading its sandbox cluster and panel.
import { NodeServices } from "@effect/platform-node"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { Command } from "effect/cli"
import { TestConsole } from "effect/testing"
import { expect } from "vitest"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as MemoryOutbox from "../../adapters/fake/MemoryOutbox.ts"
import * as MemoryUpstreamSecrets from "../../adapters/fake/MemoryUpstreamSecrets.ts"
import { SimulatedCluster } from "../support/simulatedCluster.ts"
import { makeAdmin, SecretInput } from "../../app/cli.ts"
import { Orders } from "../../ports/Orders.ts"
import { Virtualization } from "../../ports/Virtualization.ts"
import { reconcileEnv } from "../support/reconcileEnv.ts"
import { GiB, labCluster, labTemplate } from "../support/virtualizationMother.ts"
import { cleanUp, migratedDataDir, run, startServer, stop } from "./processes.ts"
import { OrderId } from "../../domain/billing/Billing.ts"
import { moveOrder } from "../../domain/billing/orderMoves.ts"

const at = new Date("2026-03-02T09:00:00.000Z")

/** The admin CLI with `reconcile` on the fakes of `reconciler`. */
const admin = <E>(reconciler: Layer.Layer<Layer.Success<ReturnType<typeof reconcileEnv>>, E>) => {
  const services = Layer.mergeAll(
    MemoryOutbox.layer,
    MemoryUpstreamSecrets.layer,
    AesGcmSecretBox.layer({ current: Redacted.make(new Uint8Array(32).fill(1)), previous: [] }),
    Layer.succeed(SecretInput, { read: Effect.succeed(Redacted.make("")) })
  )
  return Command.runWith(makeAdmin(services, Effect.succeed([]), undefined, reconciler), { version: "test" })
}

/** A failed order whose VM is still on the cluster, with its undo pending. */
const plantOrphan = Effect.gen(function*() {
  const orders = yield* Orders
  const order = yield* orders.create({ id: OrderId.make("0d000000-0000-4000-8000-000000000001"), userId: "u", planId: "vps-s", kind: "vps", options: {}, totalSteps: 6, expiresAt: new Date(at.getTime() + 3_600_000), now: at })
  yield* moveOrder(order.id, { event: "failed", reason: "failed" }, at)
  yield* orders.cleanupPending(order.id, at)
  yield* SimulatedCluster.place(
    { ...labTemplate, vmid: 100_007, name: "vps-100007", status: "stopped", cpus: 1, memoryBytes: GiB, diskBytes: 3 * GiB },
    order.id
  )
  return order.id
})

const Report = Schema.Struct({
  at: Schema.String,
  orphanVms: Schema.Array(Schema.Struct({
    cluster: Schema.String,
    node: Schema.String,
    vmid: Schema.Int,
    name: Schema.String,
    stamp: Schema.NullOr(Schema.String)
  })),
  orphanServers: Schema.Array(Schema.Unknown),
  brokenServices: Schema.Array(Schema.Unknown),
  pendingCleanups: Schema.Array(Schema.Struct({ orderId: Schema.String, since: Schema.String, attempts: Schema.Int })),
  unreachable: Schema.Array(Schema.Struct({ upstream: Schema.String, detail: Schema.String }))
})
const decodeReport = Schema.decodeUnknownSync(Schema.fromJsonString(Report))

describe("`reconcile`, in-process", () => {
  it.effect("prints the report: the orphan VM with its stamp and the pending cleanup; --json says the same", () =>
    Effect.gen(function*() {
      const env = yield* Layer.build(reconcileEnv())
      const reconciler = Layer.succeedContext(env)
      const orderId = yield* plantOrphan.pipe(Effect.provide(reconciler))
      yield* admin(reconciler)(["reconcile"])
      const text = (yield* TestConsole.logLines).map(String).join("\n")
      assert.match(text, /^Reconciled at .*: 2 finding\(s\)\./)
      assert.include(text, "Orphan VMs (in our VMID range, no live VPS):")
      assert.include(text, `${labCluster}/pve1 vmid 100007 "vps-100007"  stamp: order ${orderId}`)
      assert.include(text, `vps order ${orderId} since ${at.toISOString()}, 0 failed attempt(s)`)

      const before = (yield* TestConsole.logLines).length
      yield* admin(reconciler)(["reconcile", "--json"])
      const report = decodeReport((yield* TestConsole.logLines).slice(before).map(String).join("\n"))
      assert.deepStrictEqual(report.orphanVms, [{ cluster: labCluster, node: "pve1", vmid: 100_007, name: "vps-100007", stamp: orderId }])
      assert.deepStrictEqual(report.pendingCleanups.map((c) => [c.orderId, c.since, c.attempts]), [[orderId, at.toISOString(), 0]])
      assert.deepStrictEqual([report.orphanServers, report.brokenServices, report.unreachable], [[], [], []])
      // A report only: the VM is still there.
      const [destroys, vms] = yield* Effect.provide(Effect.all([SimulatedCluster.calls("destroy"), SimulatedCluster.vms]), reconciler)
      assert.strictEqual(destroys, 0)
      assert.lengthOf(vms.filter((v) => !v.template), 1)
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(NodeServices.layer, TestConsole.layer))))
})

describe("`reconcile`, as a process", () => {
  afterEach(cleanUp)

  it("reads the running server's sandbox cluster and panel and prints a JSON report with nothing to report", async () => {
    // Not a first start: the embedded database from the migrated template.
    const env = { NODE_ENV: "development", DATA_DIR: await migratedDataDir("reconcile"), SANDBOX_TASK_SPEED: "instant" }
    const server = await startServer(env)
    const answer = await run("app/cli.ts", ["reconcile", "--json"], env, { ms: 60_000 })
    expect(answer.code, answer.stderr).toBe(0)
    const report = decodeReport(answer.stdout)
    expect(report.unreachable).toEqual([])
    expect([report.orphanVms, report.orphanServers, report.brokenServices, report.pendingCleanups]).toEqual([[], [], [], []])
    const text = await run("app/cli.ts", ["reconcile"], env, { ms: 60_000 })
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/^Reconciled at .*: nothing to report\./)
    await stop(server)
  }, 240_000)
})
