// What time does to a VPS: at the period end without renewal it is stopped, kept from starting with its node, and
// snapshotted (suspended); a renewal brings it back; after the grace window it is destroyed with its disks and its
// address goes back to the pool. Billing runs each transition as a durable workflow (registerProduct.ts) with an
// idempotency key, so sweeping twice, or resuming after a crash, is harmless. Nothing is stopped or destroyed unless
// the VM carries our stamp for the VPS's order.
import { Clock, Duration, Effect, Option } from "effect"
import { IpAddresses } from "../../ports/IpAddresses.ts"
import { Virtualization, type VmRef } from "../../ports/Virtualization.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import type { Vps } from "./Vps.ts"
import { VpsSettings } from "./VpsSettings.ts"
import { periodWorkflow, terminationWorkflow } from "../billing/lapse.ts"
import { notOursAlert, ownership } from "./ownership.ts"

export const vmRefOf = (vps: Vps): VmRef => ({ cluster: vps.cluster, node: vps.node, vmid: vps.vmid })

/** The final snapshot's name: `final-` and the period end, so a later lapse takes its own. */
export const finalSnapshotName = (periodEnd: Date) =>
  `final-${periodEnd.toISOString().slice(0, 16).replace(/[-:T]/g, "")}`

export const SuspendVps = periodWorkflow("SuspendVps")

export const TerminateVps = terminationWorkflow("TerminateVps")

const vpsOf = (subscriptionId: string) =>
  Effect.flatMap(VpsRecords, (records) => records.bySubscription(subscriptionId))

/**
 * Whether the VPS's VM may be acted upon: ours, or gone (nothing to do). Anything else (its id reused outside our
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

/**
 * The lapse: the VM stopped, kept from starting with its node, snapshotted (`final-…`, once per period), then the
 * record suspended until the grace window's end (after the stop: a renewal that reads it then brings the VM back).
 */
export const suspendVps = (subscriptionId: string, periodEnd: Date) => stopAndSuspend(subscriptionId, periodEnd, true)

/**
 * An operator's hold: stopped, kept from starting with its node and suspended as at the lapse, without the final
 * snapshot (named and described for a lapse, and kept by the customer: a hold destroys nothing).
 */
export const holdVps = (subscriptionId: string, periodEnd: Date) => stopAndSuspend(subscriptionId, periodEnd, false)

const stopAndSuspend = (subscriptionId: string, periodEnd: Date, finalSnapshot: boolean) =>
  Effect.gen(function*() {
    const vps = yield* vpsOf(subscriptionId)
    if (Option.isNone(vps) || vps.value.status === "destroyed") return
    yield* stopAndKeep(vps.value, periodEnd, finalSnapshot).pipe(
      // A VM that is gone already has nothing to stop or keep; termination records it.
      Effect.catchTag("VmNotFound", () => Effect.void)
    )
    const grace = Duration.toMillis((yield* VpsSettings).gracePeriod)
    yield* (yield* VpsRecords).setStatus(vps.value.id, "suspended", { graceUntil: new Date(periodEnd.getTime() + grace) })
  })

const stopAndKeep = (vps: Vps, periodEnd: Date, finalSnapshot: boolean) =>
  Effect.gen(function*() {
    const { owner, vm } = yield* mayTouch(vps, "stop")
    if (owner !== "ours") return
    const virtualization = yield* Virtualization
    yield* virtualization.stop(vm)
    // A node reboot must not bring a lapsed VPS back.
    yield* virtualization.setStartOnBoot(vm, false)
    if (!finalSnapshot) return
    const name = finalSnapshotName(periodEnd)
    const existing = yield* virtualization.listSnapshots(vm)
    if (!existing.some((s) => s.name === name)) {
      yield* virtualization.createSnapshot(vm, name, "Final snapshot taken when the subscription lapsed")
    }
  })

/** After the grace window: the VM stopped and destroyed with its disks; refused (false) when it is not ours. */
export const removeVps = (subscriptionId: string) =>
  Effect.gen(function*() {
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
  })

/** The destroyed VPS's address goes back to the pool, its machine's id is freed, and its record says destroyed. */
export const releaseVps = (subscriptionId: string) =>
  Effect.gen(function*() {
    const vps = yield* vpsOf(subscriptionId)
    if (Option.isNone(vps)) return
    yield* (yield* IpAddresses).release(vps.value.orderId)
    yield* (yield* Virtualization).releaseMachine(vps.value.orderId)
    yield* (yield* VpsRecords).setStatus(vps.value.id, "destroyed", {
      graceUntil: null,
      destroyedAt: new Date(yield* Clock.currentTimeMillis)
    })
  })

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
