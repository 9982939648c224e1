// The six-step VPS provisioning workflow: each step a durable, idempotent activity; a failure at any step refunds the
// charge and tells the customer why at once, then undoes what was done (no VM, no address, no reservation left),
// retrying that undo until it succeeds.
import { Clock, Duration, Effect, Option, Result, Schema } from "effect"
import { SecureRandom } from "effect/crypto"
import { Workflow } from "effect/workflow"
import { Catalog } from "../../ports/Catalog.ts"
import { plansOf } from "../catalog/listPlansForSale.ts"
import { IpAddresses } from "../../ports/IpAddresses.ts"
import { Orders } from "../../ports/Orders.ts"
import { Placement } from "../../ports/Placement.ts"
import { SecretBox } from "../../ports/SecretBox.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Virtualization, type VmNotOurs, type VmRef } from "../../ports/Virtualization.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import {
  orderWithOptions,
  pollDurably,
  provisioned,
  provisioningStep,
  provisioningWorkflow,
  reportStep,
  StepFailed,
  stepFailure,
  undoing
} from "../billing/provisioning.ts"
import { notOursAlert, ownership } from "./ownership.ts"
import { chooseNode } from "./placement.ts"
import { generatePassword } from "./passwords.ts"
import { Vps, VpsId } from "./Vps.ts"
import { SubscriptionId } from "../billing/Billing.ts"
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

const Placed = Schema.Struct({
  cluster: Schema.String,
  node: Schema.String,
  vmid: Schema.Int,
  templateNode: Schema.String,
  templateVmid: Schema.Int
})
type Placed = typeof Placed.Type

const vmOf = (placed: Placed): VmRef => ({ cluster: placed.cluster, node: placed.node, vmid: placed.vmid })

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** The hypervisor being unreachable may pass: such a step is tried again. */
const failed = stepFailure((e) => e._tag === "VirtualizationUnavailable")

/** The order, its plan and its options, read again by every step (cheap, and always the stored truth). */
const context = (orderId: string) =>
  Effect.gen(function*() {
    const { options, order } = yield* orderWithOptions(orderId, VpsOrderOptions)
    const plan = yield* Effect.flatMap(plansOf("vps").any(order.planId), Option.match({
      onNone: () => Effect.die(new Error(`plan ${order.planId} is not a VPS plan`)),
      onSome: Effect.succeed
    }))
    return { order, plan, options }
  })

const progress = reportStep(VPS_STEPS)

const step1Place = (orderId: string) =>
  Effect.gen(function*() {
    const [, { options, plan }] = yield* Effect.all([progress(orderId, 1), context(orderId)], { concurrency: 2 })
    const settings = yield* VpsSettings
    const virtualization = yield* Virtualization
    const placement = yield* Placement
    const catalog = yield* Catalog
    const [templates, allPools] = yield* Effect.all([catalog.templates(options.templateId), catalog.ipPools], { concurrency: 2 })
    const pools = allPools.filter((p) => !p.retired)
    const template = templates[0]
    if (template === undefined) {
      return yield* new StepFailed({ step: 1, reason: "The chosen OS template is no longer offered.", detail: "no template" })
    }
    const cluster = template.cluster
    const reachable = (node: string) => pools.some((p) => p.cluster === cluster && p.nodes.includes(node))
    const allowed = templates.filter((t) => t.cluster === cluster && reachable(t.node)).map((t) => t.node)
    const [capacity, vms] = yield* Effect.all([
      virtualization.nodeCapacity(cluster, settings.storage),
      virtualization.listVms(cluster)
    ], { concurrency: 2 }).pipe(Effect.mapError(failed(1, "The virtualization cluster cannot be reached.")))
    const visibleVmids = new Set(vms.map((vm) => vm.vmid))
    const reservation = yield* placement.reserve(cluster, orderId, (pending) =>
      chooseNode({
        capacity,
        allowed,
        visibleVmids,
        pending,
        request: { cpus: plan.vcpu, memoryMiB: plan.ramMiB, diskGiB: plan.diskGiB },
        policy: settings
      }))
    if (Option.isNone(reservation)) {
      return yield* new StepFailed({ step: 1, reason: "No server has room for this plan right now.", detail: "no capacity" })
    }
    const node = reservation.value.node
    const vmid = yield* allocateFreeVmid(cluster, orderId)
    yield* placement.attachVmid(orderId, vmid)
    const source = templates.find((t) => t.node === node)!
    return { cluster, node, vmid, templateNode: source.node, templateVmid: source.vmid } satisfies Placed
  })

