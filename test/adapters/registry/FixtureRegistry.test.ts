// Specification of the fixture registry: its SIRETs are valid, each answers as documented, the rest is Unknown.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as FixtureRegistry from "../../../adapters/fake/FixtureRegistry.ts"
import { isValidSiret, luhn } from "../../../domain/account/Siret.ts"
import { BusinessRegistry } from "../../../ports/BusinessRegistry.ts"

const { FixtureSirets } = FixtureRegistry

const lookUp = (siret: string) =>
  Effect.flatMap(BusinessRegistry, (registry) => registry.lookUpSiret(siret)).pipe(
    Effect.provide(FixtureRegistry.layer)
  )

describe("FixtureRegistry", () => {
  it("every named SIRET and every SIRET in the table passes the SIRET checksum rule", () => {
    for (const siret of [...Object.values(FixtureSirets), ...FixtureRegistry.table.keys()]) {
      assert.isTrue(isValidSiret(siret), siret)
    }
  })

  it("the La Poste establishment is valid only through the digit-sum rule", () => {
    assert.isFalse(luhn(FixtureSirets.laPosteEstablishment))
    assert.isTrue(isValidSiret(FixtureSirets.laPosteEstablishment))
  })

  it("the reference's unknown example fails the SIREN checksum, hence a different named unknown SIRET", () => {
    assert.isFalse(isValidSiret("88800012300008"))
    assert.isFalse(FixtureRegistry.table.has(FixtureSirets.unknown))
  })

  it.effect("well-known companies are active with their names, and two with their head office's address", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(FixtureSirets.edf), {
        _tag: "Active",
        companyName: "ELECTRICITE DE FRANCE",
        headOffice: { line1: "22-30 AVENUE DE WAGRAM", postcode: "75008", city: "PARIS" }
      })
      assert.deepStrictEqual(yield* lookUp(FixtureSirets.googleFrance), {
        _tag: "Active",
        companyName: "GOOGLE FRANCE",
        headOffice: { line1: "8 RUE DE LONDRES", postcode: "75009", city: "PARIS" }
      })
      assert.deepStrictEqual(yield* lookUp(FixtureSirets.laPoste), { _tag: "Active", companyName: "LA POSTE" })
      assert.deepStrictEqual(yield* lookUp(FixtureSirets.laPosteEstablishment), { _tag: "Active", companyName: "LA POSTE" })
    }))

  it.effect("the partially diffusible SIRET is active with no name to store", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(FixtureSirets.partiallyDiffusible), { _tag: "Active", companyName: null })
    }))

  it.effect("the closed SIRET is Closed", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(FixtureSirets.closed), { _tag: "Closed" })
    }))

  it.effect("the registry-down SIRET fails RegistryUnavailable DOWN", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(lookUp(FixtureSirets.registryDown))
      assert.strictEqual(error._tag, "RegistryUnavailable")
      assert.strictEqual(error.reason, "DOWN")
    }))

  it.effect("the registry-throttled SIRET fails RegistryUnavailable THROTTLED", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(lookUp(FixtureSirets.registryThrottled))
      assert.strictEqual(error._tag, "RegistryUnavailable")
      assert.strictEqual(error.reason, "THROTTLED")
    }))

  it.effect("any other SIRET is Unknown", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(FixtureSirets.unknown), { _tag: "Unknown" })
      assert.deepStrictEqual(yield* lookUp("88800012300008"), { _tag: "Unknown" })
    }))

  it.effect("a custom table answers from that table only", () =>
    Effect.gen(function*() {
      const registry = FixtureRegistry.make(new Map([[FixtureSirets.unknown, { _tag: "Closed" }]]))
      assert.deepStrictEqual(yield* registry.lookUpSiret(FixtureSirets.unknown), { _tag: "Closed" })
      assert.deepStrictEqual(yield* registry.lookUpSiret(FixtureSirets.edf), { _tag: "Unknown" })
    }))

  it.effect("layerWith provides a registry over a custom table", () =>
    Effect.gen(function*() {
      const status = yield* Effect.flatMap(BusinessRegistry, (registry) => registry.lookUpSiret(FixtureSirets.edf))
      assert.deepStrictEqual(status, { _tag: "Active", companyName: "EDF (custom)" })
    }).pipe(Effect.provide(
      FixtureRegistry.layerWith(new Map([[FixtureSirets.edf, { _tag: "Active", companyName: "EDF (custom)" }]]))
    )))
})
