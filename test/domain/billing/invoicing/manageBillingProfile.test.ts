// Specification of the billing profile: the prefill of a professional account from the registry, validation, and the
// VIES check of the VAT number kept as evidence (and done again when VIES was down).
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as MemoryBillingProfiles from "../../../../adapters/fake/MemoryBillingProfiles.ts"
import type { BillingProfileInput } from "../../../../domain/billing/invoicing/BillingProfile.ts"
import {
  recheckVatNumber,
  saveBillingProfile,
  viewBillingProfile
} from "../../../../domain/billing/invoicing/manageBillingProfile.ts"
import { BillingProfiles } from "../../../../ports/BillingProfiles.ts"
import { newUser } from "../../../support/userMother.ts"
import {
  businessRegistry,
  layerSimulation,
  SandboxRegistryInstance,
  SandboxSirets,
  SandboxVatNumbers,
  vatRegistry
} from "../../../support/sandboxRegistries.ts"

const consumer = newUser("ada@example.com")
const edf = newUser("edf@example.com", {
  accountType: "professional",
  siret: SandboxSirets.edf,
  companyName: "ELECTRICITE DE FRANCE"
})

const belgian: BillingProfileInput = {
  name: "Jan Peeters",
  companyName: "Demo SRL",
  address: { line1: "Rue de la Loi 1", postcode: "1000", city: "Bruxelles", country: "be" },
  vatNumber: "be 0123.456.749"
}

const env = Layer.mergeAll(MemoryBillingProfiles.layer, businessRegistry, vatRegistry)

const problemOf = (input: BillingProfileInput, user = consumer) =>
  Effect.map(Effect.flip(saveBillingProfile(user, input)), (e) => e._tag === "InvalidBillingProfile" ? `${e.field}: ${e.problem}` : e._tag)

layer(env)("billing profile", (it) => {
  it.effect("a professional account is prefilled from the registry: company, head office, the SIREN's VAT number", () =>
    Effect.gen(function*() {
      const { profile, saved } = yield* viewBillingProfile(edf)
      assert.isFalse(saved)
      assert.deepStrictEqual(
        [profile.companyName, profile.address, profile.vatNumber],
        ["ELECTRICITE DE FRANCE", { line1: "22-30 AVENUE DE WAGRAM", line2: null, postcode: "75008", city: "PARIS", country: "FR" }, "FR03552081317"]
      )
    }))

  it.effect("a consumer's prefill has their name and nothing else to guess", () =>
    Effect.gen(function*() {
      const { profile, saved } = yield* viewBillingProfile(consumer)
      assert.isFalse(saved)
      assert.deepStrictEqual([profile.name, profile.companyName, profile.vatNumber, profile.address.line1], ["Ada Lovelace", null, null, ""])
    }))

  it.effect("a saved profile is normalised, its VAT number checked with VIES, and the evidence kept", () =>
    Effect.gen(function*() {
      const user = newUser("jan@example.com")
      const profile = yield* saveBillingProfile(user, belgian)
      assert.deepStrictEqual([profile.address.country, profile.vatNumber, profile.vatCheck?.status], ["BE", SandboxVatNumbers.belgianCompany, "valid"])
      assert.match(profile.vatCheck?.requestIdentifier ?? "", /^WAPISANDBOX\d{6}$/)
      assert.strictEqual(profile.vatCheck?.registeredName, "DEMO BELGIUM SRL")
      const { profile: read, saved } = yield* viewBillingProfile(user)
      assert.isTrue(saved)
      assert.deepStrictEqual(read, profile)
    }))

  it.effect("a number VIES rejects is kept as invalid (VAT is then charged), not refused", () =>
    Effect.gen(function*() {
      const profile = yield* saveBillingProfile(newUser("rejected@example.com"), { ...belgian, vatNumber: SandboxVatNumbers.belgianRejected })
      assert.strictEqual(profile.vatCheck?.status, "invalid")
    }))

  it.effect("bad input is refused field by field", () =>
    Effect.gen(function*() {
      const fr = { name: "Ada", address: { line1: "1 rue X", postcode: "75001", city: "Paris", country: "FR" } }
      assert.strictEqual(yield* problemOf({ ...fr, name: "  " }), "name: is required")
      assert.strictEqual(yield* problemOf({ ...fr, address: { ...fr.address, country: "XX" } }), "address.country: must be an ISO 3166-1 alpha-2 country code such as FR")
      assert.strictEqual(yield* problemOf({ ...fr, address: { ...fr.address, postcode: "7500" } }), "address.postcode: must be 5 digits in France")
      assert.strictEqual(yield* problemOf({ ...fr, address: { ...fr.address, city: "" } }), "address.city: is required")
      assert.strictEqual(yield* problemOf({ ...belgian, vatNumber: "DE123456789" }), "InvalidVatNumber")
      assert.strictEqual(yield* problemOf({ ...belgian, companyName: undefined }), "companyName: is required with a VAT number")
      assert.strictEqual(yield* problemOf({ ...fr, vatNumber: "FR04552081317" }), "InvalidVatNumber")
    }))

  it.effect("a professional account keeps its company name when the form leaves it out", () =>
    Effect.gen(function*() {
      const saved = yield* saveBillingProfile(edf, {
        name: "Jeanne Martin",
        address: { line1: "22-30 avenue de Wagram", postcode: "75008", city: "Paris", country: "FR" },
        vatNumber: "FR03552081317"
      })
      assert.deepStrictEqual([saved.companyName, saved.vatCheck?.status], ["ELECTRICITE DE FRANCE", "valid"])
    }))
})

describe("a VAT number VIES could not check", () => {
  const env = Layer.mergeAll(MemoryBillingProfiles.layer, businessRegistry, vatRegistry, layerSimulation)

  layer(env)("", (it) => {
    it.effect("is saved as unavailable, then checked again and replaced by VIES's answer once it is back", () =>
      Effect.gen(function*() {
        const { control } = yield* SandboxRegistryInstance
        control.setMemberStateAvailable("BE", false)
        const user = newUser("later@example.com")
        const saved = yield* saveBillingProfile(user, belgian)
        assert.strictEqual(saved.vatCheck?.status, "unavailable")
        const stillDown = yield* recheckVatNumber(saved)
        assert.strictEqual(stillDown.vatCheck?.status, "unavailable")
        control.setMemberStateAvailable("BE", true)
        const rechecked = yield* recheckVatNumber(saved)
        assert.strictEqual(rechecked.vatCheck?.status, "valid")
        const stored = yield* Effect.flatMap(BillingProfiles, (p) => p.get(user.id))
        assert.strictEqual(Option.getOrThrow(stored).vatCheck?.status, "valid")
      }))
  })
})
