// Invoicing for tests: the demo seller, VAT rules with a few member states, and the in-memory documents.
import { Layer } from "effect"
import { resolve } from "node:path"
import * as FixtureVatRegistry from "../../adapters/fake/FixtureVatRegistry.ts"
import * as MemoryBillingProfiles from "../../adapters/fake/MemoryBillingProfiles.ts"
import * as MemoryInvoices from "../../adapters/fake/MemoryInvoices.ts"
import { InvoicingSettings } from "../../domain/billing/invoicing/InvoicingSettings.ts"
import { demoSeller } from "../../domain/billing/invoicing/Seller.ts"
import type { VatRules } from "../../domain/billing/invoicing/vatDecision.ts"

export const testVatRules: VatRules = {
  frenchRateBasisPoints: 2000,
  ossThresholdCents: 1_000_000,
  memberStateRates: new Map([["BE", 2100], ["DE", 1900], ["FI", 2550]])
}

export const testInvoicingSettings = Layer.succeed(InvoicingSettings, { seller: demoSeller, vatRules: testVatRules })

/** What issuing documents needs beside the ledger: settings, the documents, the profiles and the VIES fixture. */
export const memoryInvoicing = Layer.mergeAll(
  testInvoicingSettings,
  MemoryInvoices.layer,
  MemoryBillingProfiles.layer,
  FixtureVatRegistry.layer
)

/** A valid SELLER_FILE for processes started outside sandbox mode. */
export const sellerFile = resolve(import.meta.dirname, "../fixtures/seller.json")
