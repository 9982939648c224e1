// The VPS as billing sells it: its plans and options, its six-step provisioning, and what its subscription's periods
// do to it (suspend, bring back, destroy), registered as the product of kind "vps".
import { Effect, Layer, Option } from "effect"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import { registerProduct } from "../billing/registerProduct.ts"
import { plansOf } from "../catalog/listPlansForSale.ts"
import { termsOf } from "../catalog/Plan.ts"
import { releaseVps, removeVps, RestoreVps, restoreVps, SuspendVps, suspendVps, TerminateVps } from "./Lifecycle.ts"
import { ProvisionVps, ProvisionVpsLive, UndoVpsLive, VPS_STEPS } from "./ProvisionVps.ts"
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
    standing: (subscriptionId) =>
      Effect.map(
        Effect.flatMap(VpsRecords, (records) => records.bySubscription(subscriptionId)),
        Option.map((vps) => ({ suspended: vps.status === "suspended", graceUntil: vps.graceUntil }))
      ),
    suspend: suspendVps,
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
