// Specification of the operators' alerts on the test clock: each kind (provisioning failures over a rate, webhook
// signature failures over a rate, an IP pool or a panel low, a cron late, the reconciler's findings) is e-mailed once
// when it starts, not again while it lasts, and again when it comes back after it was resolved. A mail server that
// refuses leaves the alert for the next pass; two passes at once send it once.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Cron, Duration, Effect, Layer, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as MemoryMailer from "../../../adapters/fake/MemoryMailer.ts"
import * as MemoryOpsRecords from "../../../adapters/fake/MemoryOpsRecords.ts"
import * as MemoryOrders from "../../../adapters/fake/MemoryOrders.ts"
import { OrderId } from "../../../domain/billing/Billing.ts"
import { AlertSettings, CapacityReadings, checkAlerts, countSignal } from "../../../domain/ops/alerting.ts"
import { reconcileAndLog } from "../../../domain/reconcile/Reconciler.ts"
import { OpsRecords } from "../../../ports/OpsRecords.ts"
import { moveOrder } from "../../../domain/billing/orderMoves.ts"
import { Orders } from "../../../ports/Orders.ts"
import { VirtualizationUnavailable } from "../../../ports/Virtualization.ts"
import { reconcileEnv } from "../../support/reconcileEnv.ts"
import { SimulatedCluster } from "../../support/simulatedCluster.ts"

const OPS = "ops@zh.test"

const settings: AlertSettings["Service"] = {
  to: Option.some(OPS),
  provisioningFailures: { count: 3, within: Duration.minutes(15) },
  webhookSignatureFailures: { count: 10, within: Duration.minutes(10) },
  ipPoolMinFree: 5,
  panelMinFreeAllocations: 4,
  cronLate: Duration.minutes(10),
  crons: [{ name: "reconcile", cron: Cron.parseUnsafe("17 * * * *") }]
}

/** The capacity the fake readings report, changed by the tests. */
class Capacity extends Context.Service<Capacity, Ref.Ref<{
  readonly pools: ReadonlyArray<{ readonly id: string; readonly retired: boolean; readonly free: number }>
  readonly panels: ReadonlyArray<{ readonly panel: string; readonly free: number | null }>
}>>()("test/Capacity") {}

const capacityLayer = Layer.effectContext(Effect.gen(function*() {
  const state = yield* Ref.make<Capacity["Service"] extends Ref.Ref<infer S> ? S : never>({
    pools: [{ id: "pool-a", retired: false, free: 50 }],
    panels: [{ panel: "panel-a", free: 40 }]
  })
  return Context.make(Capacity, state).pipe(Context.add(CapacityReadings, CapacityReadings.of({
    ipPools: Effect.map(Ref.get(state), (s) => s.pools),
    panels: Effect.map(Ref.get(state), (s) => s.panels)
  })))
}))

const env = (overrides: Partial<AlertSettings["Service"]> = {}) =>
  Layer.mergeAll(
    MemoryOpsRecords.layer,
    MemoryOrders.layer,
    MemoryMailer.layer,
    capacityLayer,
    Layer.succeed(AlertSettings, { ...settings, ...overrides })
  )

const mails = Effect.flatMap(MemoryMailer.SentMail, (sent) => sent.messages)

/** The subjects e-mailed so far, each to the operators. */
const subjects = Effect.gen(function*() {
  const all = yield* mails
  for (const m of all) assert.strictEqual(m.to, OPS)
  return all.map((m) => m.subject)
})

const start = new Date("2026-03-02T09:00:00.000Z")

let serial = 0
const failOrders = (n: number) =>
  Effect.gen(function*() {
    const orders = yield* Orders
    const now = new Date(yield* Clock.currentTimeMillis)
    for (let i = 0; i < n; i++) {
      const id = OrderId.make(`00000000-0000-4000-8000-${String(++serial).padStart(12, "0")}`)
      yield* orders.create({ id, userId: "u", planId: "p", kind: "vps", options: {}, totalSteps: 3, expiresAt: now, now })
      yield* moveOrder(id, { event: "failed", reason: "the clone failed" }, now)
    }
  })

