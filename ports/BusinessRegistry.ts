// The French business registry, asked whether a SIRET belongs to an active establishment.
import { Context, type Effect, Schema } from "effect"

export interface HeadOffice {
  readonly line1: string
  readonly postcode: string
  readonly city: string
}

export type SiretStatus =
  | {
    readonly _tag: "Active"
    /** Null when the unit is partially diffusible: its identity is masked and must not be stored. */
    readonly companyName: string | null
    /** The legal unit's head-office address, when the registry gives it (prefills the billing profile). */
    readonly headOffice?: HeadOffice
  }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Unknown" }

export class RegistryUnavailable extends Schema.TaggedError<RegistryUnavailable>()("RegistryUnavailable", {
  reason: Schema.Literals(["DOWN", "THROTTLED"])
}) {
  override get message() {
    return this.reason === "THROTTLED"
      ? "The business registry is busy; please try again in a minute."
      : "The business registry cannot be reached right now; please try again later."
  }
}

export class BusinessRegistry extends Context.Service<BusinessRegistry, {
  lookUpSiret(siret: string): Effect.Effect<SiretStatus, RegistryUnavailable>
}>()("zh/ports/BusinessRegistry") {}
