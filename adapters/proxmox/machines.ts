// The machine of an order on Proxmox VE: the VMID is ours to choose (reference/proxmox.md §3.3: `nextid` reserves
// nothing), so it comes from our own range through ProxmoxVmids (one per order, claimed atomically across instances),
// is confirmed free with `nextid?vmid=N`, and is set aside for good when something else holds it (found there, or a
// clone answered "already exists"), before the next one is tried. Asked again for the same order (a retried step,
// another process), the VMID the order holds is read back: our stamp there is the machine made, a clone still running
// there is a creation under way.
import { type Duration, Effect, Option, Schema } from "effect"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import type { ProxmoxVmids, VmidRange } from "../../ports/ProxmoxVmids.ts"
import {
  type MachineCreation,
  type MachineSpec,
  NoMachineIdFree,
  type TaskFailed,
  VirtualizationUnavailable
} from "../../ports/Virtualization.ts"
import { call, type CallContext } from "./calls.ts"
import { cloneTemplate } from "./clone.ts"
import { type CallFailed, isAlreadyExists, isVmMissing } from "./failures.ts"
import { requests } from "./requests.ts"
import { lockOf, VmConfigStamp } from "./responses.ts"
import { stampOf } from "./stamp.ts"

/** Past this many VMIDs found taken in one call, the range is crowded by something else: the step fails, to retry. */
const ATTEMPTS = 20

/** What the VMID holds on the node the clone goes to: nothing, our machine (done or still cloning), or another's. */
type Target = "missing" | "ours" | "ours-in-progress" | "someone-else"

const readTarget = (ctx: CallContext, node: string, vmid: number, order: string): Effect.Effect<Target, CallFailed> =>
  call(ctx, "createMachine", requests.config({ node, vmid }), VmConfigStamp).pipe(
    Effect.map((config): Target => {
      const locked = lockOf(config.lock) !== null
      // The clone call writes our stamp into the description from the clone's first moment (stamp.ts).
      if (stampOf(config.tags, config.description) === order) return locked ? "ours-in-progress" : "ours"
      return "someone-else"
    }),
    Effect.catchIf(isVmMissing, () => Effect.succeed<Target>("missing"))
  )

/** Whether no VM of the cluster uses `vmid` right now (nothing is reserved by asking). */
export const isVmidFree = (ctx: CallContext, vmid: number) =>
  call(ctx, "createMachine", requests.nextId(vmid), Schema.Unknown).pipe(
    Effect.as(true),
    // 400 {"errors":{"vmid":"VM N already exists"}} (§3.3).
    Effect.catchIf((f) => f.status === 400 && isAlreadyExists(f.detail), () => Effect.succeed(false))
  )

export const createMachine = (
  ctx: CallContext,
  vmids: ProxmoxVmids["Service"],
  options: { readonly range: VmidRange; readonly cloneTimeout: Duration.Input },
  order: string,
  spec: MachineSpec
): Effect.Effect<
  MachineCreation,
  CallFailed | TaskFailed | NoMachineIdFree | VirtualizationUnavailable | DatabaseUnavailable
> =>
  Effect.gen(function*() {
    const created = (vmid: number): MachineCreation => ({ _tag: "Created", vm: { cluster: spec.cluster, node: spec.node, vmid } })
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const held = yield* vmids.allocate(spec.cluster, order, options.range)
      if (Option.isNone(held)) return yield* new NoMachineIdFree({ cluster: spec.cluster })
      const vmid = held.value
      const target = yield* readTarget(ctx, spec.node, vmid, order)
      if (target === "ours") return created(vmid)
      if (target === "ours-in-progress") return { _tag: "InProgress" } satisfies MachineCreation
      if (target === "missing" && (yield* isVmidFree(ctx, vmid))) {
        const cloned = yield* cloneTemplate(ctx, {
          template: spec.template,
          newid: vmid,
          name: spec.name,
          storage: spec.storage,
          stamp: order
        }, options.cloneTimeout).pipe(
          Effect.as(true),
          Effect.catchTag("VmidTaken", () => Effect.succeed(false))
        )
        if (cloned) return created(vmid)
      }
      // Something else holds it (here or on another node): never ours again; the order gets the next one.
      yield* vmids.setAside(spec.cluster, vmid)
    }
    // Each VMID set aside is never tried again: asked again, the allocation goes on past them.
    return yield* new VirtualizationUnavailable({
      operation: "createMachine",
      detail: `${ATTEMPTS} VMIDs in a row were held by something else`
    })
  })
