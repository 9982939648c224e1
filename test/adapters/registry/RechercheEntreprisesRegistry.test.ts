// Specification of the Recherche d'entreprises adapter against a scripted upstream on loopback: what it sends,
// how a search answer maps onto the port, and how it retries, honours Retry-After, times out and gives up.
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as RechercheEntreprisesRegistry from "../../../adapters/registry/RechercheEntreprisesRegistry.ts"
import { attempts, ok, type Reply, registryUnderTest, stubEnv, testPolicy, timed, Upstream } from "./upstreamStub.ts"

// --- realistic bodies (shapes from the service's OpenAPI, reference/business-registry.md §2.2) ---

interface EstablishmentFields {
  readonly siret: string
  readonly etat_administratif?: string
  readonly est_siege?: boolean
  readonly statut_diffusion_etablissement?: string
  readonly adresse?: string
}

const establishment = (fields: EstablishmentFields) => ({
  activite_principale: "53.10Z",
  adresse: "9 RUE DU COLONEL PIERRE AVIA 75015 PARIS",
  code_postal: "75015",
  commune: "75115",
  date_creation: "1991-01-01",
  date_fermeture: fields.etat_administratif === "F" ? "2021-12-31" : null,
  est_siege: false,
  etat_administratif: "A",
  libelle_commune: "PARIS",
  liste_enseignes: null,
  nom_commercial: null,
  statut_diffusion_etablissement: "O",
  tranche_effectif_salarie: "53",
  ...fields
})

interface ResultFields {
  readonly siren: string
  readonly nom_complet: string | null
  readonly nom_raison_sociale: string | null
  readonly etat_administratif?: string
  readonly statut_diffusion?: string
  readonly siege: ReturnType<typeof establishment>
  readonly matching_etablissements: ReadonlyArray<ReturnType<typeof establishment>>
}

const searchAnswer = (...results: ReadonlyArray<ResultFields>) =>
  JSON.stringify({
    results: results.map((r) => ({
      sigle: null,
      nombre_etablissements: r.matching_etablissements.length + 1,
      nombre_etablissements_ouverts: 1,
      activite_principale: "53.10Z",
      categorie_entreprise: "GE",
      date_creation: "1991-01-01",
      date_mise_a_jour: "2025-05-10T15:18:50",
      dirigeants: [],
      etat_administratif: "A",
      nature_juridique: "5510",
      section_activite_principale: "H",
      tranche_effectif_salarie: "53",
      statut_diffusion: "O",
      complements: { est_entrepreneur_individuel: false, est_service_public: false },
      ...r
    })),
    total_results: results.length,
    page: 1,
    per_page: 1,
    total_pages: results.length
  })

const edf = ok(searchAnswer({
  siren: "552081317",
  nom_complet: "ELECTRICITE DE FRANCE (EDF)",
  nom_raison_sociale: "ELECTRICITE DE FRANCE",
  siege: establishment({ siret: "55208131766522", est_siege: true }),
  matching_etablissements: [establishment({ siret: "55208131766522", est_siege: true })]
}))

const unitWith = (siret: string, fields: Partial<ResultFields> & { readonly etablissement?: Partial<EstablishmentFields> }) => {
  const { etablissement, ...rest } = fields
  return ok(searchAnswer({
    siren: siret.slice(0, 9),
    nom_complet: "ACME",
    nom_raison_sociale: "ACME",
    siege: establishment({ siret: `${siret.slice(0, 9)}00010`, est_siege: true }),
    matching_etablissements: [establishment({ siret, ...etablissement })],
    ...rest
  }))
}

const acme = (siret: string) => unitWith(siret, {})

/** The head office every body above has: `adresse` less its postcode and town. */
const headOffice = { line1: "9 RUE DU COLONEL PIERRE AVIA", postcode: "75015", city: "PARIS" }

const active = (companyName: string) => ({ _tag: "Active" as const, companyName, headOffice })

const noResults = ok(JSON.stringify({ results: [], total_results: 0, page: 1, per_page: 1, total_pages: 0 }))

// --- the scripted upstream: each SIRET (the `q` parameter) is one scenario; `attempt` counts from 0 ---

const scenarios: Record<string, (attempt: number) => Reply> = {
  "55208131766522": () => edf,
  "35600000049837": () =>
    ok(searchAnswer({
      siren: "356000000",
      nom_complet: "LA POSTE",
      nom_raison_sociale: "LA POSTE",
      siege: establishment({ siret: "35600000000048", est_siege: true }),
      matching_etablissements: [establishment({ siret: "35600000049837" })]
    })),
  "20000000000001": () =>
    unitWith("20000000000001", {
      nom_complet: "JEANNE DUPONT",
      nom_raison_sociale: null
    }),
  "20000000000002": () => unitWith("20000000000002", { etablissement: { etat_administratif: "F" } }),
  "20000000000003": () => unitWith("20000000000003", { etat_administratif: "C" }),
  "73282932000074": () =>
    unitWith("73282932000074", {
      statut_diffusion: "P",
      nom_complet: "[NON-DIFFUSIBLE]",
      nom_raison_sociale: "[NON-DIFFUSIBLE]",
      etablissement: { statut_diffusion_etablissement: "P" }
    }),
  "20000000000004": () => unitWith("20000000000004", { nom_complet: "[NON-DIFFUSIBLE]", nom_raison_sociale: null }),
  "88800012300008": () => noResults,
  "20000000000014": () =>
    unitWith("20000000000014", {
      siege: establishment({ siret: "20000000000014", est_siege: true, adresse: "[NON-DIFFUSIBLE]" }),
      matching_etablissements: []
    }),
  "20000000000015": () =>
    unitWith("20000000000015", {
      siege: establishment({ siret: "20000000000015", est_siege: true, adresse: "LIEU-DIT LES VIGNES" }),
      matching_etablissements: []
    }),
  "20000000000005": () =>
    unitWith("20000000000099", { siege: establishment({ siret: "20000000000099", est_siege: true }) }),
  "20000000000006": (n) => n === 0 ? { status: 429, headers: { "retry-after": "1" } } : acme("20000000000006"),
  "20000000000007": () => ({ status: 429, headers: { "retry-after": "0" } }),
  "20000000000008": () => ({
    status: 429,
    headers: { "retry-after": new Date(Date.now() + 3_600_000).toUTCString() }
  }),
  "20000000000009": (n) => n === 0 ? { status: 500, body: "{\"erreur\":\"Internal Server Error\"}" } : acme("20000000000009"),
  "20000000000010": () => ({ status: 503, body: "<html><body>503 Service Temporarily Unavailable</body></html>" }),
  "20000000000011": () => "hang",
  "20000000000012": () => ({ status: 200, body: "{\"results\":[{\"siren\":\"5520" }),
  "20000000000013": () => ({ status: 400, body: "{\"erreur\":\"Veuillez indiquer au moins un paramètre de recherche.\"}" })
}

