// Invoicing for tests: the demo seller, VAT rules with a few member states, and the in-memory documents.
import { Effect, Layer, type ManagedRuntime, Option } from "effect"
import type { SecureRandom } from "effect/crypto"
import { UserId } from "../../domain/account/User.ts"
import { quotePlanMonth, recordCharge } from "../../domain/billing/invoicing/issueDocuments.ts"
import { BillingProfiles } from "../../ports/BillingProfiles.ts"
import type { Invoices } from "../../ports/Invoices.ts"
import type { Ledger } from "../../ports/Ledger.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import type { VatRegistry } from "../../ports/VatRegistry.ts"
import { chargeEntry, profileIn } from "./invoiceMother.ts"
import { newUser } from "./userMother.ts"
import { resolve } from "node:path"
import * as FacturXDocuments from "../../adapters/documents/FacturXDocuments.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as MemoryBillingProfiles from "../../adapters/fake/MemoryBillingProfiles.ts"
import * as MemoryInvoices from "../../adapters/fake/MemoryInvoices.ts"
import { InvoicingSettings } from "../../domain/billing/invoicing/InvoicingSettings.ts"
import { demoSeller } from "../../domain/billing/invoicing/Seller.ts"
import type { VatRules } from "../../domain/billing/invoicing/vatDecision.ts"
import { businessRegistry, vatRegistry } from "./sandboxRegistries.ts"

export const testVatRules: VatRules = {
  frenchRateBasisPoints: 2000,
  ossThresholdCents: 1_000_000,
  memberStateRates: new Map([["BE", 2100], ["DE", 1900], ["FI", 2550]])
}

export const testInvoicingSettings = Layer.succeed(InvoicingSettings, { seller: demoSeller, vatRules: testVatRules })

/**
 * What issuing documents needs beside the ledger: settings, the documents (and their PDF and XML), the profiles, the
 * VIES and the registry (the real adapters over the sandbox simulation), and the accounts billed.
 */
export const memoryInvoicing = Layer.mergeAll(
  testInvoicingSettings,
  MemoryInvoices.layer,
  MemoryBillingProfiles.layer,
  vatRegistry,
  businessRegistry,
  MemoryUsers.layer,
  FacturXDocuments.layer
)

/**
 * The account `userId` with a French consumer's billing profile (20 % VAT), each made when missing: a customer who can
 * pay. An account a test registered itself keeps its fields.
 */
export const billedCustomer = (userId: string, email = `${userId.slice(-12)}@example.test`) =>
  Effect.gen(function*() {
    const users = yield* Users
    const found = yield* users.findById(UserId.make(userId))
    const user = Option.isSome(found) ? found.value : yield* users.insert(newUser(email, { id: UserId.make(userId) })).pipe(Effect.orDie)
    const profiles = yield* BillingProfiles
    if (Option.isNone(yield* profiles.get(userId))) {
      yield* profiles.save(profileIn(userId, "FR", { name: `${user.firstName} ${user.lastName}`, address: frenchAddress }))
    }
    return user
  })

export const frenchAddress = { line1: "1 rue de la Paix", line2: null, postcode: "75002", city: "Paris", country: "FR" }

/** A valid SELLER_FILE for processes started outside sandbox mode. */
export const sellerFile = resolve(import.meta.dirname, "../fixtures/seller.json")

/**
 * A paid month of VPS S invoiced to `userId` (who has a billing profile) through the server's own services, as a
 * payment records it (recordCharge), without going through an order.
 */
export const invoiceAMonth = (
  server: { readonly runtime: ManagedRuntime.ManagedRuntime<Users | UnitOfWork | Ledger | Invoices | BillingProfiles | VatRegistry | InvoicingSettings | SecureRandom.SecureRandom, unknown> },
  userId: string,
  start: Date
) =>
  server.runtime.runPromise(Effect.gen(function*() {
    const user = Option.getOrThrow(yield* (yield* Users).findById(UserId.make(userId)))
    const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, start.getUTCDate(), start.getUTCHours()))
    const quote = yield* quotePlanMonth(user, { name: "VPS S", priceCents: 500 }, { start, end })
    const charge = chargeEntry(user.id, { amountCents: quote.amounts.totalIncludingVatCents, createdAt: start })
    const invoice = Option.getOrThrow(yield* (yield* UnitOfWork).transaction(recordCharge(charge, quote)))
    return { invoice, charge }
  }))

/** A valid LEGAL_DIR (the six legal texts) for processes started outside sandbox mode. */
export const legalDir = resolve(import.meta.dirname, "../fixtures/legal")
