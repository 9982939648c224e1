// BusinessRegistry over the keyless API Recherche d'entreprises (`GET /search?q={siret}`): finding the SIRET
// among the results, mapping its states, and bounded retries honouring Retry-After (reference/business-registry.md §2.2).
import { Clock, Data, Duration, Effect, flow, Layer, Option, Schedule, Schema } from "effect"
import { Headers, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { BusinessRegistry, RegistryUnavailable, type SiretStatus } from "../../ports/BusinessRegistry.ts"

export interface RechercheEntreprisesRegistryOptions {
  /** e.g. `https://recherche-entreprises.api.gouv.fr` */
  readonly baseUrl: string
  /** Per attempt, headers and body included. */
  readonly timeout: Duration.Input
  /** Extra attempts after the first one, for 429, 5xx, timeouts and transport errors only. */
  readonly retries: number
  readonly retryBaseDelay: Duration.Input
}

/** The service asks callers to identify themselves; anonymous clients are the first to be cut off under load. */
export const userAgent = "zh-hosting/0.1 (+registry check)"

/** Longest wait between attempts: a sign-up form must not hang. A longer Retry-After means "give up now". */
export const maxRetryDelay = Duration.seconds(10)

/** Why one attempt produced no answer; only the `reason` survives into the port's error. */
class AttemptFailed extends Data.TaggedError("AttemptFailed")<{
  readonly reason: "DOWN" | "THROTTLED"
  readonly retryable: boolean
  readonly retryAfter: Duration.Duration | undefined
  readonly detail: string
}> {}

const Text = Schema.optional(Schema.NullOr(Schema.String))

const Establishment = Schema.Struct({
  siret: Schema.String,
  etat_administratif: Schema.Literals(["A", "F"]),
  statut_diffusion_etablissement: Text
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

/** Partially diffusible units come back with placeholders such as "[NON-DIFFUSIBLE]" instead of their identity. */
const shown = (value: string | null | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" || /^\[.*\]$/.test(trimmed) ? undefined : trimmed
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
    return { _tag: "Active", companyName: identityPublic ? name ?? null : null }
  }
  return unknown
}

/** Retry-After is either delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
const retryAfterOf = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function*() {
    const header = Headers.get(response.headers, "retry-after")
    if (Option.isNone(header)) return undefined
    const value = header.value.trim()
    if (/^\d+$/.test(value)) return Duration.seconds(Number(value))
    const at = Date.parse(value)
    if (Number.isNaN(at)) return undefined
    return Duration.millis(Math.max(0, at - (yield* Clock.currentTimeMillis)))
  })

const retryLater = (reason: "DOWN" | "THROTTLED", response: HttpClientResponse.HttpClientResponse) =>
  Effect.flatMap(retryAfterOf(response), (retryAfter) =>
    Effect.fail(
      new AttemptFailed({
        reason,
        retryable: retryAfter === undefined || Duration.isLessThanOrEqualTo(retryAfter, maxRetryDelay),
        retryAfter,
        detail: `HTTP ${response.status}`
      })
    ))

const giveUp = (detail: string) => new AttemptFailed({ reason: "DOWN", retryable: false, retryAfter: undefined, detail })

/** Exponential back-off, stretched to any Retry-After, never beyond `maxRetryDelay`. */
const backOff = (base: Duration.Input) =>
  Schedule.exponential(base).pipe(
    Schedule.setInputType<AttemptFailed>(),
    Schedule.modifyDelay(({ duration, input }) =>
      Effect.succeed(Duration.min(
        input.retryAfter === undefined ? duration : Duration.max(duration, input.retryAfter),
        maxRetryDelay
      ))
    )
  )

export const layer = (
  options: RechercheEntreprisesRegistryOptions
): Layer.Layer<BusinessRegistry, never, HttpClient.HttpClient> =>
  Layer.effect(
    BusinessRegistry,
    Effect.gen(function*() {
      const client = (yield* HttpClient.HttpClient).pipe(
        HttpClient.mapRequest(flow(
          HttpClientRequest.prependUrl(options.baseUrl.replace(/\/+$/, "")),
          HttpClientRequest.acceptJson,
          HttpClientRequest.setHeader("User-Agent", userAgent)
        )),
        // Each attempt's scope owns its connection, so an unread or abandoned answer is released at once.
        HttpClient.withScope
      )

      const attempt = (siret: string): Effect.Effect<SiretStatus, AttemptFailed> =>
        Effect.gen(function*() {
          const response = yield* client.get("/search", { urlParams: { q: siret, page: "1", per_page: "1" } })
          const status = response.status
          if (status === 200) return toStatus(siret, (yield* decodeAnswer(yield* response.text)).results)
          if (status === 429) return yield* retryLater("THROTTLED", response)
          if (status >= 500) return yield* retryLater("DOWN", response)
          // 400 and the like: our request is wrong; asking again will not help.
          return yield* giveUp(`HTTP ${status}`)
        }).pipe(
          Effect.scoped,
          Effect.timeout(options.timeout),
          Effect.catchTags({
            HttpClientError: (e) =>
              Effect.fail(
                new AttemptFailed({
                  reason: "DOWN",
                  retryable: e.reason._tag === "TransportError",
                  retryAfter: undefined,
                  detail: e.reason._tag
                })
              ),
            TimeoutError: () =>
              Effect.fail(new AttemptFailed({ reason: "DOWN", retryable: true, retryAfter: undefined, detail: "timeout" })),
            SchemaError: () => Effect.fail(giveUp("undecodable answer"))
          })
        )

      return BusinessRegistry.of({
        lookUpSiret: (siret) =>
          attempt(siret).pipe(
            Effect.retry({ schedule: backOff(options.retryBaseDelay), times: options.retries, while: (e) => e.retryable }),
            Effect.catchTag("AttemptFailed", (e) =>
              Effect.logWarning("Recherche d'entreprises lookup failed").pipe(
                Effect.annotateLogs({ reason: e.reason, detail: e.detail }),
                Effect.andThen(Effect.fail(new RegistryUnavailable({ reason: e.reason })))
              )),
            Effect.withSpan("RechercheEntreprisesRegistry.lookUpSiret")
          )
      })
    })
  )
