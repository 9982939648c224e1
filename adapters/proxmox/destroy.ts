// Destroying a VM, only ours: its config is read first and the DELETE is sent only when it carries our stamp for the
// expected order (reference/proxmox.md §3.10, §5.6, §5.12).
import { type Duration, Effect, Option } from "effect"
import { TaskFailed, VmNotOurs, type VmRef } from "../../ports/Virtualization.ts"
import { call, type CallContext, runTask } from "./calls.ts"
import { type CallFailed, isVmMissing } from "./failures.ts"
import { requests } from "./requests.ts"
import { lockOf, missingConfig, qemuOf, Resources, says, VmConfigStamp } from "./responses.ts"
import { stampOf } from "./stamp.ts"

/**
 * `purge` + unreferenced disks; a VM already gone is success. Another stamp (or none) is refused as VmNotOurs with
 * nothing sent. A running VM is refused as PVE refuses it ("VM N is running - destroy failed"): stopping is the
 * domain's decision, never a side effect of destroying.
 */
export const destroyVm = (
  ctx: CallContext,
  vm: VmRef,
  stamp: string,
  timeout: Duration.Input,
  relocated = false
): Effect.Effect<void, CallFailed | TaskFailed | VmNotOurs> => {
  // The wrong node answers like a deleted VM (§5.6): only "nowhere in the cluster" is success.
  const gone = (missing: CallFailed | TaskFailed) =>
    Effect.flatMap(call(ctx, "destroy", requests.clusterResources("vm"), Resources), (list) => {
      const elsewhere = qemuOf(list).find((r) => r.vmid === vm.vmid && r.node !== vm.node)
      if (elsewhere === undefined || typeof elsewhere.node !== "string") return Effect.void
      return relocated ? Effect.fail(missing) : destroyVm(ctx, { ...vm, node: elsewhere.node }, stamp, timeout, true)
    })
  const destroyIfOurs = (config: typeof VmConfigStamp.Type): Effect.Effect<void, CallFailed | TaskFailed | VmNotOurs> => {
    const found = stampOf(config.tags, config.description)
    const lock = lockOf(config.lock)
    // A clone still being made may not carry its stamp yet; PVE would refuse a locked VM anyway.
    if (found === null && lock !== null) {
      return Effect.fail(new TaskFailed({ operation: "destroy", exitStatus: `VM ${vm.vmid} is locked (${lock})`, log: [] }))
    }
    if (found !== stamp) return Effect.fail(new VmNotOurs({ cluster: vm.cluster, vmid: vm.vmid, expected: stamp, found }))
    return runTask(ctx, "destroy", requests.destroy(vm), timeout).pipe(Effect.asVoid, Effect.catchIf(says(missingConfig), gone))
  }
  return call(ctx, "destroy", requests.config(vm), VmConfigStamp).pipe(
    Effect.map(Option.some),
    Effect.catchIf(isVmMissing, (missing) => Effect.as(gone(missing), Option.none())),
    Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: destroyIfOurs }))
  )
}
