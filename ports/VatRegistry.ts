// The EU's register of VAT numbers (VIES), asked whether a number is registered; its answer is kept as evidence.
import { Context, type Effect, Schema } from "effect"
import type { VatNumber } from "../domain/billing/invoicing/vatNumber.ts"

export interface VatNumberCheck {
  readonly valid: boolean
  readonly checkedAt: Date
  /** VIES's consultation number, when it gave one. */
  readonly requestIdentifier: string | null
  readonly registeredName: string | null
  readonly registeredAddress: string | null
}

/** VIES or the member state's register did not answer; a sale goes on with VAT charged. */
export class VatRegistryUnavailable extends Schema.TaggedError<VatRegistryUnavailable>()("VatRegistryUnavailable", {
  reason: Schema.String
}) {
  override get message() {
    return "The EU VAT number register (VIES) cannot be reached right now."
  }
}

export class VatRegistry extends Context.Service<VatRegistry, {
  check(vat: VatNumber): Effect.Effect<VatNumberCheck, VatRegistryUnavailable>
}>()("zh/ports/VatRegistry") {}