/** Our range's lowest unused VMID that the cluster also reports free (something else may have taken it). */
const allocateFreeVmid = (
  cluster: string,
  holder: string
): Effect.Effect<number, StepFailed | DatabaseUnavailable, Placement | VpsSettings | Virtualization> =>
  Effect.gen(function*() {
    const placement = yield* Placement
    const settings = yield* VpsSettings
    for (let attempt = 0; attempt < 20; attempt++) {
      const vmid = yield* placement.allocateVmid(cluster, holder, settings.vmidRange)
      if (Option.isNone(vmid)) break
      const free = yield* (yield* Virtualization).isVmidFree(cluster, vmid.value).pipe(
        Effect.mapError(failed(1, "The virtualization cluster cannot be reached."))
      )
      if (free) return vmid.value
      yield* placement.markVmidForeign(cluster, vmid.value)
    }
    return yield* new StepFailed({ step: 1, reason: "No VM identifier is free.", detail: "vmid range exhausted" })
  })

/** Our VMs are named after their order, so a retry (or the undo) recognises its own and never touches others. */
export const vmName = (orderId: string) => `vps-${orderId.slice(0, 8)}`

/** How often a clone left running by an interrupted process is looked at before the step gives up (about 30 min). */
const CLONE_CHECKS = 64

/**
 * Returns the VMID cloned into (another one if something else took ours meanwhile), or null while a clone of ours
 * that a process died in the middle of is still running there: the workflow waits for it (pollDurably) rather than
 * clone twice.
 */
const step2Clone = (orderId: string, placed: Placed, check: number) =>
  Effect.gen(function*() {
    yield* progress(orderId, 2)
    const virtualization = yield* Virtualization
    const placement = yield* Placement
    const name = vmName(orderId)
    let vmid = placed.vmid
    for (let attempt = 0; attempt < 5; attempt++) {
      // A retried step finds its own clone already there: cloning is done.
      const existing = (yield* virtualization.listVms(placed.cluster).pipe(
        Effect.mapError(failed(2, "The virtualization cluster cannot be reached."))
      )).find((vm) => vm.vmid === vmid)
      if (existing !== undefined && existing.name === name) {
        if (!existing.busy) return vmid
        if (check >= CLONE_CHECKS) {
          return yield* new StepFailed({ step: 2, reason: "Cloning the OS template failed.", detail: "clone stayed locked" })
        }
        return null
      }
      const cloned = yield* virtualization.cloneTemplate({
        template: { cluster: placed.cluster, node: placed.templateNode, vmid: placed.templateVmid },
        target: { ...vmOf(placed), vmid },
        name,
        storage: (yield* VpsSettings).storage,
        stamp: orderId
      }).pipe(
        Effect.as(true),
        Effect.catchTag("VmidTaken", () => Effect.succeed(false)),
        Effect.mapError(failed(2, "Cloning the OS template failed."))
      )
      if (cloned) return vmid
      yield* placement.markVmidForeign(placed.cluster, vmid)
      vmid = yield* allocateFreeVmid(placed.cluster, orderId).pipe(
        Effect.catchTag("StepFailed", (e) => Effect.fail(new StepFailed({ ...e, step: 2 })))
      )
      yield* placement.attachVmid(orderId, vmid)
    }
    return yield* new StepFailed({ step: 2, reason: "Cloning the OS template failed.", detail: "VMIDs kept being taken" })
  })