const setCapacity = (change: (s: Capacity["Service"] extends Ref.Ref<infer S> ? S : never) => Capacity["Service"] extends Ref.Ref<infer S> ? S : never) =>
  Effect.flatMap(Capacity, (ref) => Ref.update(ref, change))

/**
 * The life every kind goes through: `begin` makes the trouble (one mail at the next pass, whose subject matches
 * `subject`), passes while it lasts send nothing more, `end` resolves it at the next pass (no mail), `begin` again
 * is a new incident (a second mail).
 */
const onceAndAgain = <E, R>(begin: Effect.Effect<void, E, R>, end: Effect.Effect<void, E, R>, subject: RegExp) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(start.getTime())
    yield* checkAlerts
    assert.deepStrictEqual(yield* subjects, [])
    yield* begin
    yield* checkAlerts
    const first = yield* subjects
    assert.lengthOf(first, 1)
    assert.match(first[0]!, subject)
    for (let i = 0; i < 3; i++) {
      yield* TestClock.adjust(Duration.minutes(1))
      yield* checkAlerts
    }
    assert.lengthOf(yield* subjects, 1, "not sent again while open")
    yield* end
    yield* checkAlerts
    assert.lengthOf(yield* subjects, 1, "a resolution sends nothing")
    yield* begin
    yield* checkAlerts
    const again = yield* subjects
    assert.lengthOf(again, 2, "a recurrence is a new incident")
    assert.match(again[1]!, subject)
  })

