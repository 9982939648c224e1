// Specification of a service's page for operators: our records beside what the hypervisor holds now (asked through
// the product seam), the provisioning's steps, the reconciler's checks for this one service, and an upstream that does
// not answer shown as unreachable — the page still answers.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { reconcileService, servicePage, stepsOf } from "../../../domain/backoffice/servicePage.ts"
import { Order, OrderId, PlanId } from "../../../domain/billing/Billing.ts"
import { VPS_STEPS } from "../../../domain/vps/ProvisionVps.ts"
import { Orders } from "../../../ports/Orders.ts"
import { Virtualization, VirtualizationUnavailable } from "../../../ports/Virtualization.ts"
import { placePaidOrder } from "../../support/simulatedStripe.ts"
import { atOnce } from "../../support/eventually.ts"
import { SimulatedCluster } from "../../support/simulatedCluster.ts"
import { vpsEnv, vpsOptions } from "../../support/vpsEnv.ts"

const alice = "00000000-0000-4000-8000-00000000a11c"

const provisioned = Effect.gen(function*() {
  const order = yield* placePaidOrder(alice, "vps-s", vpsOptions("page-1"))
  const orders = yield* Orders
  yield* atOnce(Effect.map(orders.get(order.id), (o) => Option.getOrThrow(o).status), (s) => s === "completed")
  return Option.getOrThrow(yield* orders.get(order.id)).subscriptionId!
})

const order = (status: Order["status"], step: number) =>
  new Order({
    id: OrderId.make("o"),
    userId: alice,
    planId: PlanId.make("p"),
    kind: "vps",
    options: {},
    status,
    step,
    totalSteps: 3,
    stepName: "",
    failureReason: null,
    subscriptionId: null,
    serviceId: null,
    checkoutSession: null,
    checkoutUrl: null,
    expiresAt: null,
    expressStartRequestedAt: null,
    retryOf: null,
    retriedAs: null,
    createdAt: new Date(0),
    updatedAt: new Date(0)
  })

describe("a service's page for operators", () => {
  it.effect("shows the VM as the hypervisor holds it now beside our record, and every provisioning step done", () =>
    Effect.gen(function*() {
      const subscriptionId = yield* provisioned
      const page = yield* servicePage(subscriptionId)
      assert.strictEqual(Option.getOrThrow(page.service).state, "running")
      const live = Option.getOrThrow(page.upstream)
      assert.isTrue(live.reachable)
      if (!live.reachable) return
      assert.deepInclude(live, { upstream: "proxmox", state: "running", ownership: "ours" })
      assert.includeDeepMembers([...live.facts], [["vcpu", "1"]])
      const { steps } = Option.getOrThrow(page.order)
      assert.deepStrictEqual(steps.map((s) => s.name), [...VPS_STEPS])
      assert.isTrue(steps.every((s) => s.state === "done"))
      assert.deepStrictEqual((yield* reconcileService(subscriptionId)).findings, [])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("shows a hypervisor that does not answer as unreachable, and the page still answers", () =>
    Effect.gen(function*() {
      const subscriptionId = yield* provisioned
      yield* SimulatedCluster.failAlways("ownerOf", new VirtualizationUnavailable({ operation: "ownerOf", detail: "595 no route" }))
      const live = Option.getOrThrow((yield* servicePage(subscriptionId)).upstream)
      assert.deepStrictEqual(live, { reachable: false, upstream: "proxmox", detail: "VirtualizationUnavailable" })
      assert.deepStrictEqual((yield* reconcileService(subscriptionId)).findings.map((f) => f.problem), ["unreachable"])
    }).pipe(Effect.provide(vpsEnv())))

  it.effect("the reconciler's check finds a VM gone behind our back", () =>
    Effect.gen(function*() {
      const subscriptionId = yield* provisioned
      const page = yield* servicePage(subscriptionId)
      const ordered = Option.getOrThrow(page.order).order
      const virtualization = yield* Virtualization
      const [vm] = (yield* virtualization.listVms("lab")).filter((v) => v.stamp === ordered.id)
      yield* virtualization.stop(vm!)
      yield* virtualization.destroy(vm!, ordered.id)
      const { findings } = yield* reconcileService(subscriptionId)
      assert.deepStrictEqual(findings.map((f) => f.problem), ["missing"])
    }).pipe(Effect.provide(vpsEnv())))

  it("puts each step of an order's progress in words: done, current, failed, pending", () => {
    const names = ["one", "two", "three"]
    assert.deepStrictEqual(stepsOf(order("provisioning", 2), names).map((s) => s.state), ["done", "current", "pending"])
    assert.deepStrictEqual(stepsOf(order("failed", 3), names).map((s) => s.state), ["done", "done", "failed"])
    assert.deepStrictEqual(stepsOf(order("failed", 0), names).map((s) => s.state), ["failed", "pending", "pending"])
    assert.deepStrictEqual(stepsOf(order("completed", 3), names).map((s) => s.state), ["done", "done", "done"])
  })
})
