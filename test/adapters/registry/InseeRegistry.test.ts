// Specification of the INSEE Sirene 3.11 adapter against a scripted upstream on loopback: what it sends,
// how each answer maps onto the port, and how it retries, times out and gives up.
import { assert, layer } from "@effect/vitest"
import { Effect, Logger, Redacted } from "effect"
import * as InseeRegistry from "../../../adapters/registry/InseeRegistry.ts"
import { attempts, ok, type Reply, registryUnderTest, stubEnv, testPolicy, timed, Upstream } from "./upstreamStub.ts"

const apiKey = "insee-test-key-7f3a9c51"

// --- realistic bodies (shapes from reference/business-registry.md §2.1) ---

interface UnitFields {
  readonly statutDiffusionUniteLegale?: string
  readonly etatAdministratifUniteLegale?: string
  readonly denominationUniteLegale?: string | null
  readonly prenomUsuelUniteLegale?: string | null
  readonly prenom1UniteLegale?: string | null
  readonly nomUniteLegale?: string | null
  readonly nomUsageUniteLegale?: string | null
  readonly categorieJuridiqueUniteLegale?: string
}

const siretAnswer = (siret: string, options: {
  readonly etat?: string
  readonly diffusion?: string
  readonly unit?: UnitFields
} = {}) =>
  JSON.stringify({
    header: { statut: 200, message: "OK" },
    etablissement: {
      siren: siret.slice(0, 9),
      nic: siret.slice(9),
      siret,
      statutDiffusionEtablissement: options.diffusion ?? "O",
      dateCreationEtablissement: "1990-01-01",
      etablissementSiege: true,
      dateDernierTraitementEtablissement: "2025-05-10T15:18:50.255",
      nombrePeriodesEtablissement: 2,
      uniteLegale: {
        statutDiffusionUniteLegale: "O",
        etatAdministratifUniteLegale: "A",
        denominationUniteLegale: null,
        nomUniteLegale: null,
        nomUsageUniteLegale: null,
        prenomUsuelUniteLegale: null,
        prenom1UniteLegale: null,
        categorieJuridiqueUniteLegale: "5599",
        activitePrincipaleUniteLegale: "35.11Z",
        nicSiegeUniteLegale: siret.slice(9),
        ...options.unit
      },
      adresseEtablissement: {
        numeroVoieEtablissement: "22",
        typeVoieEtablissement: "AV",
        libelleVoieEtablissement: "DE WAGRAM",
        codePostalEtablissement: "75008",
        libelleCommuneEtablissement: "PARIS 8",
        codeCommuneEtablissement: "75108",
        codePaysEtrangerEtablissement: null
      },
      periodesEtablissement: [
        {
          dateFin: null,
          dateDebut: "2019-07-01",
          etatAdministratifEtablissement: options.etat ?? "A",
          enseigne1Etablissement: null,
          denominationUsuelleEtablissement: null,
          activitePrincipaleEtablissement: "35.11Z",
          caractereEmployeurEtablissement: "O"
        },
        { dateFin: "2019-06-30", dateDebut: "1990-01-01", etatAdministratifEtablissement: "A" }
      ]
    }
  })

const headerOnly = (statut: number, message: string) => JSON.stringify({ header: { statut, message } })

const edf = ok(siretAnswer("55208131766522", { unit: { denominationUniteLegale: "ELECTRICITE DE FRANCE" } }))

// --- the scripted upstream: each SIRET is one scenario; `attempt` counts requests for that SIRET from 0 ---

