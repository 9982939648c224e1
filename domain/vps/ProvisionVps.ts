// The six-step VPS provisioning workflow: each step a durable, idempotent activity; a failure at any step refunds the
// charge and tells the customer why at once, then undoes what was done (no VM, no address, no reservation left),
// retrying that undo until it succeeds.
import { Clock, Duration, Effect, Option, Result, Schema } from "effect"
import { SecureRandom } from "effect/crypto"
import { Workflow } from "effect/workflow"
import { Catalog } from "../../ports/Catalog.ts"
import { plansOf } from "../catalog/listPlansForSale.ts"
import { IpAddresses } from "../../ports/IpAddresses.ts"
import { Placement } from "../../ports/Placement.ts"
import { SecretBox } from "../../ports/SecretBox.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Virtualization, type VmNotOurs, type VmRef } from "../../ports/Virtualization.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import {
  pollDurably,
  provisioned,
  provisionedOrder,
  provisioningStep,
  provisioningWorkflow,
  reportStep,
  StepFailed,
  stepFailure,
  undoing
} from "../billing/provisioning.ts"
import { machineOf, notOursAlert, ownership } from "./ownership.ts"
import { chooseFor, nodesOf, usableCopies } from "./room.ts"
import { generatePassword } from "./passwords.ts"
import { Vps, VpsId } from "./Vps.ts"
import { SubscriptionId } from "../billing/Billing.ts"
import { moveOrder } from "../billing/orderMoves.ts"
import { VpsOrderOptions } from "./VpsOptions.ts"
import { VpsSettings } from "./VpsSettings.ts"
import { dieOnDatabaseOutage } from "../ops/dieOnDatabaseOutage.ts"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"

export const VPS_STEPS = [
  "Choosing a node",
  "Cloning the OS template",
  "Sizing the disk",
  "Assigning a public address",
  "Configuring CPU, memory, network and cloud-init",
  "Starting the server"
] as const

export const ProvisionVps = provisioningWorkflow("ProvisionVps")

/** Where the order's machine goes: the node chosen, and the template's copy on it. */
const Placed = Schema.Struct({
  cluster: Schema.String,
  node: Schema.String,
  templateNode: Schema.String,
  templateVmid: Schema.Int
})
type Placed = typeof Placed.Type

/** The machine's handle, as the hypervisor gave it. */
const Machine = Schema.Struct({ cluster: Schema.String, node: Schema.String, vmid: Schema.Int })

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** The hypervisor being unreachable may pass: such a step is tried again. */
const failed = stepFailure((e) => e._tag === "VirtualizationUnavailable")

/** The order, its plan and its options, read again by every step. */
const context = (orderId: string) => provisionedOrder(orderId, VpsOrderOptions, { name: "VPS", planOf: plansOf("vps").any })

const progress = reportStep(VPS_STEPS)

const step1Place = (orderId: string) =>
  Effect.gen(function*() {
    const [, { options, plan }] = yield* Effect.all([progress(orderId, 1), context(orderId)], { concurrency: 2 })
    const usable = yield* usableCopies(options.templateId)
    if (usable === undefined) {
      return yield* new StepFailed({ step: 1, reason: "The chosen OS template is no longer offered.", detail: "no template" })
    }
    const { cluster, copies } = usable
    const nodes = yield* nodesOf(cluster).pipe(Effect.mapError(failed(1, "The virtualization cluster cannot be reached.")))
    const reservation = yield* (yield* Placement).reserve(cluster, orderId, chooseFor(plan, copies, nodes, yield* VpsSettings))
    if (Option.isNone(reservation)) {
      return yield* new StepFailed({ step: 1, reason: "No server has room for this plan right now.", detail: "no capacity" })
    }
    const node = reservation.value.node
    const source = copies.find((t) => t.node === node)!
    return { cluster, node, templateNode: source.node, templateVmid: source.vmid } satisfies Placed
  })

/** Our VMs are named after their order, so a retry (or the undo) recognises its own and never touches others. */
export const vmName = (orderId: string) => `vps-${orderId.slice(0, 8)}`

/** How often a clone left running by an interrupted process is looked at before the step gives up (about 30 min). */
const CLONE_CHECKS = 64

/**
 * The order's machine, cloned from the template on the chosen node; null while a creation of it that a process died in
 * the middle of is still running upstream: the workflow waits for it (pollDurably) rather than clone twice.
 */
