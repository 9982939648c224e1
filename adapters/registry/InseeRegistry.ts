// BusinessRegistry over INSEE API Sirene 3.11 (`GET /siret/{siret}`, API-key plan): decoding the answer,
// mapping its statuses, and bounded retries on throttling and outages (reference/business-registry.md §2.1).
import { Effect, Layer, Redacted, Schema } from "effect"
import { type HttpClient } from "effect/http"
import { BusinessRegistry, type SiretStatus } from "../../ports/BusinessRegistry.ts"
import { type AttemptPolicy, lookUp, shown, unanswered, upstreamClient } from "./upstreamHttp.ts"

export interface InseeRegistryOptions extends AttemptPolicy {
  /** e.g. `https://api.insee.fr/api-sirene/3.11` */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
}

const Text = Schema.optional(Schema.NullOr(Schema.String))

// Only the fields the port needs; `masquerValeursNulles` may drop null fields, hence `optional`.
const SiretAnswer = Schema.Struct({
  etablissement: Schema.Struct({
    statutDiffusionEtablissement: Schema.String,
    // Index 0 is the current period (dateFin null).
    periodesEtablissement: Schema.NonEmptyArray(Schema.Struct({
      etatAdministratifEtablissement: Schema.Literals(["A", "F"])
    })),
    uniteLegale: Schema.Struct({
      statutDiffusionUniteLegale: Schema.String,
      etatAdministratifUniteLegale: Schema.Literals(["A", "C"]),
      denominationUniteLegale: Text,
      prenomUsuelUniteLegale: Text,
      prenom1UniteLegale: Text,
      nomUniteLegale: Text,
      nomUsageUniteLegale: Text
    })
  })
})
type LegalUnit = typeof SiretAnswer.Type["etablissement"]["uniteLegale"]

const decodeAnswer = Schema.decodeUnknownEffect(Schema.fromJsonString(SiretAnswer))

const unknown: SiretStatus = { _tag: "Unknown" }
const closed: SiretStatus = { _tag: "Closed" }

/** Companies have a denomination; sole traders are named "first-name last-name". */
const companyNameOf = (unit: LegalUnit): string | null => {
  const denomination = shown(unit.denominationUniteLegale)
  if (denomination !== undefined) return denomination
  const last = shown(unit.nomUniteLegale) ?? shown(unit.nomUsageUniteLegale)
  if (last === undefined) return null
  const first = shown(unit.prenomUsuelUniteLegale) ?? shown(unit.prenom1UniteLegale)
  return first === undefined ? last : `${first} ${last}`
}

const toStatus = ({ etablissement }: typeof SiretAnswer.Type): SiretStatus => {
  const unit = etablissement.uniteLegale
  if (
    etablissement.periodesEtablissement[0].etatAdministratifEtablissement === "F" ||
    unit.etatAdministratifUniteLegale === "C"
  ) return closed
  // Anything but "O" (fully public) — "P" today, legacy "N" — means the identity must not be stored.
  const identityPublic = etablissement.statutDiffusionEtablissement === "O" && unit.statutDiffusionUniteLegale === "O"
  return { _tag: "Active", companyName: identityPublic ? companyNameOf(unit) : null }
}

export const layer = (options: InseeRegistryOptions): Layer.Layer<BusinessRegistry, never, HttpClient.HttpClient> =>
  Layer.effect(
    BusinessRegistry,
    Effect.gen(function*() {
      const client = yield* upstreamClient(options.baseUrl, {
        // A header, never a query parameter: URLs end up in logs and traces.
        "X-INSEE-Api-Key-Integration": Redacted.value(options.apiKey)
      })

      const request = (siret: string) =>
        Effect.gen(function*() {
          const response = yield* client.get(`/siret/${encodeURIComponent(siret)}`)
          const status = response.status
          if (status === 200) return toStatus(yield* decodeAnswer(yield* response.text))
          // 403 "insufficient rights" is what a non-diffusible unit used to produce; to the user it is unknown.
          if (status === 404 || status === 403) return unknown
          // 301: the establishment belongs to a unit closed as a duplicate of another one.
          if (status === 301) return closed
          return yield* unanswered(response)
        })

      return BusinessRegistry.of({
        lookUpSiret: (siret) =>
          lookUp(request(siret), options, { warning: "INSEE Sirene lookup failed", span: "InseeRegistry.lookUpSiret" })
      })
    })
  )