describe("the operators' alerts", () => {
  it.effect("provisioning failures: from 3 failed orders within 15 minutes; resolved when the window holds fewer", () =>
    onceAndAgain(
      failOrders(3),
      TestClock.adjust(Duration.minutes(16)),
      /^\[ALERT\] 3 orders failed in the last 15 minutes .* \/ \[ALERTE\] 3 commandes ont échoué/
    ).pipe(Effect.provide(env())))

  it.effect("two failed orders are below the rate: nothing is sent", () =>
    Effect.gen(function*() {
      yield* failOrders(2)
      yield* checkAlerts
      assert.deepStrictEqual(yield* subjects, [])
    }).pipe(Effect.provide(env())))

  it.effect("webhook signature failures: from 10 within 10 minutes", () =>
    onceAndAgain(
      Effect.gen(function*() {
        for (let i = 0; i < 10; i++) yield* countSignal("webhook_signature_failure")
      }),
      TestClock.adjust(Duration.minutes(11)),
      /10 payment webhooks were refused for a bad signature/
    ).pipe(Effect.provide(env())))

  it.effect("an IP pool below its threshold; a retired pool's incident is resolved", () =>
    Effect.gen(function*() {
      yield* onceAndAgain(
        setCapacity((s) => ({ ...s, pools: [{ id: "pool-a", retired: false, free: 4 }] })),
        setCapacity((s) => ({ ...s, pools: [{ id: "pool-a", retired: false, free: 5 }] })),
        /IP pool pool-a has 4 free addresses left \(alert below 5\)/
      )
      yield* setCapacity((s) => ({ ...s, pools: [{ id: "pool-a", retired: true, free: 0 }] }))
      yield* checkAlerts
      yield* setCapacity((s) => ({ ...s, pools: [{ id: "pool-a", retired: false, free: 1 }] }))
      yield* checkAlerts
      assert.lengthOf(yield* subjects, 3, "retiring the pool resolved the incident; the pool low again is a new one")
    }).pipe(Effect.provide(env())))

  it.effect("a panel's free allocations below its threshold; a panel that does not answer leaves its incident open", () =>
    Effect.gen(function*() {
      yield* onceAndAgain(
        setCapacity((s) => ({ ...s, panels: [{ panel: "panel-a", free: 3 }] })),
        setCapacity((s) => ({ ...s, panels: [{ panel: "panel-a", free: 10 }] })),
        /Panel panel-a has 3 free allocations left on its public nodes/
      )
      // Unreadable now (left out of the readings), then low still: the same incident, not a new mail.
      yield* setCapacity((s) => ({ ...s, panels: [] }))
      yield* checkAlerts
      yield* setCapacity((s) => ({ ...s, panels: [{ panel: "panel-a", free: 2 }] }))
      yield* checkAlerts
      assert.lengthOf(yield* subjects, 2)
    }).pipe(Effect.provide(env())))

  it.effect("a cron late by more than the setting; a cron that never ran is not judged", () =>
    Effect.gen(function*() {
      const ran = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.flatMap(OpsRecords, (ops) => ops.cronStarted("reconcile", new Date(now))))
      // A run at 09:00 (then at 10:14): the next is due at 09:17 (10:17), late 10 minutes after; checked 71 minutes on.
      yield* onceAndAgain(
        Effect.andThen(ran, TestClock.adjust(Duration.minutes(71))),
        ran,
        /^\[ALERT\] The cron reconcile has not run since [^ ]+: its run due at [^ ]+:17:00.000Z is \d+ minutes late/
      )
    }).pipe(Effect.provide(env())))

  it.effect("a cron on time is not late: due at 10:17, checked at 10:26", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(new Date("2026-03-02T09:17:00.000Z").getTime())
      yield* (yield* OpsRecords).cronStarted("reconcile", new Date("2026-03-02T09:17:00.000Z"))
      yield* TestClock.setTime(new Date("2026-03-02T10:26:59.000Z").getTime())
      yield* checkAlerts
      assert.deepStrictEqual(yield* subjects, [])
    }).pipe(Effect.provide(env())))

  it.effect("the reconciler's findings: opened by a run that finds something, resolved by one that finds nothing", () => {
    const broken = SimulatedCluster.failAlways("listVms", new VirtualizationUnavailable({ operation: "listVms", detail: "596 timeout" }))
    return onceAndAgain(
      Effect.andThen(broken, reconcileAndLog),
      Effect.andThen(SimulatedCluster.clearFaults, reconcileAndLog),
      /The reconciler found 1 difference\(s\) between our records and the upstreams/
    ).pipe(Effect.provide(Layer.mergeAll(env(), reconcileEnv())))
  })

  it.effect("the mail is in English and French; a mail server that refuses leaves it for the next pass", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start.getTime())
      yield* failOrders(3)
      yield* (yield* MemoryMailer.SentMail).failNext("421 try later")
      yield* checkAlerts
      assert.deepStrictEqual(yield* subjects, [])
      yield* checkAlerts
      const [mail] = yield* mails
      assert.include(mail!.text, "Incident provisioning-failures, opened at 2026-03-02T09:00:00.000Z:")
      assert.include(mail!.text, "Incident provisioning-failures, ouvert le 2026-03-02T09:00:00.000Z :")
      assert.include(mail!.html, `<p lang="fr">3 commandes ont échoué`)
      yield* checkAlerts
      assert.lengthOf(yield* mails, 1)
    }).pipe(Effect.provide(env())))

  it.effect("two passes at once (two instances) send each incident once", () =>
    Effect.gen(function*() {
      yield* failOrders(3)
      yield* setCapacity((s) => ({ ...s, pools: [{ id: "pool-a", retired: false, free: 0 }] }))
      yield* Effect.all(Array.from({ length: 5 }, () => checkAlerts), { concurrency: "unbounded" })
      assert.lengthOf(yield* subjects, 2)
    }).pipe(Effect.provide(env())))

  it.effect("without ALERT_EMAIL nothing is e-mailed", () =>
    Effect.gen(function*() {
      yield* failOrders(3)
      yield* checkAlerts
      assert.deepStrictEqual(yield* subjects, [])
    }).pipe(Effect.provide(env({ to: Option.none() }))))
})