const step3Resize = (orderId: string, placed: Placed) =>
  Effect.gen(function*() {
    const [, { plan }] = yield* Effect.all([progress(orderId, 3), context(orderId)], { concurrency: 2 })
    yield* (yield* Virtualization).resizeDisk(vmOf(placed), plan.diskGiB).pipe(
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
const step5Configure = (orderId: string, placed: Placed) =>
  Effect.gen(function*() {
    const [, { options, plan }, held] = yield* Effect.all([
      progress(orderId, 5),
      context(orderId),
      Effect.flatMap(IpAddresses, (addresses) => addresses.held(orderId))
    ], { concurrency: 3 })
    const settings = yield* VpsSettings
    if (held === undefined) return yield* Effect.die(new Error("address released before configuration"))
    const password = yield* generatePassword
    yield* (yield* Virtualization).configure(vmOf(placed), {
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

const step6Start = (orderId: string, placed: Placed, sealedPassword: string) =>
  Effect.gen(function*() {
    yield* progress(orderId, 6)
    // What the record needs is read while the VM starts: after the start only the writes remain.
    const [, { options, order }, held] = yield* Effect.all([
      (yield* Virtualization).start(vmOf(placed)).pipe(Effect.mapError(failed(6, "Starting the server failed."))),
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
        cluster: placed.cluster,
        node: placed.node,
        vmid: placed.vmid,
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
    yield* (yield* Orders).complete(orderId, vps.id, sealedPassword, at)
    return vps.id
  })

/** The undo cannot finish yet (a clone still running at our VMID); it is tried again later. */
class UndoBlocked extends Schema.TaggedError<UndoBlocked>()("UndoBlocked", { detail: Schema.String }) {
  override get message() {
    return this.detail
  }
}

/**
 * Undo in reverse, once: our VM (stopped, destroyed with its disks), the address, the reservation and the VMID. A VM
 * at our VMID that does not carry our stamp is never touched: an alert says so, and the VMID is never handed out again.
 */
const undo = (orderId: string, placed: Placed | undefined) =>
  Effect.gen(function*() {
    const placement = yield* Placement
    if (placed !== undefined) {
      const virtualization = yield* Virtualization
      const { owner, vm } = yield* ownership(vmOf(placed), orderId)
      const foreign = (found?: VmNotOurs) =>
        Effect.andThen(notOursAlert(vm, orderId, "destroy", found), placement.markVmidForeign(vm.cluster, vm.vmid))
      if (owner === "busy") return yield* new UndoBlocked({ detail: `VM ${vm.vmid} is locked and carries no stamp yet` })
      if (owner === "foreign") yield* foreign()
      if (owner === "ours") {
        yield* virtualization.stop(vm).pipe(Effect.catchTag("VmNotFound", () => Effect.void))
        yield* virtualization.destroy(vm, orderId).pipe(Effect.catchTag("VmNotOurs", foreign))
      }
    }
    yield* (yield* IpAddresses).release(orderId)
    yield* placement.releaseReservation(orderId)
    yield* placement.releaseVmid(orderId)
  })

/** The undo of a failed VPS order, given where it was placed (null: nowhere yet). */
export const UndoVps = Workflow.make("UndoProvisionVps", {
  payload: { orderId: Schema.String, placed: Schema.NullOr(Placed) },
  idempotencyKey: ({ orderId }) => orderId
})

export const UndoVpsLive = UndoVps.toLayer(Effect.fn(function*({ orderId, placed }) {
  yield* undoing(orderId, undo(orderId, placed ?? undefined))
}))

export const ProvisionVpsLive = ProvisionVps.toLayer(Effect.fn(function*({ orderId }) {
  let placed: Placed | undefined
  const build = Effect.gen(function*() {
    placed = yield* provisioningStep({ name: "place", success: Placed, execute: dieOnDatabaseOutage(step1Place(orderId)) })
    const p0 = placed
    const vmid = yield* pollDurably({
      name: "clone",
      success: Schema.Int,
      check: (check) => dieOnDatabaseOutage(step2Clone(orderId, p0, check)),
      pauses: (yield* VpsSettings).clonePoll
    })
    placed = { ...placed, vmid }
    const p = placed
    // The address is database work: assigned while the disk is resized. Both finish before either failure counts,
    // so the undo never races a step still running.
    const [resized, addressed] = yield* Effect.all([
      provisioningStep({ name: "resize", success: Schema.Void, execute: dieOnDatabaseOutage(step3Resize(orderId, p)) }).pipe(Effect.result),
      provisioningStep({ name: "address", success: Schema.String, execute: dieOnDatabaseOutage(step4Address(orderId)) }).pipe(Effect.result)
    ], { concurrency: 2 })
    if (Result.isFailure(resized)) return yield* Effect.fail(resized.failure)
    if (Result.isFailure(addressed)) return yield* Effect.fail(addressed.failure)
    const sealed = yield* provisioningStep({ name: "configure", success: Schema.String, execute: dieOnDatabaseOutage(step5Configure(orderId, p)) })
    return yield* provisioningStep({ name: "start", success: Schema.String, execute: dieOnDatabaseOutage(step6Start(orderId, p, sealed)) })
  })
  return yield* provisioned(
    orderId,
    build,
    () => UndoVps.execute({ orderId, placed: placed ?? null }, { discard: true, detached: true }),
    // Reached at its public IPv4 address.
    (vpsId) => Effect.map(Effect.flatMap(VpsRecords, (records) => records.get(vpsId)), Option.match({ onNone: () => "", onSome: (vps) => vps.address }))
  )
}))
