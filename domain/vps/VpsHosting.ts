// The VPS as billing sells it: its plans and options, its six-step provisioning, and what its subscription's periods
// do to it (suspend, bring back, destroy), registered as the product of kind "vps".
import { Effect, Layer, Option } from "effect"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import { registerProduct } from "../billing/registerProduct.ts"
import { inspectVps } from "./inspectVps.ts"
import { plansOf } from "../catalog/listPlansForSale.ts"
import { termsOf } from "../catalog/Plan.ts"
import { holdVps, releaseVps, removeVps, RestoreVps, restoreVps, SuspendVps, suspendVps, TerminateVps } from "./Lifecycle.ts"
import { ProvisionVps, ProvisionVpsLive, UndoVpsLive, VPS_STEPS } from "./ProvisionVps.ts"
import { hasRoomFor } from "./room.ts"
import { validateVpsOptions } from "./VpsOptions.ts"

const plans = plansOf("vps")

export const VpsHosting = Layer.mergeAll(
  registerProduct({
    kind: "vps",
    steps: VPS_STEPS,
    forSale: plans.forSale,
    plan: plans.terms,
    termsOf,
    checkOptions: validateVpsOptions,
    hasRoom: (plan, options) => hasRoomFor(plan, { templateId: String(options["templateId"]) }),
    summary: (subscriptionId) =>
      Effect.map(
        Effect.flatMap(VpsRecords, (records) => records.bySubscription(subscriptionId)),
        // A destroyed VPS's address went back to the pool and may be someone else's now.
        Option.map((vps) => ({ name: vps.hostname, address: vps.status === "destroyed" ? "" : vps.address, state: vps.status }))
      ),
    inspect: inspectVps,
    standing: (subscriptionId) =>
      Effect.map(
        Effect.flatMap(VpsRecords, (records) => records.bySubscription(subscriptionId)),
        Option.map((vps) => ({ suspended: vps.status === "suspended", graceUntil: vps.graceUntil }))
      ),
    suspend: suspendVps,
    hold: holdVps,
    bringBack: restoreVps,
    remove: removeVps,
    release: releaseVps,
    transient: (e) => e._tag === "VirtualizationUnavailable",
    provisioning: ProvisionVps,
    lapse: SuspendVps,
    restore: RestoreVps,
    termination: TerminateVps
  }),
  ProvisionVpsLive,
  UndoVpsLive
)