// Silent: the adapter's warnings are specified in the INSEE suite, which logs the same way.
const TestEnv = stubEnv({
  basePath: "",
  contentType: "application/json",
  keyOf: (url) => url.searchParams.get("q") ?? "",
  scenarios,
  unscripted: noResults
})

const { failureOf, lookUp } = registryUnderTest(
  RechercheEntreprisesRegistry.layer,
  (baseUrl) => ({ baseUrl, ...testPolicy })
)

layer(TestEnv, { excludeTestServices: true })("RechercheEntreprisesRegistry", (it) => {
  it.effect("an active company answers its legal name", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("55208131766522"), active("ELECTRICITE DE FRANCE"))
    }))

  it.effect("asks GET /search for one result, with an explicit User-Agent", () =>
    Effect.gen(function*() {
      yield* lookUp("55208131766522")
      const [request] = (yield* Upstream).requestsFor("55208131766522")
      assert.isDefined(request)
      assert.strictEqual(request.url.pathname, "/search")
      assert.deepStrictEqual([...request.url.searchParams].sort(), [["page", "1"], ["per_page", "1"], [
        "q",
        "55208131766522"
      ]])
      assert.strictEqual(request.headers["user-agent"], "zh-hosting/0.1 (+registry check)")
      assert.strictEqual(request.headers["accept"], "application/json")
    }))

  it.effect("an establishment other than the head office is found among the matching establishments", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("35600000049837"), active("LA POSTE"))
    }))

  it.effect("a sole trader, who has no legal name, is named by nom_complet", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("20000000000001"), active("JEANNE DUPONT"))
    }))

  it.effect("a closed establishment is Closed", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("20000000000002"), { _tag: "Closed" })
    }))

  it.effect("an establishment of a ceased legal unit is Closed", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("20000000000003"), { _tag: "Closed" })
    }))

  it.effect("a partially diffusible unit is active with no name to store", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("73282932000074"), { _tag: "Active", companyName: null })
    }))

  it.effect("a masked placeholder never becomes a company name", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("20000000000004"), { _tag: "Active", companyName: null, headOffice })
    }))

  it.effect("the head office is given only when its address splits into a street line, postcode and town", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("20000000000014"), { _tag: "Active", companyName: "ACME" })
      assert.deepStrictEqual(yield* lookUp("20000000000015"), { _tag: "Active", companyName: "ACME" })
    }))

  it.effect("no result is Unknown", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("88800012300008"), { _tag: "Unknown" })
    }))

  it.effect("results that do not contain the SIRET are Unknown", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("20000000000005"), { _tag: "Unknown" })
    }))

  it.effect("429 with Retry-After is retried no earlier than asked, then succeeds", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(lookUp("20000000000006"))
      assert.deepStrictEqual(result, active("ACME"))
      assert.strictEqual(yield* attempts("20000000000006"), 2)
      assert.isAtLeast(elapsed, 950)
    }))

  it.effect("429 on every attempt ends THROTTLED after the configured retries", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("20000000000007")).reason, "THROTTLED")
      assert.strictEqual(yield* attempts("20000000000007"), 3)
    }))

  it.effect("a Retry-After date beyond the cap gives up at once with THROTTLED", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf("20000000000008"))
      assert.strictEqual(result.reason, "THROTTLED")
      assert.strictEqual(yield* attempts("20000000000008"), 1)
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("a 500 followed by a 200 succeeds", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lookUp("20000000000009"), active("ACME"))
      assert.strictEqual(yield* attempts("20000000000009"), 2)
    }))

  it.effect("503 on every attempt ends DOWN after the configured retries", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("20000000000010")).reason, "DOWN")
      assert.strictEqual(yield* attempts("20000000000010"), 3)
    }))

  it.effect("an upstream that never answers is DOWN once every attempt has timed out", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(failureOf("20000000000011", { timeout: "50 millis", retries: 1 }))
      assert.strictEqual(result.reason, "DOWN")
      assert.strictEqual(yield* attempts("20000000000011"), 2)
      assert.isBelow(elapsed, 1000)
    }))

  it.effect("malformed JSON is DOWN and is not retried", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("20000000000012")).reason, "DOWN")
      assert.strictEqual(yield* attempts("20000000000012"), 1)
    }))

  it.effect("a 400 is DOWN and is not retried", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failureOf("20000000000013")).reason, "DOWN")
      assert.strictEqual(yield* attempts("20000000000013"), 1)
    }))
})
