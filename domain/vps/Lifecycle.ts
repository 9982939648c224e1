// What time does to a VPS: at the period end without renewal it is stopped, kept from starting with its node, and
// snapshotted (suspended); a renewal brings it back; after the grace window it is destroyed with its disks and its
// address goes back to the pool. Every transition is a durable workflow with an idempotency key, so sweeping twice,
// or resuming after a crash, is harmless. Nothing is stopped or destroyed unless the VM carries our stamp for the VPS's order.
import { Clock, Duration, Effect, Option, Schedule, Schema } from "effect"
import { Activity } from "effect/workflow"
import { IpAddresses } from "../../ports/IpAddresses.ts"
import { Placement } from "../../ports/Placement.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Virtualization, type VmRef } from "../../ports/Virtualization.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import type { Vps } from "./Vps.ts"
import { VpsSettings } from "./VpsSettings.ts"
import { lapsedFor, periodWorkflow, stillDue, terminationWorkflow } from "../billing/lapse.ts"
import { notOursAlert, ownership } from "./ownership.ts"
import { dieOnDatabaseOutage } from "../ops/dieOnDatabaseOutage.ts"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const vmRefOf = (vps: Vps): VmRef => ({ cluster: vps.cluster, node: vps.node, vmid: vps.vmid })

/** The final snapshot's name: `final-` and the period end, so a later lapse takes its own. */
export const finalSnapshotName = (periodEnd: Date) =>
  `final-${periodEnd.toISOString().slice(0, 16).replace(/[-:T]/g, "")}`

/** The hypervisor being unreachable may pass: tried again after 1 s, 2 s, 4 s … five times. */
const transient = {
  times: 5,
  schedule: Schedule.exponential("1 second"),
  while: (e: { readonly _tag: string }) => e._tag === "VirtualizationUnavailable"
}

export const SuspendVps = periodWorkflow("SuspendVps")

export const TerminateVps = terminationWorkflow("TerminateVps")

const vpsOf = (subscriptionId: string) =>
  Effect.flatMap(VpsRecords, (records) => records.bySubscription(subscriptionId))

/**
 * Whether the VPS's VM may be acted upon: ours, or gone (nothing to do). Anything else (the VMID reused outside our
 * control) is refused with an alert, and the VPS is left for an operator (the reconciler lists it).
 */
const mayTouch = (vps: Vps, action: string) =>
  Effect.gen(function*() {
    const found = yield* ownership(vmRefOf(vps), vps.orderId)
    if (found.owner === "foreign" || found.owner === "busy") yield* notOursAlert(found.vm, vps.orderId, action)
    return found
  })

/**
 * Back in service after a renewal: started with its node again (the plan's setting for a running VPS), then started
 * now. A VM that is not ours is left alone (alert), a VM that is gone cannot come back: false then, and the record
 * stays as it is (the reconciler lists it).
 */
export const bringBack = (vps: Vps) =>
  Effect.gen(function*() {
    const { owner, vm } = yield* mayTouch(vps, "start")
    if (owner !== "ours") return false
    const virtualization = yield* Virtualization
    yield* virtualization.setStartOnBoot(vm, true)
    yield* virtualization.start(vm)
    return true
  })

