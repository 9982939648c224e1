// In-memory BusinessRegistry: a fixed table of SIRETs, for tests and for the `sandbox` provider when no real
// registry is configured. Every SIRET outside the table is Unknown.
import { Effect, Layer } from "effect"
import { BusinessRegistry, RegistryUnavailable, type SiretStatus } from "../../ports/BusinessRegistry.ts"

/** What the fixture answers for one SIRET: a status, or the registry being unreachable. */
export type FixtureAnswer =
  | SiretStatus
  | { readonly _tag: "Unavailable"; readonly reason: RegistryUnavailable["reason"] }

/**
 * SIRETs with a role in tests. Every one passes `isValidSiret` (reference/business-registry.md §2.3), so a
 * registration reaches the registry with it instead of stopping at the checksum.
 */
export const FixtureSirets = {
  edf: "55208131766522",
  googleFrance: "44306184100047",
  laPoste: "35600000000048",
  /** Valid only through La Poste's digit-sum rule, not through Luhn. */
  laPosteEstablishment: "35600000049837",
  partiallyDiffusible: "73282932000074",
  /** Made up: SIREN 120000005 + NIC 00005. */
  closed: "12000000500005",
  /** Made up, "503…": the registry cannot be reached. */
  registryDown: "50300000200009",
  /** Made up, "429…": the registry keeps refusing for now. */
  registryThrottled: "42900000300005",
  /**
   * Not in the table. The reference's unknown example, 88800012300008, is Unknown here too, but its SIREN
   * (888000123) fails Luhn, so the domain rejects it before any registry is asked.
   */
  unknown: "88800012200018"
} as const

export const table: ReadonlyMap<string, FixtureAnswer> = new Map<string, FixtureAnswer>([
  [FixtureSirets.edf, {
    _tag: "Active",
    companyName: "ELECTRICITE DE FRANCE",
    headOffice: { line1: "22-30 AVENUE DE WAGRAM", postcode: "75008", city: "PARIS" }
  }],
  [FixtureSirets.googleFrance, {
    _tag: "Active",
    companyName: "GOOGLE FRANCE",
    headOffice: { line1: "8 RUE DE LONDRES", postcode: "75009", city: "PARIS" }
  }],
  [FixtureSirets.laPoste, { _tag: "Active", companyName: "LA POSTE" }],
  [FixtureSirets.laPosteEstablishment, { _tag: "Active", companyName: "LA POSTE" }],
  [FixtureSirets.partiallyDiffusible, { _tag: "Active", companyName: null }],
  [FixtureSirets.closed, { _tag: "Closed" }],
  [FixtureSirets.registryDown, { _tag: "Unavailable", reason: "DOWN" }],
  [FixtureSirets.registryThrottled, { _tag: "Unavailable", reason: "THROTTLED" }]
])

const unknown: SiretStatus = { _tag: "Unknown" }

export const make = (answers: ReadonlyMap<string, FixtureAnswer> = table) =>
  BusinessRegistry.of({
    lookUpSiret: (siret) => {
      const answer = answers.get(siret)
      if (answer === undefined) return Effect.succeed(unknown)
      return answer._tag === "Unavailable"
        ? Effect.fail(new RegistryUnavailable({ reason: answer.reason }))
        : Effect.succeed(answer)
    }
  })

export const layer: Layer.Layer<BusinessRegistry> = Layer.succeed(BusinessRegistry, make())

export const layerWith = (answers: ReadonlyMap<string, FixtureAnswer>): Layer.Layer<BusinessRegistry> =>
  Layer.succeed(BusinessRegistry, make(answers))
