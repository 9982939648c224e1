// BusinessRegistry over INSEE API Sirene 3.11 (`GET /siret/{siret}`, API-key plan): decoding the answer,
// mapping its statuses, and bounded retries on throttling and outages (reference/business-registry.md §2.1).
import { Clock, Data, Duration, Effect, flow, Layer, Option, Redacted, Schedule, Schema } from "effect"
import { Headers, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { BusinessRegistry, RegistryUnavailable, type SiretStatus } from "../../ports/BusinessRegistry.ts"

export interface InseeRegistryOptions {
  /** e.g. `https://api.insee.fr/api-sirene/3.11` */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  /** Per attempt, headers and body included. */
  readonly timeout: Duration.Input
  /** Extra attempts after the first one, for 429, 5xx, timeouts and transport errors only. */
  readonly retries: number
  readonly retryBaseDelay: Duration.Input
}

/** Longest wait between attempts: a sign-up form must not hang. A longer Retry-After means "give up now". */
export const maxRetryDelay = Duration.seconds(10)

/** Why one attempt produced no answer; only the `reason` survives into the port's error. */
class AttemptFailed extends Data.TaggedError("AttemptFailed")<{
  readonly reason: "DOWN" | "THROTTLED"
  readonly retryable: boolean
  readonly retryAfter: Duration.Duration | undefined
  /** For the operator's log; never carries the API key. */
  readonly detail: string
}> {}

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

/** INSEE masks non-public identity fields with placeholders such as "[ND]" rather than omitting them. */
const shown = (value: string | null | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" || /^\[.*\]$/.test(trimmed) ? undefined : trimmed
}

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

export const layer = (options: InseeRegistryOptions): Layer.Layer<BusinessRegistry, never, HttpClient.HttpClient> =>
  Layer.effect(
    BusinessRegistry,
    Effect.gen(function*() {
      const client = (yield* HttpClient.HttpClient).pipe(
        HttpClient.mapRequest(flow(
          HttpClientRequest.prependUrl(options.baseUrl.replace(/\/+$/, "")),
          HttpClientRequest.acceptJson,
          // A header, never a query parameter: URLs end up in logs and traces.
          HttpClientRequest.setHeader("X-INSEE-Api-Key-Integration", Redacted.value(options.apiKey))
        )),
        // Each attempt's scope owns its connection, so an unread or abandoned answer is released at once.
        HttpClient.withScope
      )

      const attempt = (siret: string): Effect.Effect<SiretStatus, AttemptFailed> =>
        Effect.gen(function*() {
          const response = yield* client.get(`/siret/${encodeURIComponent(siret)}`)
          const status = response.status
          if (status === 200) return toStatus(yield* decodeAnswer(yield* response.text))
          // 403 "insufficient rights" is what a non-diffusible unit used to produce; to the user it is unknown.
          if (status === 404 || status === 403) return unknown
          // 301: the establishment belongs to a unit closed as a duplicate of another one.
          if (status === 301) return closed
          if (status === 429) return yield* retryLater("THROTTLED", response)
          if (status >= 500) return yield* retryLater("DOWN", response)
          // 400/401/406…: our request or our key is wrong; asking again will not help.
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
              Effect.logWarning("INSEE Sirene lookup failed").pipe(
                Effect.annotateLogs({ reason: e.reason, detail: e.detail }),
                Effect.andThen(Effect.fail(new RegistryUnavailable({ reason: e.reason })))
              )),
            Effect.withSpan("InseeRegistry.lookUpSiret")
          )
      })
    })
  )