export const SuspendVpsLive = SuspendVps.toLayer(Effect.fn(function*({ periodEnd, subscriptionId }) {
  const due = yield* Activity.make({ name: "check", success: Schema.Boolean, execute: dieOnDatabaseOutage(stillDue(subscriptionId, periodEnd)) })
  if (!due) return
  yield* Activity.make({
    name: "stop-and-snapshot",
    execute: Effect.gen(function*() {
      const vps = yield* vpsOf(subscriptionId)
      if (Option.isNone(vps) || vps.value.status === "destroyed") return
      const { owner, vm } = yield* mayTouch(vps.value, "stop")
      if (owner !== "ours") return
      const virtualization = yield* Virtualization
      yield* virtualization.stop(vm)
      // A node reboot must not bring a lapsed VPS back.
      yield* virtualization.setStartOnBoot(vm, false)
      const name = finalSnapshotName(new Date(periodEnd))
      const existing = yield* virtualization.listSnapshots(vm)
      if (!existing.some((s) => s.name === name)) {
        yield* virtualization.createSnapshot(vm, name, "Final snapshot taken when the subscription lapsed")
      }
    }).pipe(
      Effect.retry(transient),
      // A VM that is gone already has nothing to stop or keep; termination records it.
      Effect.catchTag("VmNotFound", () => Effect.void),
      Effect.orDie
    )
  })
  yield* Activity.make({
    name: "record",
    execute: dieOnDatabaseOutage(Effect.gen(function*() {
      const vps = yield* vpsOf(subscriptionId)
      const live = Option.isSome(vps) && vps.value.status !== "destroyed" ? vps.value : undefined
      // The record first: a renewal that reads it afterwards sees a suspended VPS and brings it back.
      const grace = Duration.toMillis((yield* VpsSettings).gracePeriod)
      if (live !== undefined) {
        yield* (yield* VpsRecords).setStatus(live.id, "suspended", { graceUntil: new Date(new Date(periodEnd).getTime() + grace) })
      }
      // Atomic against a renewal: either the lapse of this period is recorded, or the renewal extended it first.
      if (!(yield* lapsedFor(subscriptionId, periodEnd))) {
        // Renewed while we stopped it: bring it back instead of suspending.
        if (live !== undefined && (yield* bringBack(live).pipe(Effect.retry(transient), Effect.orDie))) {
          yield* (yield* VpsRecords).setStatus(live.id, "running", { graceUntil: null })
        }
      }
    }))
  })
}))

export const TerminateVpsLive = TerminateVps.toLayer(Effect.fn(function*({ subscriptionId }) {
  const proceed = yield* Activity.make({
    name: "check",
    success: Schema.Boolean,
    execute: dieOnDatabaseOutage(Effect.gen(function*() {
      const subscription = yield* (yield* Subscriptions).get(subscriptionId)
      const vps = yield* vpsOf(subscriptionId)
      const at = yield* now
      return Option.isSome(subscription) && subscription.value.status === "suspended" &&
        Option.isSome(vps) && vps.value.graceUntil !== null && vps.value.graceUntil.getTime() <= at.getTime()
    }))
  })
  if (!proceed) return
  // Refused when the VM is not ours: the VPS then stays as it is, for an operator.
  const destroyed = yield* Activity.make({
    name: "destroy",
    success: Schema.Boolean,
    execute: Effect.gen(function*() {
      const vps = yield* vpsOf(subscriptionId)
      if (Option.isNone(vps) || vps.value.status === "destroyed") return true
      const { owner, vm } = yield* mayTouch(vps.value, "destroy")
      if (owner === "foreign" || owner === "busy") return false
      if (owner === "gone") return true
      const virtualization = yield* Virtualization
      yield* virtualization.stop(vm).pipe(Effect.catchTag("VmNotFound", () => Effect.void))
      return yield* virtualization.destroy(vm, vps.value.orderId).pipe(
        Effect.as(true),
        Effect.catchTag("VmNotOurs", (found) => Effect.as(notOursAlert(vm, vps.value.orderId, "destroy", found), false))
      )
    }).pipe(Effect.retry(transient), Effect.orDie)
  })
  if (!destroyed) return
  yield* Activity.make({
    name: "release",
    execute: dieOnDatabaseOutage(Effect.gen(function*() {
      const vps = yield* vpsOf(subscriptionId)
      if (Option.isNone(vps)) return
      yield* (yield* IpAddresses).release(vps.value.orderId)
      yield* (yield* Placement).releaseVmid(vps.value.orderId)
      // The subscription ends first: whoever sees the VPS destroyed sees its subscription terminated.
      yield* (yield* Subscriptions).setStatus(subscriptionId, "terminated", ["suspended"])
      yield* (yield* VpsRecords).setStatus(vps.value.id, "destroyed", { graceUntil: null, destroyedAt: yield* now })
    }))
  })
}))

/** A renewal inside the grace window: the same VM comes back, started, and starts with its node again. */
export const restoreVps = Effect.fn("restoreVps")(function*(subscriptionId: string) {
  const records = yield* VpsRecords
  const vps = yield* records.bySubscription(subscriptionId)
  if (Option.isNone(vps) || vps.value.status === "destroyed") return
  if (yield* bringBack(vps.value)) yield* records.setStatus(vps.value.id, "running", { graceUntil: null })
})

/**
 * The renewal is paid: the VPS must come back even if the hypervisor is down right now, so it runs as a durable
 * workflow that keeps trying (keyed by the renewed period, so a double renewal brings it back once).
 */
export const RestoreVps = periodWorkflow("RestoreVps")
