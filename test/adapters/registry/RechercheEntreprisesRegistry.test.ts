// Specification of the Recherche d'entreprises adapter against the registry simulation (in memory): what it sends,
// how a search answer maps onto the port, and how it retries, honours Retry-After, times out and gives up.
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as RechercheEntreprisesRegistry from "../../../adapters/registry/RechercheEntreprisesRegistry.ts"
import { type Company, type Fault, paths, sandboxHost } from "../../../adapters/registry/sandbox/RegistrySimulation.ts"
import { attempts, registryUnderTest, requestsFor, simulationEnv, testPolicy, timed } from "./simulatedRegistry.ts"

const edfOffice = { line1: "22-30 AVENUE DE WAGRAM", postcode: "75008", city: "PARIS" }
const acmeOffice = { line1: "9 RUE DU COLONEL PIERRE AVIA", postcode: "75015", city: "PARIS" }

const company = (siren: string, fields: Partial<Company> = {}): Company => ({
  siren,
  denomination: "ACME",
  ceased: false,
  diffusion: "O",
  establishments: [{ siret: `${siren}00010`, open: true, address: acmeOffice }],
  ...fields
})

/** A company of one head office `siret`, where the scenario's SIRET is the head office. */
const acme = (siret: string, fields: Partial<Company> = {}) =>
  company(siret.slice(0, 9), { establishments: [{ siret, open: true, address: acmeOffice }], ...fields })

const companies: ReadonlyArray<Company> = [
  company("552081317", {
    denomination: "ELECTRICITE DE FRANCE",
    establishments: [{ siret: "55208131766522", open: true, address: edfOffice }]
  }),
  company("356000000", {
    denomination: "LA POSTE",
    establishments: [{ siret: "35600000000048", open: true }, { siret: "35600000049837", open: true, address: acmeOffice }]
  }),
  acme("20000000100001", { denomination: null, person: { firstName: "Jeanne", lastName: "Dupont" } }),
  company("200000000", {
    establishments: [{ siret: "20000000000019", open: true, address: acmeOffice }, { siret: "20000000000002", open: false }]
  }),
  acme("21000000000003", { ceased: true }),
  acme("73282932000074", { diffusion: "P" }),
  acme("22000000000004", { diffusion: "N" }),
  ...[6, 7, 8, 9, 10, 11, 12].map((n) => acme(`3000000${String(n).padStart(2, "0")}00010`))
]

/** Each fault is for one SIRET: its scripted upstream behaviour. */
const faults: ReadonlyArray<Fault> = [
  { key: "30000000600010", answer: { kind: "status", status: 429, retryAfter: "1" }, times: 1 },
  { key: "30000000700010", answer: { kind: "status", status: 429, retryAfter: "0" } },
  { key: "30000000800010", answer: { kind: "status", status: 429, retryAfter: new Date(Date.now() + 3_600_000).toUTCString() } },
  { key: "30000000900010", answer: { kind: "status", status: 500, body: "{\"erreur\":\"Internal Server Error\"}" }, times: 1 },
  { key: "30000001000010", answer: { kind: "status", status: 503, body: "<html><body>503 Service Temporarily Unavailable</body></html>" } },
  { key: "30000001100010", answer: { kind: "hang" } },
  { key: "30000001200010", answer: { kind: "status", status: 200, body: "{\"results\":[{\"siren\":\"5520" } }
]

const SimEnv = simulationEnv({ companies, faults })

const { failureOf, lookUp } = registryUnderTest(RechercheEntreprisesRegistry.layer, {
  baseUrl: `${sandboxHost}${paths.rechercheEntreprises}`,
  ...testPolicy
})

const active = (companyName: string) => ({ _tag: "Active" as const, companyName, headOffice: acmeOffice })

layer(SimEnv, { excludeTestServices: true })("RechercheEntreprisesRegistry", (it) => {
  it.effect("an active company answers its legal name and its head office", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("55208131766522"), {
        _tag: "Active",
        companyName: "ELECTRICITE DE FRANCE",
        headOffice: edfOffice
      })
    }))

  it.effect("asks GET /search for one result, with an explicit User-Agent", () =>
    Effect.gen(function*() {
      yield* lookUp("55208131766522")
      const [request] = yield* requestsFor("55208131766522")
      assert.isDefined(request)
      assert.strictEqual(request.url.pathname, "/search")
      assert.deepStrictEqual([...request.url.searchParams].sort(), [["page", "1"], ["per_page", "1"], ["q", "55208131766522"]])
      assert.strictEqual(request.headers["user-agent"], "zh-hosting/0.1 (+registry check)")
      assert.strictEqual(request.headers["accept"], "application/json")
    }))

  it.effect("an establishment other than the head office is found among the matching establishments", () =>
    Effect.gen(function*() {
      // La Poste's head office has no address on record: no head office to prefill.
      assert.deepStrictEqual(yield* lookUp("35600000049837"), { _tag: "Active", companyName: "LA POSTE" })
    }))

  it.effect("a sole trader, who has no legal name, is named by nom_complet", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("20000000100001"), active("JEANNE DUPONT"))
    }))

  it.effect("a closed establishment is Closed", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("20000000000002"), { _tag: "Closed" })
    }))

  it.effect("an establishment of a ceased legal unit is Closed", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("21000000000003"), { _tag: "Closed" })
    }))

  it.effect("a partially diffusible unit is active with no name and no address to store", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("73282932000074"), { _tag: "Active", companyName: null })
    }))

  it.effect("a non-diffusible unit, absent from the search, is Unknown", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("22000000000004"), { _tag: "Unknown" })
    }))

  it.effect("no result is Unknown", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("88800012300008"), { _tag: "Unknown" })
    }))

  it.effect("429 with Retry-After is retried no earlier than asked, then succeeds", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(lookUp("30000000600010"))
      assert.deepStrictEqual(result, active("ACME"))
      assert.strictEqual(yield* attempts("30000000600010"), 2)
      assert.isAtLeast(elapsed, 950)
    }))

  it.effect("429 on every attempt ends THROTTLED after the configured retries", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("30000000700010")).reason, "THROTTLED")
      assert.strictEqual(yield* attempts("30000000700010"), 3)
    }))

  it.effect("a Retry-After date beyond the cap gives up at once with THROTTLED", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf("30000000800010"))
      assert.strictEqual(result.reason, "THROTTLED")
      assert.strictEqual(yield* attempts("30000000800010"), 1)
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("a 500 followed by a 200 succeeds", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("30000000900010"), active("ACME"))
      assert.strictEqual(yield* attempts("30000000900010"), 2)
    }))

  it.effect("503 on every attempt ends DOWN after the configured retries", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("30000001000010")).reason, "DOWN")
      assert.strictEqual(yield* attempts("30000001000010"), 3)
    }))

  it.effect("an upstream that never answers is DOWN once every attempt has timed out", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf("30000001100010", { timeout: "50 millis", retries: 1 }))
      assert.strictEqual(result.reason, "DOWN")
      assert.strictEqual(yield* attempts("30000001100010"), 2)
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("malformed JSON is DOWN and is not retried", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("30000001200010")).reason, "DOWN")
      assert.strictEqual(yield* attempts("30000001200010"), 1)
    }))

  it.effect("a 400 (no search parameter) is DOWN and is not retried", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("")).reason, "DOWN")
      assert.deepStrictEqual((yield* requestsFor("")).map((r) => r.outcome), [400])
    }))
})