const step2Machine = (orderId: string, placed: Placed, check: number) =>
  Effect.gen(function*() {
    yield* progress(orderId, 2)
    const made = yield* (yield* Virtualization).createMachine(orderId, {
      cluster: placed.cluster,
      node: placed.node,
      template: { cluster: placed.cluster, node: placed.templateNode, vmid: placed.templateVmid },
      name: vmName(orderId),
      storage: (yield* VpsSettings).storage
    }).pipe(
      Effect.catchTag("NoMachineIdFree", (e) =>
        Effect.fail(new StepFailed({ step: 2, reason: "No server has room for this plan right now.", detail: e.message }))),
      Effect.catchTag(["VirtualizationUnavailable", "TaskFailed", "ClusterUnknown"], (e) =>
        Effect.fail(failed(2, "Cloning the OS template failed.")(e)))
    )
    if (made._tag === "Created") return made.vm
    if (check >= CLONE_CHECKS) {
      return yield* new StepFailed({ step: 2, reason: "Cloning the OS template failed.", detail: "the clone stayed under way" })
    }
    return null
  })

const step3Resize = (orderId: string, vm: VmRef) =>
  Effect.gen(function*() {
    const [, { plan }] = yield* Effect.all([progress(orderId, 3), context(orderId)], { concurrency: 2 })
    yield* (yield* Virtualization).resizeDisk(vm, plan.diskGiB).pipe(
      Effect.mapError(failed(3, "Sizing the disk failed."))
    )
    // The address was assigned meanwhile (see the workflow): the order moves on to it once the disk is done.
    yield* progress(orderId, 4)
  })

/** Database work only: it runs while the disk is resized (step 3), which also reports its progress. */
const step4Address = (orderId: string) =>
  Effect.gen(function*() {
    const placedPools = (yield* (yield* Catalog).ipPools).filter((p) => !p.retired)
    const address = yield* (yield* IpAddresses).assign(orderId, placedPools.map((p) => p.id)).pipe(
      Effect.mapError(failed(4, "No public IPv4 address is free right now."))
    )
    return `${address.address}/${address.prefixLength}`
  })

/** Returns the root password sealed for the order: the plain one never reaches workflow storage. */
const step5Configure = (orderId: string, vm: VmRef) =>
  Effect.gen(function*() {
    const [, { options, plan }, held] = yield* Effect.all([
      progress(orderId, 5),
      context(orderId),
      Effect.flatMap(IpAddresses, (addresses) => addresses.held(orderId))
    ], { concurrency: 3 })
    const settings = yield* VpsSettings
    if (held === undefined) return yield* Effect.die(new Error("address released before configuration"))
    const password = yield* generatePassword
    yield* (yield* Virtualization).configure(vm, {
      stamp: orderId,
      cores: plan.vcpu,
      memoryMiB: plan.ramMiB,
      bridge: held.bridge,
      address: `${held.address}/${held.prefixLength}`,
      gateway: held.gateway,
      nameservers: settings.nameservers,
      user: "root",
      password,
      sshPublicKeys: [options.sshPublicKey.trim()],
      hostname: options.hostname
    }).pipe(Effect.mapError(failed(5, "Configuring the server failed.")))
    return yield* (yield* SecretBox).seal(password, `order:${orderId}:root-password`)
  })

const step6Start = (orderId: string, vm: VmRef, sealedPassword: string) =>
  Effect.gen(function*() {
    yield* progress(orderId, 6)
    // What the record needs is read while the VM starts: after the start only the writes remain.
    const [, { options, order }, held] = yield* Effect.all([
      (yield* Virtualization).start(vm).pipe(Effect.mapError(failed(6, "Starting the server failed."))),
      context(orderId),
      Effect.flatMap(IpAddresses, (addresses) => addresses.held(orderId))
    ], { concurrency: 3 })
    const at = yield* now
    const box = yield* SecretBox
    const vpsId = VpsId.make(yield* (yield* SecureRandom.SecureRandom).uuidV4())
    const password = yield* box.open(sealedPassword, `order:${orderId}:root-password`).pipe(Effect.orDie)
    const vps = yield* (yield* VpsRecords).create(
      new Vps({
        id: vpsId,
        userId: order.userId,
        subscriptionId: order.subscriptionId ?? SubscriptionId.make(""),
        orderId: order.id,
        planId: order.planId,
        cluster: vm.cluster,
        node: vm.node,
        vmid: vm.vmid,
        hostname: options.hostname,
        templateId: options.templateId,
        address: held?.address ?? "",
        status: "running",
        graceUntil: null,
        createdAt: at,
        destroyedAt: null
      }),
      yield* box.seal(password, `vps:${vpsId}:root-password`)
    )
    // The VM now counts in the node's own figures: the reservation has done its job.
    const subscriptionId = order.subscriptionId
    yield* Effect.all([
      (yield* Placement).releaseReservation(orderId),
      subscriptionId === null ? Effect.void : Effect.flatMap(Subscriptions, (s) => s.attachService(subscriptionId, vps.id))
    ], { concurrency: 2, discard: true })
    yield* moveOrder(orderId, { event: "provisioned", serviceId: vps.id, oneTimeSecret: sealedPassword }, at)
    return vps.id
  })

