// Specification of the INSEE Sirene 3.11 adapter against the registry simulation (in memory): what it sends, how each
// answer maps onto the port, and how it retries, times out and gives up.
import { assert, layer } from "@effect/vitest"
import { Effect, Logger, Redacted } from "effect"
import * as InseeRegistry from "../../../adapters/registry/InseeRegistry.ts"
import { type Company, type Fault, paths, sandboxHost } from "../../../adapters/registry/sandbox/RegistrySimulation.ts"
import { attempts, registryUnderTest, requestsFor, simulationEnv, testPolicy, timed } from "./simulatedRegistry.ts"

const apiKey = "insee-test-key-7f3a9c51"

const office = { line1: "22-30 AVENUE DE WAGRAM", postcode: "75008", city: "PARIS" }

/** A unit whose head office is `siret`. */
const unit = (siret: string, fields: Partial<Company> = {}): Company => ({
  siren: siret.slice(0, 9),
  denomination: "ELECTRICITE DE FRANCE",
  ceased: false,
  diffusion: "O",
  establishments: [{ siret, open: true, address: office }],
  ...fields
})

const edfLike = (n: number) => unit(`1000000${String(n).padStart(2, "0")}00010`)
const siretOf = (n: number) => `1000000${String(n).padStart(2, "0")}00010`

const companies: ReadonlyArray<Company> = [
  unit("55208131766522"),
  unit(siretOf(1), {
    denomination: null,
    person: { firstName: "Marie", usualFirstName: "Jeanne", lastName: "DUPONT", usageName: "MARTIN" }
  }),
  { ...unit(siretOf(2), { denomination: "OLD SHOP" }), establishments: [{ siret: siretOf(2), open: false }] },
  unit(siretOf(3), { ceased: true, denomination: "GONE SA" }),
  unit("73282932000074", { diffusion: "P", denomination: "HIDDEN SA" }),
  unit(siretOf(6), { diffusion: "N", denomination: "HIDDEN SARL" }),
  ...[7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18].map(edfLike)
]

const headerOnly = (statut: number, message: string) => JSON.stringify({ header: { statut, message } })

/** Each fault is for one SIRET: its scripted upstream behaviour. */
const faults: ReadonlyArray<Fault> = [
  { key: siretOf(7), answer: { kind: "status", status: 429, retryAfter: "1", body: headerOnly(429, "Too Many Requests") }, times: 1 },
  { key: siretOf(8), answer: { kind: "status", status: 429, body: headerOnly(429, "Too Many Requests") } },
  { key: siretOf(9), answer: { kind: "status", status: 429, retryAfter: "120", body: headerOnly(429, "Too Many Requests") } },
  { key: siretOf(10), answer: { kind: "status", status: 500, body: headerOnly(500, "Erreur interne") }, times: 1 },
  { key: siretOf(11), answer: { kind: "status", status: 503, body: "<html><body>Service en maintenance</body></html>" } },
  { key: siretOf(12), answer: { kind: "hang" } },
  { key: siretOf(13), answer: { kind: "stall", status: 200, body: "{\"header\":{\"statut\":200," } },
  {
    key: siretOf(14),
    answer: { kind: "status", status: 200, body: "{\"header\":{\"statut\":200,\"message\":\"OK\"},\"etablissement\":{" }
  },
  { key: siretOf(15), answer: { kind: "status", status: 200, body: headerOnly(200, "OK") } },
  { key: siretOf(17), answer: { kind: "drop" }, times: 1 },
  { key: siretOf(18), answer: { kind: "drop" } }
]

const TestEnv = simulationEnv({ companies, faults, inseeApiKey: apiKey })

const { failureOf, lookUp } = registryUnderTest(InseeRegistry.layer, {
  baseUrl: `${sandboxHost}${paths.insee}`,
  apiKey: Redacted.make(apiKey),
  ...testPolicy
})

const edf = { _tag: "Active", companyName: "ELECTRICITE DE FRANCE" } as const

