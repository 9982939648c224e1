// Operators' holds on services: at most one in force per service, kept after it is lifted (the history of decisions).
import { Context, type Effect, type Option } from "effect"
import type { ServiceHold } from "../domain/billing/ServiceHold.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class ServiceHolds extends Context.Service<ServiceHolds, {
  /**
   * Places the hold unless one is in force on its service already (two operators at once: one wins); answers the hold
   * in force afterwards and whether it is this one.
   */
  place(hold: ServiceHold): Effect.Effect<{ readonly hold: ServiceHold; readonly placed: boolean }, DatabaseUnavailable>
  /** Lifts the hold in force, if any (a compare-and-set: two lifts at once lift it once); answers the lifted hold. */
  lift(subscriptionId: string, lift: { readonly by: string; readonly at: Date; readonly reason: string }): Effect.Effect<Option.Option<ServiceHold>, DatabaseUnavailable>
  inForce(subscriptionId: string): Effect.Effect<Option.Option<ServiceHold>, DatabaseUnavailable>
  /** Every hold of the service, newest first. */
  history(subscriptionId: string): Effect.Effect<ReadonlyArray<ServiceHold>, DatabaseUnavailable>
}>()("zh/ports/ServiceHolds") {}