const scenarios: Record<string, (attempt: number) => Reply> = {
  "55208131766522": () => edf,
  "10000000000001": () =>
    ok(siretAnswer("10000000000001", {
      unit: {
        categorieJuridiqueUniteLegale: "1000",
        prenomUsuelUniteLegale: "Jeanne",
        prenom1UniteLegale: "Marie",
        nomUniteLegale: "DUPONT",
        nomUsageUniteLegale: "MARTIN"
      }
    })),
  "10000000000002": () => ok(siretAnswer("10000000000002", { etat: "F", unit: { denominationUniteLegale: "OLD SHOP" } })),
  "10000000000003": () =>
    ok(siretAnswer("10000000000003", { unit: { etatAdministratifUniteLegale: "C", denominationUniteLegale: "GONE SA" } })),
  "73282932000074": () =>
    ok(siretAnswer("73282932000074", {
      diffusion: "P",
      unit: { statutDiffusionUniteLegale: "P", denominationUniteLegale: "[ND]", nomUniteLegale: "[ND]" }
    })),
  "10000000000004": () =>
    ok(siretAnswer("10000000000004", { unit: { statutDiffusionUniteLegale: "N", denominationUniteLegale: "HIDDEN SARL" } })),
  "10000000000005": () => ok(siretAnswer("10000000000005", { unit: { denominationUniteLegale: "[NON-DIFFUSIBLE]" } })),
  "88800012300008": () => ({ status: 404, body: headerOnly(404, "Aucun élément trouvé pour le siret 88800012300008") }),
  "10000000000006": () => ({ status: 403, body: headerOnly(403, "Droits insuffisants pour accéder aux données de cette unité") }),
  "10000000000007": (n) =>
    n === 0 ? { status: 429, headers: { "retry-after": "1" }, body: headerOnly(429, "Too Many Requests") } : edf,
  "10000000000008": () => ({ status: 429, body: headerOnly(429, "Too Many Requests") }),
  "10000000000009": () => ({ status: 429, headers: { "retry-after": "120" }, body: headerOnly(429, "Too Many Requests") }),
  "10000000000010": (n) => n === 0 ? { status: 500, body: headerOnly(500, "Erreur interne") } : edf,
  "10000000000011": () => ({ status: 503, body: "<html><body>Service en maintenance</body></html>" }),
  "10000000000012": () => "hang",
  "10000000000013": () => ({ status: 200, body: "{\"header\":{\"statut\":200,", stall: true }),
  "10000000000014": () => ({ status: 200, body: "{\"header\":{\"statut\":200,\"message\":\"OK\"},\"etablissement\":{" }),
  "10000000000015": () => ({ status: 200, body: JSON.stringify({ header: { statut: 200, message: "OK" } }) }),
  "10000000000016": () => ({ status: 401, body: JSON.stringify({ message: "Invalid API key" }) }),
  "10000000000017": (n) => n < 1 ? "reset" : edf,
  "10000000000018": () => "reset"
}

const TestEnv = stubEnv({
  basePath: "/api-sirene/3.11",
  contentType: "application/json;charset=utf-8",
  keyOf: (url) => url.pathname.split("/").pop() ?? "",
  scenarios,
  unscripted: { status: 404, body: headerOnly(404, "not scripted") }
})

const { failureOf, lookUp } = registryUnderTest(
  InseeRegistry.layer,
  (baseUrl) => ({ baseUrl, apiKey: Redacted.make(apiKey), ...testPolicy })
)