layer(TestEnv, { excludeTestServices: true })("InseeRegistry", (it) => {
  it.effect("an active company answers its denomination", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("55208131766522"), edf)
    }))

  it.effect("asks GET /siret/{siret} under the base path, with the key in a header and never in the URL", () =>
    Effect.gen(function*() {
      yield* lookUp("55208131766522")
      const [request] = yield* requestsFor("55208131766522")
      assert.isDefined(request)
      assert.strictEqual(request.url.pathname, "/api-sirene/3.11/siret/55208131766522")
      assert.strictEqual(request.headers["x-insee-api-key-integration"], apiKey)
      assert.strictEqual(request.headers["accept"], "application/json")
      assert.notInclude(request.url.href, apiKey)
    }))

  it.effect("a sole trader is named by usual first name and last name", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(siretOf(1)), { _tag: "Active", companyName: "Jeanne DUPONT" })
    }))

  it.effect("a closed establishment is Closed", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(siretOf(2)), { _tag: "Closed" })
    }))

  it.effect("an open establishment of a ceased legal unit is Closed", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(siretOf(3)), { _tag: "Closed" })
    }))

  it.effect("a partially diffusible unit is active with no name to store", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("73282932000074"), { _tag: "Active", companyName: null })
    }))

  it.effect("404 is Unknown", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("88800012300008"), { _tag: "Unknown" })
      assert.deepStrictEqual((yield* requestsFor("88800012300008")).map((r) => r.outcome), [404])
    }))

  it.effect("403 insufficient rights (a legacy non-diffusible unit) is Unknown", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(siretOf(6)), { _tag: "Unknown" })
      assert.deepStrictEqual((yield* requestsFor(siretOf(6))).map((r) => r.outcome), [403])
    }))

  it.effect("429 with Retry-After is retried no earlier than asked, then succeeds", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(lookUp(siretOf(7)))
      assert.deepStrictEqual(result, edf)
      assert.strictEqual(yield* attempts(siretOf(7)), 2)
      assert.isAtLeast(elapsed, 950)
    }))

  it.effect("429 on every attempt ends THROTTLED after the configured retries", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(siretOf(8))
      assert.strictEqual(error.reason, "THROTTLED")
      assert.strictEqual(yield* attempts(siretOf(8)), 3)
    }))

  it.effect("a Retry-After beyond the cap gives up at once with THROTTLED", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf(siretOf(9)))
      assert.strictEqual(result.reason, "THROTTLED")
      assert.strictEqual(yield* attempts(siretOf(9)), 1)
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("a 500 followed by a 200 succeeds", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(siretOf(10)), edf)
      assert.strictEqual(yield* attempts(siretOf(10)), 2)
    }))

  it.effect("503 on every attempt ends DOWN after the configured retries", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf(siretOf(11))).reason, "DOWN")
      assert.strictEqual(yield* attempts(siretOf(11)), 3)
    }))

  it.effect("an upstream that never answers is DOWN once every attempt has timed out", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf(siretOf(12), { timeout: "50 millis", retries: 1 }))
      assert.strictEqual(result.reason, "DOWN")
      assert.strictEqual(yield* attempts(siretOf(12)), 2)
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("an answer that stalls in the middle of its body is DOWN within the timeout", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf(siretOf(13), { timeout: "50 millis", retries: 0 }))
      assert.strictEqual(result.reason, "DOWN")
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("malformed JSON is DOWN and is not retried", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf(siretOf(14))).reason, "DOWN")
      assert.strictEqual(yield* attempts(siretOf(14)), 1)
    }))

  it.effect("a 200 without an establishment is DOWN", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf(siretOf(15))).reason, "DOWN")
    }))

  it.effect("a dropped connection is retried", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp(siretOf(17)), edf)
      assert.strictEqual(yield* attempts(siretOf(17)), 2)
    }))

  it.effect("connections dropped on every attempt end DOWN", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf(siretOf(18))).reason, "DOWN")
      assert.strictEqual(yield* attempts(siretOf(18)), 3)
    }))

  it.effect("a rejected key (401) is DOWN at once, and neither the error nor the log reveals the key", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const wrongKey = "insee-wrong-key-0c44e2d8"
      const error = yield* failureOf("55208131766522", { apiKey: Redacted.make(wrongKey) }).pipe(
        Effect.provide(Logger.layer([Logger.map(Logger.formatJson, (line) => lines.push(line))]))
      )
      assert.strictEqual(error.reason, "DOWN")
      // Asked once: a wrong key does not get better.
      assert.strictEqual((yield* requestsFor("55208131766522")).filter((r) => r.outcome === 401).length, 1)
      assert.isNotEmpty(lines)
      assert.include(lines.join("\n"), "HTTP 401")
      for (const text of [error.message, String(error), JSON.stringify(error), ...lines]) assert.notInclude(text, wrongKey)
    }))
})
