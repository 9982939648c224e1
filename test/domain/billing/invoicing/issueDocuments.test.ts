// Specification of issuing: a quote prices lines by the buyer's profile, an invoice records each new charge with its
// buyer, seller and mentions, a credit note each refund, and a replayed entry issues nothing more.
import { NodeCrypto } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as MemoryLedger from "../../../../adapters/fake/MemoryLedger.ts"
import { quoteCharge, quotePlanMonth, recordCharge, recordRefund } from "../../../../domain/billing/invoicing/issueDocuments.ts"
import { BillingProfiles } from "../../../../ports/BillingProfiles.ts"
import { Invoices } from "../../../../ports/Invoices.ts"
import { chargeEntry, profileIn } from "../../../support/invoiceMother.ts"
import { memoryInvoicing } from "../../../support/invoicing.ts"
import { newUser } from "../../../support/userMother.ts"
import { SandboxSirets, SandboxVatNumbers } from "../../../support/sandboxRegistries.ts"

const env = Layer.mergeAll(memoryInvoicing, MemoryLedger.layer, NodeCrypto.layerSecureRandom)

const month = { start: new Date("2026-03-01T10:00:00.000Z"), end: new Date("2026-04-01T10:00:00.000Z") }
const vpsS = { name: "VPS S", priceCents: 1000 }

/** A VIES check on record, with `status`. */
const checked = (status: "valid" | "unavailable") =>
  ({ status, checkedAt: new Date(0), requestIdentifier: null, registeredName: null, registeredAddress: null }) as const

const withProfile = (user: ReturnType<typeof newUser>, country: string, overrides: Parameters<typeof profileIn>[2] = {}) =>
  Effect.flatMap(BillingProfiles, (profiles) => profiles.save(profileIn(user.id, country, overrides)))

