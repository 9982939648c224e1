// BusinessRegistry over the keyless API Recherche d'entreprises (`GET /search?q={siret}`): finding the SIRET
// among the results, mapping its states, and bounded retries honouring Retry-After (reference/business-registry.md §2.2).
import { Effect, Layer, Schema } from "effect"
import { type HttpClient } from "effect/http"
import { BusinessRegistry, type HeadOffice, type SiretStatus } from "../../ports/BusinessRegistry.ts"
import { type AttemptPolicy, lookUp, shown, unanswered, upstreamClient } from "./upstreamHttp.ts"

export interface RechercheEntreprisesRegistryOptions extends AttemptPolicy {
  /** e.g. `https://recherche-entreprises.api.gouv.fr` */
  readonly baseUrl: string
}

/** The service asks callers to identify themselves; anonymous clients are the first to be cut off under load. */
export const userAgent = "zh-hosting/0.1 (+registry check)"

const Text = Schema.optional(Schema.NullOr(Schema.String))

const Establishment = Schema.Struct({
  siret: Schema.String,
  etat_administratif: Schema.Literals(["A", "F"]),
  statut_diffusion_etablissement: Text,
  /** The whole address on one line, postcode and town last. */
  adresse: Text,
  code_postal: Text,
  libelle_commune: Text
})

// Only the fields the port needs.
const SearchAnswer = Schema.Struct({
  results: Schema.Array(Schema.Struct({
    siren: Schema.String,
    nom_complet: Text,
    nom_raison_sociale: Text,
    etat_administratif: Schema.Literals(["A", "C"]),
    statut_diffusion: Schema.String,
    siege: Schema.optional(Schema.NullOr(Establishment)),
    matching_etablissements: Schema.optional(Schema.NullOr(Schema.Array(Establishment)))
  }))
})
type SearchResult = typeof SearchAnswer.Type["results"][number]

const decodeAnswer = Schema.decodeUnknownEffect(Schema.fromJsonString(SearchAnswer))

const unknown: SiretStatus = { _tag: "Unknown" }
const closed: SiretStatus = { _tag: "Closed" }

type EstablishmentAnswer = typeof Establishment.Type

/** The head office's street line: `adresse` without its trailing postcode and town. */
const headOfficeOf = (siege: EstablishmentAnswer | null | undefined): HeadOffice | undefined => {
  const address = shown(siege?.adresse)
  const postcode = shown(siege?.code_postal)
  const city = shown(siege?.libelle_commune)
  if (address === undefined || postcode === undefined || city === undefined) return undefined
  const suffix = ` ${postcode} ${city}`
  const line1 = address.endsWith(suffix) ? address.slice(0, -suffix.length).trim() : ""
  return line1 === "" ? undefined : { line1, postcode, city }
}

/**
 * A SIRET query is a direct lookup, but the answer is still a search result: the establishment must be found in it.
 * Non-diffusible units are absent from this API altogether, which also makes them Unknown.
 */
const toStatus = (siret: string, results: ReadonlyArray<SearchResult>): SiretStatus => {
  for (const result of results) {
    const establishment = [...(result.matching_etablissements ?? []), ...(result.siege ? [result.siege] : [])]
      .find((e) => e.siret === siret)
    if (establishment === undefined) continue
    if (establishment.etat_administratif === "F" || result.etat_administratif === "C") return closed
    // Anything but "O" (fully public) means the identity must not be stored.
    const identityPublic = result.statut_diffusion === "O" &&
      (establishment.statut_diffusion_etablissement ?? "O") === "O"
    // nom_raison_sociale is the legal name; it is null for sole traders, whose nom_complet is their name.
    const name = shown(result.nom_raison_sociale) ?? shown(result.nom_complet)
    if (!identityPublic) return { _tag: "Active", companyName: null }
    const headOffice = headOfficeOf(result.siege)
    return { _tag: "Active", companyName: name ?? null, ...(headOffice === undefined ? {} : { headOffice }) }
  }
  return unknown
}

export const layer = (
  options: RechercheEntreprisesRegistryOptions
): Layer.Layer<BusinessRegistry, never, HttpClient.HttpClient> =>
  Layer.effect(
    BusinessRegistry,
    Effect.gen(function*() {
      const client = yield* upstreamClient(options.baseUrl, { "User-Agent": userAgent })

      const request = (siret: string) =>
        Effect.gen(function*() {
          const response = yield* client.get("/search", { urlParams: { q: siret, page: "1", per_page: "1" } })
          if (response.status === 200) return toStatus(siret, (yield* decodeAnswer(yield* response.text)).results)
          return yield* unanswered(response)
        })

      return BusinessRegistry.of({
        lookUpSiret: (siret) =>
          lookUp(request(siret), options, {
            warning: "Recherche d'entreprises lookup failed",
            span: "RechercheEntreprisesRegistry.lookUpSiret"
          })
      })
    })
  )
