// What invoicing takes from configuration: the seller's identity and the VAT rules (rates, OSS threshold).
import { Context } from "effect"
import type { Seller } from "./Seller.ts"
import type { VatRules } from "./vatDecision.ts"

export class InvoicingSettings extends Context.Service<InvoicingSettings, {
  readonly seller: Seller
  readonly vatRules: VatRules
}>()("zh/domain/billing/InvoicingSettings") {}