layer(TestEnv, { excludeTestServices: true })("InseeRegistry", (it) => {
  it.effect("an active company answers its denomination", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("55208131766522"), { _tag: "Active", companyName: "ELECTRICITE DE FRANCE" })
    }))

  it.effect("asks GET /siret/{siret} under the base path, with the key in a header and never in the URL", () =>
    Effect.gen(function*() {
      yield* lookUp("55208131766522")
      const [request] = (yield* Upstream).requestsFor("55208131766522")
      assert.isDefined(request)
      assert.strictEqual(request.url.pathname, "/api-sirene/3.11/siret/55208131766522")
      assert.strictEqual(request.headers["x-insee-api-key-integration"], apiKey)
      assert.strictEqual(request.headers["accept"], "application/json")
      assert.notInclude(request.url.href, apiKey)
    }))

  it.effect("a sole trader is named by usual first name and last name", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("10000000000001"), { _tag: "Active", companyName: "Jeanne DUPONT" })
    }))

  it.effect("a closed establishment is Closed", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("10000000000002"), { _tag: "Closed" })
    }))

  it.effect("an open establishment of a ceased legal unit is Closed", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("10000000000003"), { _tag: "Closed" })
    }))

  it.effect("a partially diffusible unit is active with no name to store", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("73282932000074"), { _tag: "Active", companyName: null })
    }))

  it.effect("the legacy non-diffusible status withholds the name even when it is present", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("10000000000004"), { _tag: "Active", companyName: null })
    }))

  it.effect("a masked placeholder never becomes a company name", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("10000000000005"), { _tag: "Active", companyName: null })
    }))

  it.effect("404 is Unknown", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("88800012300008"), { _tag: "Unknown" })
    }))

  it.effect("403 insufficient rights is Unknown", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("10000000000006"), { _tag: "Unknown" })
    }))

  it.effect("429 with Retry-After is retried no earlier than asked, then succeeds", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(lookUp("10000000000007"))
      assert.deepStrictEqual(result, { _tag: "Active", companyName: "ELECTRICITE DE FRANCE" })
      assert.strictEqual(yield* attempts("10000000000007"), 2)
      assert.isAtLeast(elapsed, 950)
    }))

  it.effect("429 on every attempt ends THROTTLED after the configured retries", () =>
    Effect.gen(function*() {
      const error = yield* failureOf("10000000000008")
      assert.strictEqual(error.reason, "THROTTLED")
      assert.strictEqual(yield* attempts("10000000000008"), 3)
    }))

  it.effect("a Retry-After beyond the cap gives up at once with THROTTLED", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf("10000000000009"))
      assert.strictEqual(result.reason, "THROTTLED")
      assert.strictEqual(yield* attempts("10000000000009"), 1)
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("a 500 followed by a 200 succeeds", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("10000000000010"), { _tag: "Active", companyName: "ELECTRICITE DE FRANCE" })
      assert.strictEqual(yield* attempts("10000000000010"), 2)
    }))

  it.effect("503 on every attempt ends DOWN after the configured retries", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("10000000000011")).reason, "DOWN")
      assert.strictEqual(yield* attempts("10000000000011"), 3)
    }))

  it.effect("an upstream that never answers is DOWN once every attempt has timed out", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf("10000000000012", { timeout: "50 millis", retries: 1 }))
      assert.strictEqual(result.reason, "DOWN")
      assert.strictEqual(yield* attempts("10000000000012"), 2)
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("an answer that stalls in the middle of its body is DOWN within the timeout", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf("10000000000013", { timeout: "50 millis", retries: 0 }))
      assert.strictEqual(result.reason, "DOWN")
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("malformed JSON is DOWN and is not retried", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("10000000000014")).reason, "DOWN")
      assert.strictEqual(yield* attempts("10000000000014"), 1)
    }))

  it.effect("a 200 without an establishment is DOWN", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("10000000000015")).reason, "DOWN")
    }))

  it.effect("a dropped connection is retried", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("10000000000017"), { _tag: "Active", companyName: "ELECTRICITE DE FRANCE" })
      assert.strictEqual(yield* attempts("10000000000017"), 2)
    }))

  it.effect("connections dropped on every attempt end DOWN", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("10000000000018")).reason, "DOWN")
      assert.strictEqual(yield* attempts("10000000000018"), 3)
    }))

  it.effect("a rejected key (401) is DOWN at once, and neither the error nor the log reveals the key", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const error = yield* failureOf("10000000000016").pipe(
        Effect.provide(Logger.layer([Logger.map(Logger.formatJson, (line) => lines.push(line))]))
      )
      assert.strictEqual(error.reason, "DOWN")
      assert.strictEqual(yield* attempts("10000000000016"), 1)
      assert.isNotEmpty(lines)
      assert.include(lines.join("\n"), "HTTP 401")
      for (const text of [error.message, String(error), JSON.stringify(error), ...lines]) assert.notInclude(text, apiKey)
    }))
})