/** The undo cannot finish yet (a clone of ours still running, no stamp yet); it is tried again later. */
class UndoBlocked extends Schema.TaggedError<UndoBlocked>()("UndoBlocked", { detail: Schema.String }) {
  override get message() {
    return this.detail
  }
}

/**
 * Undo in reverse, once: the order's machine (stopped, destroyed with its disks) when one was made, the address, the
 * reservation, and the machine's id. A machine that does not carry our stamp is never touched: an alert says so.
 */
const undo = (orderId: string, cluster: string | undefined) =>
  Effect.gen(function*() {
    const virtualization = yield* Virtualization
    const made = cluster === undefined ? undefined : yield* machineOf(cluster, orderId)
    if (made !== undefined) {
      const { owner, vm } = yield* ownership(made, orderId)
      if (owner === "busy") return yield* new UndoBlocked({ detail: `VM ${vm.vmid} is locked and carries no stamp yet` })
      if (owner === "foreign") yield* notOursAlert(vm, orderId, "destroy")
      if (owner === "ours") {
        yield* virtualization.stop(vm).pipe(Effect.catchTag("VmNotFound", () => Effect.void))
        yield* virtualization.destroy(vm, orderId).pipe(
          Effect.catchTag("VmNotOurs", (found) => notOursAlert(vm, orderId, "destroy", found))
        )
      }
    }
    yield* (yield* IpAddresses).release(orderId)
    yield* (yield* Placement).releaseReservation(orderId)
    yield* virtualization.releaseMachine(orderId)
  })

/** The undo of a failed VPS order, given the cluster it was placed on (null: nowhere yet). */
export const UndoVps = Workflow.make("UndoProvisionVps", {
  payload: { orderId: Schema.String, cluster: Schema.NullOr(Schema.String) },
  idempotencyKey: ({ orderId }) => orderId
})

export const UndoVpsLive = UndoVps.toLayer(Effect.fn(function*({ cluster, orderId }) {
  yield* undoing(orderId, undo(orderId, cluster ?? undefined))
}))

export const ProvisionVpsLive = ProvisionVps.toLayer(Effect.fn(function*({ orderId }) {
  let cluster: string | undefined
  const build = Effect.gen(function*() {
    const placed = yield* provisioningStep({ name: "place", success: Placed, execute: dieOnDatabaseOutage(step1Place(orderId)) })
    cluster = placed.cluster
    const vm = yield* pollDurably({
      name: "machine",
      success: Machine,
      check: (check) => dieOnDatabaseOutage(step2Machine(orderId, placed, check)),
      pauses: (yield* VpsSettings).clonePoll
    })
    // The address is database work: assigned while the disk is resized. Both finish before either failure counts,
    // so the undo never races a step still running.
    const [resized, addressed] = yield* Effect.all([
      provisioningStep({ name: "resize", success: Schema.Void, execute: dieOnDatabaseOutage(step3Resize(orderId, vm)) }).pipe(Effect.result),
      provisioningStep({ name: "address", success: Schema.String, execute: dieOnDatabaseOutage(step4Address(orderId)) }).pipe(Effect.result)
    ], { concurrency: 2 })
    if (Result.isFailure(resized)) return yield* Effect.fail(resized.failure)
    if (Result.isFailure(addressed)) return yield* Effect.fail(addressed.failure)
    const sealed = yield* provisioningStep({ name: "configure", success: Schema.String, execute: dieOnDatabaseOutage(step5Configure(orderId, vm)) })
    return yield* provisioningStep({ name: "start", success: Schema.String, execute: dieOnDatabaseOutage(step6Start(orderId, vm, sealed)) })
  })
  return yield* provisioned(
    orderId,
    build,
    () => UndoVps.execute({ orderId, cluster: cluster ?? null }, { discard: true, detached: true }),
    // Reached at its public IPv4 address.
    (vpsId) => Effect.map(Effect.flatMap(VpsRecords, (records) => records.get(vpsId)), Option.match({ onNone: () => "", onSome: (vps) => vps.address }))
  )
}))
