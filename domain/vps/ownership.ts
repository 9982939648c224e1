// Never touch what is not ours: every machine we create carries our stamp (the order it was made for), and before
// anything destructive (destroy, the lapse's stop) the machine at a handle must carry it. One that does not (its id
// reused outside our control) is left alone and an operator is alerted.
import { Effect, Option } from "effect"
import { Virtualization, type VmNotOurs, type VmRef } from "../../ports/Virtualization.ts"
import { alert } from "../ops/alert.ts"

/** What is at a machine's handle: our machine, nothing, someone else's, or one still being cloned (no stamp yet). */
export type Ownership = "ours" | "gone" | "foreign" | "busy"

/**
 * Who holds the handle `vm`, and where: a VM is looked for on its recorded node, then anywhere in the cluster (it
 * may have been migrated), and `vm` comes back with the node it is on.
 */
export const ownership = (vm: VmRef, orderId: string) =>
  Effect.gen(function*() {
    const virtualization = yield* Virtualization
    const ownerAt = (at: VmRef) =>
      virtualization.ownerOf(at).pipe(Effect.map(Option.some), Effect.catchTag("VmNotFound", () => Effect.succeedNone))
    let at = vm
    let owner = yield* ownerAt(at)
    if (Option.isNone(owner)) {
      const moved = (yield* virtualization.listVms(vm.cluster)).find((v) => v.vmid === vm.vmid && v.node !== vm.node)
      if (moved !== undefined) {
        at = { ...vm, node: moved.node }
        owner = yield* ownerAt(at)
      }
    }
    const of = (found: Ownership) => ({ owner: found, vm: at })
    if (Option.isNone(owner)) return of("gone")
    if (owner.value.stamp === orderId) return of("ours")
    return of(owner.value.stamp === null && owner.value.busy ? "busy" : "foreign")
  })

/** The alert for a refused destructive call on `vm`, which should have been order `orderId`'s. */
export const notOursAlert = (vm: VmRef, orderId: string, action: string, found?: VmNotOurs) =>
  alert(
    `refused to ${action} VM ${vm.vmid} on cluster ${vm.cluster}: it does not carry the stamp of order ${orderId}` +
      `${found === undefined ? "" : ` (${found.found === null ? "no stamp" : `order ${found.found}'s stamp`})`}; ` +
      "left untouched for an operator",
    { cluster: vm.cluster, node: vm.node, vmid: vm.vmid, orderId }
  )

/** The machine created for `orderId` on the cluster, if one was (whatever it carries now: `ownership` tells). */
export const machineOf = (cluster: string, orderId: string) =>
  Effect.map(
    Effect.flatMap(Virtualization, (virtualization) => virtualization.listVms(cluster)),
    (vms): VmRef | undefined => {
      const made = vms.find((vm) => vm.createdFor === orderId)
      return made === undefined ? undefined : { cluster: made.cluster, node: made.node, vmid: made.vmid }
    }
  )