layer(env)("issuing invoices and credit notes", (it) => {
  it.effect("no billing profile, no quote: an invoice needs the billing address", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(quotePlanMonth(newUser("nobody@example.com"), vpsS, month))
      assert.strictEqual(failure._tag, "BillingProfileRequired")
    }))

  it.effect("a French consumer's month is invoiced F…-000001 with 20 % VAT, both parties and the period", () =>
    Effect.gen(function*() {
      const user = newUser("ada@example.com")
      yield* withProfile(user, "FR")
      const quote = yield* quotePlanMonth(user, vpsS, month)
      assert.strictEqual(quote.amounts.totalIncludingVatCents, 1200)
      const invoice = Option.getOrThrow(yield* recordCharge(chargeEntry(user.id, { amountCents: 1200 }), quote))
      assert.match(invoice.number, /^F2026-\d{6}$/)
      assert.deepStrictEqual(
        [invoice.kind, invoice.totalExcludingVatCents, invoice.vatCents, invoice.totalIncludingVatCents, invoice.lines[0]?.vatRateBasisPoints],
        ["invoice", 1000, 200, 1200, 2000]
      )
      assert.deepStrictEqual([invoice.periodStart, invoice.periodEnd], [month.start, month.end])
      assert.deepStrictEqual([invoice.buyer.name, invoice.buyer.address.country, invoice.seller.siren], ["Ada Lovelace", "FR", "000000097"])
      assert.strictEqual(invoice.language, "en")
    }))

  it.effect("a Belgian company with a VIES-valid number is invoiced under reverse charge, with both VAT numbers", () =>
    Effect.gen(function*() {
      const user = newUser("be@example.com")
      yield* withProfile(user, "BE", {
        companyName: "Demo SRL",
        vatNumber: SandboxVatNumbers.belgianCompany,
        vatCheck: checked("valid")
      })
      const quote = yield* quotePlanMonth(user, vpsS, month)
      const invoice = Option.getOrThrow(yield* recordCharge(chargeEntry(user.id, { amountCents: 1000 }), quote))
      assert.deepStrictEqual(
        [invoice.lines[0]?.vatCategory, invoice.vatCents, invoice.mentions, invoice.exemptionCode, invoice.buyer.vatNumber, invoice.seller.vatNumber],
        ["AE", 0, ["reverse_charge"], "VATEX-EU-AE", "BE0123456749", "FR12000000097"]
      )
    }))

  it.effect("a professional account's invoice carries its SIREN; its VAT number only once VIES confirmed it", () =>
    Effect.gen(function*() {
      const user = newUser("edf@example.com", { accountType: "professional", siret: SandboxSirets.edf, companyName: "ELECTRICITE DE FRANCE" })
      yield* withProfile(user, "FR", { companyName: "ELECTRICITE DE FRANCE", vatNumber: SandboxVatNumbers.edf })
      const unconfirmed = Option.getOrThrow(yield* recordCharge(chargeEntry(user.id), yield* quotePlanMonth(user, vpsS, month)))
      assert.deepStrictEqual([unconfirmed.buyer.siren, unconfirmed.buyer.vatNumber, unconfirmed.buyer.business], ["552081317", null, true])
    }))

  it.effect("a German consumer once the year's OSS sales passed the threshold pays the German rate", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-03-01T09:00:00.000Z"))
      const big = newUser("big@example.com")
      yield* withProfile(big, "AT")
      // 10,000 € of cross-border consumer sales this year (Austria has no rate in the test rules: French VAT).
      const bulk = yield* quoteCharge(big, [{ description: "Bulk", quantity: 1, unitPriceExcludingVatCents: 1_000_000 }], null)
      assert.isTrue(bulk.decision.countsTowardsOss)
      yield* recordCharge(chargeEntry(big.id, { amountCents: bulk.amounts.totalIncludingVatCents }), bulk)
      const user = newUser("de@example.com")
      yield* withProfile(user, "DE")
      const quote = yield* quotePlanMonth(user, vpsS, month)
      assert.deepStrictEqual([quote.decision.taxCountry, quote.amounts.vatCents, quote.amounts.totalIncludingVatCents], ["DE", 190, 1190])
    }))

  it.effect("a replayed charge records and issues nothing more, and answers the invoice already issued", () =>
    Effect.gen(function*() {
      const user = newUser("replay@example.com")
      yield* withProfile(user, "FR")
      const quote = yield* quotePlanMonth(user, vpsS, month)
      const entry = chargeEntry(user.id)
      const first = yield* recordCharge(entry, quote)
      const again = yield* recordCharge({ ...entry, id: "another-id" }, quote)
      assert.deepStrictEqual(again, first)
      assert.strictEqual((yield* Effect.flatMap(Invoices, (i) => i.forUser(user.id, null, 10))).length, 1)
    }))

  it.effect("a charge that differs from its quote is invoiced as charged, its VAT derived from the total", () =>
    Effect.gen(function*() {
      const user = newUser("legacy@example.com")
      yield* withProfile(user, "FR")
      const invoice = Option.getOrThrow(yield* recordCharge(chargeEntry(user.id, { amountCents: 1000 }), yield* quotePlanMonth(user, vpsS, month)))
      assert.deepStrictEqual([invoice.totalExcludingVatCents, invoice.vatCents, invoice.totalIncludingVatCents], [833, 167, 1000])
    }))

  it.effect("a full refund's credit note mirrors the invoice, names it, and is numbered in the A series", () =>
    Effect.gen(function*() {
      const user = newUser("refund@example.com")
      yield* withProfile(user, "FR")
      const charge = chargeEntry(user.id)
      const invoice = Option.getOrThrow(yield* recordCharge(charge, yield* quotePlanMonth(user, vpsS, month)))
      const refund = chargeEntry(user.id, { kind: "refund", reference: `${charge.reference}:re_1`, createdAt: new Date("2026-03-02T10:00:00.000Z") })
      const credit = Option.getOrThrow(yield* recordRefund(refund, charge.reference))
      assert.match(credit.number, /^A2026-\d{6}$/)
      assert.deepStrictEqual(
        [credit.kind, credit.correctsInvoiceId, credit.correctsNumber, credit.lines, credit.totalIncludingVatCents, credit.buyer],
        ["credit_note", invoice.id, invoice.number, invoice.lines, 1200, invoice.buyer]
      )
      assert.deepStrictEqual(yield* recordRefund({ ...refund, id: "replayed" }, charge.reference), Option.some(credit))
    }))

  it.effect("a partial refund (27/30 of 12.00 €) is one line whose base and VAT add up to what was given back", () =>
    Effect.gen(function*() {
      const user = newUser("partial@example.com")
      yield* withProfile(user, "FR")
      const charge = chargeEntry(user.id)
      yield* recordCharge(charge, yield* quotePlanMonth(user, vpsS, month))
      const refunded = Math.round(1200 * 27 / 30)
      const credit = Option.getOrThrow(yield* recordRefund(chargeEntry(user.id, { kind: "refund", amountCents: refunded, reference: `${charge.reference}:re_2` }), charge.reference))
      assert.deepStrictEqual([credit.totalExcludingVatCents, credit.vatCents, credit.totalIncludingVatCents], [900, 180, 1080])
      assert.strictEqual(credit.lines.length, 1)
    }))

  it.effect("a refund of a charge that has no invoice (recorded before invoicing) is recorded without a credit note", () =>
    Effect.gen(function*() {
      const user = newUser("old@example.com")
      const none = yield* recordRefund(chargeEntry(user.id, { kind: "refund", reference: "ch_old:re_1" }), "ch_old")
      assert.isTrue(Option.isNone(none))
    }))
})

describe("quoteCharge", () => {
  layer(env)("", (it) => {
    it.effect("a VAT number VIES could not check is charged VAT (and checked again at the next quote)", () =>
      Effect.gen(function*() {
        const user = newUser("down@example.com")
        yield* withProfile(user, "BE", {
          companyName: "Down SRL",
          vatNumber: SandboxVatNumbers.viesDown,
          vatCheck: checked("unavailable")
        })
        const quote = yield* quotePlanMonth(user, vpsS, month)
        assert.deepStrictEqual([quote.decision.category, quote.decision.recheckVatNumber, quote.amounts.vatCents], ["S", true, 200])
      }))
  })
})
