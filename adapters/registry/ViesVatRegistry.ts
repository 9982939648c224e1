// VatRegistry over the EU's VIES REST API (`GET /ms/{country}/vat/{number}`): an answer says valid or invalid; a
// member state's register that is down or saturated answers 200 with `userError` and is asked again like a 503.
import { Clock, Effect, Layer, Schema } from "effect"
import { type HttpClient } from "effect/http"
import { VatRegistry, VatRegistryUnavailable } from "../../ports/VatRegistry.ts"
import { answeredBusy, type AttemptPolicy, lookUpOr, shown, unanswered, upstreamClient } from "./upstreamHttp.ts"

export interface ViesVatRegistryOptions extends AttemptPolicy {
  /** e.g. `https://ec.europa.eu/taxation_customs/vies/rest-api` */
  readonly baseUrl: string
}

const Text = Schema.optional(Schema.NullOr(Schema.String))

const Answer = Schema.Struct({
  isValid: Schema.Boolean,
  userError: Text,
  name: Text,
  address: Text,
  requestIdentifier: Text
})

const decodeAnswer = Schema.decodeUnknownEffect(Schema.fromJsonString(Answer))

/** VIES's own words for "this number is not registered" (the rest mean "ask again later"). */
const ANSWERED = new Set(["VALID", "INVALID", "INVALID_INPUT"])

export const layer = (options: ViesVatRegistryOptions): Layer.Layer<VatRegistry, never, HttpClient.HttpClient> =>
  Layer.effect(
    VatRegistry,
    Effect.gen(function*() {
      const client = yield* upstreamClient(options.baseUrl, {})

      const request = (countryCode: string, number: string) =>
        Effect.gen(function*() {
          const response = yield* client.get(`/ms/${encodeURIComponent(countryCode)}/vat/${encodeURIComponent(number)}`)
          if (response.status !== 200) return yield* unanswered(response)
          const answer = yield* decodeAnswer(yield* response.text)
          const userError = answer.userError ?? (answer.isValid ? "VALID" : "INVALID")
          if (!ANSWERED.has(userError)) return yield* Effect.fail(answeredBusy(`VIES ${userError}`))
          return {
            valid: answer.isValid && userError === "VALID",
            checkedAt: new Date(yield* Clock.currentTimeMillis),
            requestIdentifier: shown(answer.requestIdentifier) ?? null,
            // VIES masks what a member state does not publish as "---".
            registeredName: shown(answer.name?.replace(/^-+$/, "")) ?? null,
            registeredAddress: shown(answer.address?.replace(/^-+$/, "")) ?? null
          }
        })

      return VatRegistry.of({
        check: (vat) =>
          lookUpOr(
            request(vat.countryCode, vat.number),
            options,
            { warning: "VIES check failed", span: "ViesVatRegistry.check" },
            (reason) => new VatRegistryUnavailable({ reason })
          )
      })
    })
  )
