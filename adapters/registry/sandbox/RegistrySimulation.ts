// The sandbox's business registry and VIES (issue 11 §3): one in-memory state — companies by SIREN with their
// establishments, VAT numbers per member state — answered on the three upstreams' real paths and shapes
// (reference/business-registry.md §2.1, §2.2, VIES REST), with faults as data and a request log. The real adapters
// talk to it through `httpClient` (no socket): sandbox mode runs them against it instead of a second model.
import { Effect, Layer, type Scope } from "effect"
import { FetchHttpClient, type HttpClient, HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"

export interface Address {
  readonly line1: string
  readonly postcode: string
  readonly city: string
}

export interface Establishment {
  readonly siret: string
  /** `F` (fermé) when false. */
  readonly open: boolean
  readonly address?: Address
}

/** `O` public; `P` partially diffusible (identity masked); `N` the legacy non-diffusible status. */
export type Diffusion = "O" | "P" | "N"

export interface Company {
  readonly siren: string
  /** A company's denomination; null for a sole trader, who is named by `person`. */
  readonly denomination: string | null
  readonly person?: {
    readonly firstName: string
    readonly lastName: string
    /** INSEE's prénom usuel, when it differs from the first civil first name. */
    readonly usualFirstName?: string
    /** INSEE's nom d'usage (a married name…). */
    readonly usageName?: string
  }
  /** `C` (cessée) when true. */
  readonly ceased: boolean
  readonly diffusion: Diffusion
  /** The first one is the head office (siège). */
  readonly establishments: ReadonlyArray<Establishment>
}

/** A VAT number as VIES knows it: registered (with what the member state publishes), or its register not answering. */
export type VatEntry =
  | { readonly state: "valid"; readonly name: string; readonly address: string }
  | { readonly state: "unavailable" }

export type Upstream = "insee" | "recherche-entreprises" | "vies"

/** What a faulty request gets instead of the upstream's answer. */
export type FaultAnswer =
  | { readonly kind: "status"; readonly status: number; readonly retryAfter?: string; readonly body?: string }
  /** Accepted, never answered (the caller's timeout ends it). */
  | { readonly kind: "hang" }
  /** The connection is dropped: a transport error. */
  | { readonly kind: "drop" }
  /** The head and the first part of `body`, then nothing more (the body never ends). */
  | { readonly kind: "stall"; readonly status: number; readonly body: string }
  /** VIES's 200 saying "ask again later" (MS_UNAVAILABLE, MS_MAX_CONCURRENT_REQ, TIMEOUT…), VIES requests only. */
  | { readonly kind: "vies-busy"; readonly userError: string }

export interface Fault {
  /** Every upstream when absent. */
  readonly upstream?: Upstream
  /** The SIRET asked (registry) or the full VAT number, e.g. "BE0123456749" (VIES); every request when absent. */
  readonly key?: string
  readonly answer: FaultAnswer
  /** How many matching requests it answers; for ever when absent. */
  readonly times?: number
}

/** A VIES answer, in the REST API's shape ("---" where a member state publishes nothing). */
const viesBody = (
  countryCode: string,
  vatNumber: string,
  answer: { isValid: boolean; userError: string; name?: string; address?: string; requestIdentifier?: string }
) =>
  JSON.stringify({
    countryCode,
    vatNumber,
    requestDate: new Date().toISOString(),
    isValid: answer.isValid,
    requestIdentifier: answer.requestIdentifier ?? "",
    name: answer.name ?? "---",
    address: answer.address ?? "---",
    userError: answer.userError,
    viesApproximate: { name: "---", street: "---", postalCode: "---", city: "---", companyType: "---", matchName: 3 }
  })

export interface RecordedRequest {
  readonly upstream: Upstream | "other"
  readonly method: string
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  /** The SIRET or full VAT number the request is about ("" when none). */
  readonly key: string
  /** What answered: the upstream's status, or the fault's kind (a busy VIES: its userError). */
  readonly outcome: number | "hang" | "drop" | "stall" | string
}

/** Where each upstream sits on the simulation, as its adapter's base URL expects (any host: only the path counts). */
export const paths = {
  insee: "/api-sirene/3.11",
  rechercheEntreprises: "",
  vies: "/taxation_customs/vies/rest-api"
} as const

/** The simulation's nominal host, for base URLs of the in-memory client. */
export const sandboxHost = "http://registry.sandbox"

/** SIRETs with a role in the sandbox, in tests and in README; every one passes `isValidSiret`. */
export const SandboxSirets = {
  edf: "55208131766522",
  googleFrance: "44306184100047",
  laPoste: "35600000000048",
  /** Valid only through La Poste's digit-sum rule, not through Luhn. */
  laPosteEstablishment: "35600000049837",
  partiallyDiffusible: "73282932000074",
  /** Made up: SIREN 120000005 + NIC 00005, an establishment of a ceased unit. */
  closed: "12000000500005",
  /** Made up, "503…": a standing fault, every registry answers 503. */
  registryDown: "50300000200009",
  /** Made up, "429…": a standing fault, 429 with a Retry-After beyond the adapters' cap. */
  registryThrottled: "42900000300005",
  /**
   * Not registered. The reference's unknown example, 88800012300008, is unknown too, but its SIREN fails Luhn, so the
   * domain rejects it before any registry is asked.
   */
  unknown: "88800012200018"
} as const

/** VAT numbers with a role in the sandbox, in tests and in README. */
export const SandboxVatNumbers = {
  /** Registered: a Belgian company (made up). */
  belgianCompany: "BE0123456749",
  /** Not registered. */
  belgianRejected: "BE0987654321",
  /** Registered: a German company (made up). */
  germanCompany: "DE123456789",
  /** Its member state's register does not answer (MS_UNAVAILABLE). */
  viesDown: "BE0503503503",
  /** The French numbers of the seeded companies, derived from their SIREN. */
  edf: "FR03552081317",
  googleFrance: "FR64443061841"
} as const

export const seedCompanies: ReadonlyArray<Company> = [
  {
    siren: "552081317",
    denomination: "ELECTRICITE DE FRANCE",
    ceased: false,
    diffusion: "O",
    establishments: [{
      siret: SandboxSirets.edf,
      open: true,
      address: { line1: "22-30 AVENUE DE WAGRAM", postcode: "75008", city: "PARIS" }
    }]
  },
  {
    siren: "443061841",
    denomination: "GOOGLE FRANCE",
    ceased: false,
    diffusion: "O",
    establishments: [{
      siret: SandboxSirets.googleFrance,
      open: true,
      address: { line1: "8 RUE DE LONDRES", postcode: "75009", city: "PARIS" }
    }]
  },
  {
    siren: "356000000",
    denomination: "LA POSTE",
    ceased: false,
    diffusion: "O",
    establishments: [{ siret: SandboxSirets.laPoste, open: true }, { siret: SandboxSirets.laPosteEstablishment, open: true }]
  },
  {
    siren: "732829320",
    denomination: "SOCIETE A DIFFUSION PARTIELLE",
    ceased: false,
    diffusion: "P",
    establishments: [{ siret: SandboxSirets.partiallyDiffusible, open: true }]
  },
  {
    siren: "120000005",
    denomination: "ANCIENNE SOCIETE",
    ceased: true,
    diffusion: "O",
    establishments: [{ siret: SandboxSirets.closed, open: false }]
  }
]

export const seedVat: ReadonlyArray<readonly [string, VatEntry]> = [
  [SandboxVatNumbers.belgianCompany, { state: "valid", name: "DEMO BELGIUM SRL", address: "Rue de la Loi 1\n1000 Bruxelles" }],
  [SandboxVatNumbers.germanCompany, { state: "valid", name: "DEMO DEUTSCHLAND GMBH", address: "Unter den Linden 1\n10117 Berlin" }],
  [SandboxVatNumbers.edf, { state: "valid", name: "SA ELECTRICITE DE FRANCE", address: "22 30 AV DE WAGRAM\n75008 PARIS" }],
  [SandboxVatNumbers.googleFrance, { state: "valid", name: "SARL GOOGLE FRANCE", address: "8 RUE DE LONDRES\n75009 PARIS" }],
  [SandboxVatNumbers.viesDown, { state: "unavailable" }]
]

export const seedFaults: ReadonlyArray<Fault> = [
  { key: SandboxSirets.registryDown, answer: { kind: "status", status: 503 } },
  { key: SandboxSirets.registryThrottled, answer: { kind: "status", status: 429, retryAfter: "120" } }
]

/** The member states VIES answers for (ISO codes, Greece as "EL", Northern Ireland as "XI"). */
const memberStates = new Set([
  "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "EL", "ES", "FI", "FR", "HR", "HU", "IE", "IT", "LT", "LU", "LV",
  "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK", "XI"
])

export interface RegistrySimulationOptions {
  readonly companies?: ReadonlyArray<Company>
  readonly vat?: ReadonlyArray<readonly [string, VatEntry]>
  readonly faults?: ReadonlyArray<Fault>
  /** INSEE answers 401 to any other key; any non-empty key is accepted when absent. */
  readonly inseeApiKey?: string
  /** The newest requests the log keeps; all of them when absent. */
  readonly requestLogLimit?: number
}

export interface RegistryControl {
  readonly putCompany: (company: Company) => void
  readonly removeCompany: (siren: string) => void
  readonly putVat: (vatNumber: string, entry: VatEntry) => void
  readonly removeVat: (vatNumber: string) => void
  /** Member states whose whole register does not answer (MS_UNAVAILABLE). */
  readonly setMemberStateAvailable: (countryCode: string, available: boolean) => void
  readonly addFault: (fault: Fault) => void
  readonly clearFaults: () => void
  /** Oldest first; `key` keeps the requests about that SIRET or VAT number. */
  readonly requests: (key?: string) => ReadonlyArray<RecordedRequest>
}

export interface RegistrySimulation {
  readonly control: RegistryControl
  /** The three upstreams as a `fetch` (any host: only the path counts); aborting the request ends a hang. */
  readonly fetch: typeof globalThis.fetch
  /** An HttpClient whose every request reaches the simulation, without a socket. */
  readonly httpClient: Layer.Layer<HttpClient.HttpClient>
  /** The routes, for a server to serve on loopback. */
  readonly routes: Layer.Layer<never, never, HttpRouter.HttpRouter>
}

const json = (status: number, body: unknown, contentType = "application/json") =>
  HttpServerResponse.text(JSON.stringify(body), { status, contentType })

const urlOf = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, sandboxHost)

const lastSegment = (url: URL) => decodeURIComponent(url.pathname.split("/").pop() ?? "")

/** Which upstream a request is for, and what it is about. */
const classify = (url: URL): { readonly upstream: Upstream | "other"; readonly key: string } => {
  if (url.pathname.startsWith(`${paths.insee}/siret/`)) return { upstream: "insee", key: lastSegment(url) }
  if (url.pathname === `${paths.rechercheEntreprises}/search`) {
    return { upstream: "recherche-entreprises", key: url.searchParams.get("q")?.replace(/[\s.-]/g, "") ?? "" }
  }
  const vies = new RegExp(`^${paths.vies}/ms/([^/]+)/vat/([^/]+)$`).exec(url.pathname)
  if (vies !== null) return { upstream: "vies", key: `${decodeURIComponent(vies[1]!)}${decodeURIComponent(vies[2]!)}` }
  return { upstream: "other", key: "" }
}

const inseeHeader = (statut: number, message: string) => ({ header: { statut, message } })

const masked = (diffusion: Diffusion, value: string | null, mask: string) => diffusion === "O" ? value : value === null ? null : mask

export const registrySimulation = (
  options: RegistrySimulationOptions = {}
): Effect.Effect<RegistrySimulation, never, Scope.Scope> =>
  Effect.gen(function*() {
    const companies = new Map<string, Company>((options.companies ?? seedCompanies).map((c) => [c.siren, c]))
    const vat = new Map<string, VatEntry>(options.vat ?? seedVat)
    const unavailableStates = new Set<string>()
    const faults: Array<{ fault: Fault; used: number }> = (options.faults ?? seedFaults).map((fault) => ({ fault, used: 0 }))
    const log: Array<RecordedRequest> = []
    let consultation = 0

    const record = (entry: RecordedRequest) => {
      log.push(entry)
      if (options.requestLogLimit !== undefined && log.length > options.requestLogLimit) log.shift()
    }

    const findEstablishment = (siret: string) => {
      const company = companies.get(siret.slice(0, 9))
      const establishment = company?.establishments.find((e) => e.siret === siret)
      return company === undefined || establishment === undefined ? undefined : { company, establishment }
    }

    /** A fault for this request, counted as used. */
    const faultFor = (upstream: Upstream | "other", key: string): FaultAnswer | undefined => {
      if (upstream === "other") return undefined
      const armed = faults.find(({ fault, used }) =>
        (fault.upstream === undefined || fault.upstream === upstream) &&
        (fault.key === undefined || fault.key === key) &&
        (fault.answer.kind !== "vies-busy" || upstream === "vies") &&
        (fault.times === undefined || used < fault.times)
      )
      if (armed === undefined) return undefined
      armed.used++
      return armed.fault.answer
    }

    // --- INSEE Sirene 3.11: GET /siret/{siret} ---
    const insee = HttpRouter.add("GET", `${paths.insee}/siret/:siret`, (request) =>
      Effect.sync(() => {
        const key = request.headers["x-insee-api-key-integration"] ?? ""
        if (key === "" || (options.inseeApiKey !== undefined && key !== options.inseeApiKey)) {
          return json(401, { fault: { code: 900901, message: "Invalid Credentials" } })
        }
        const siret = lastSegment(urlOf(request))
        if (!/^\d{14}$/.test(siret)) return json(400, inseeHeader(400, `Le paramètre siret ${siret} est invalide`))
        const found = findEstablishment(siret)
        if (found === undefined) return json(404, inseeHeader(404, `Aucun élément trouvé pour le siret ${siret}`))
        const { company, establishment } = found
        // What INSEE answered for the legacy non-diffusible status.
        if (company.diffusion === "N") {
          return json(403, inseeHeader(403, "Droits insuffisants pour accéder aux données de cette unité"))
        }
        const d = company.diffusion
        return json(200, {
          ...inseeHeader(200, "OK"),
          etablissement: {
            siren: company.siren,
            nic: siret.slice(9),
            siret,
            statutDiffusionEtablissement: d,
            etablissementSiege: company.establishments[0]?.siret === siret,
            uniteLegale: {
              statutDiffusionUniteLegale: d,
              etatAdministratifUniteLegale: company.ceased ? "C" : "A",
              denominationUniteLegale: masked(d, company.denomination, "[ND]"),
              nomUniteLegale: masked(d, company.person?.lastName ?? null, "[ND]"),
              prenomUsuelUniteLegale: masked(d, company.person?.usualFirstName ?? company.person?.firstName ?? null, "[ND]"),
              prenom1UniteLegale: masked(d, company.person?.firstName ?? null, "[ND]"),
              nomUsageUniteLegale: masked(d, company.person?.usageName ?? null, "[ND]"),
              nicSiegeUniteLegale: company.establishments[0]?.siret.slice(9) ?? null
            },
            adresseEtablissement: {
              libelleVoieEtablissement: masked(d, establishment.address?.line1 ?? null, "[ND]"),
              codePostalEtablissement: establishment.address?.postcode ?? null,
              libelleCommuneEtablissement: establishment.address?.city ?? null
            },
            periodesEtablissement: [{ dateFin: null, etatAdministratifEtablissement: establishment.open ? "A" : "F" }]
          }
        }, "application/json;charset=utf-8")
      }))

    // --- Recherche d'entreprises: GET /search?q=… (non-diffusible units are never returned) ---
    const establishmentJson = (company: Company, e: Establishment) => {
      const hidden = company.diffusion !== "O"
      return {
        siret: e.siret,
        etat_administratif: e.open ? "A" : "F",
        est_siege: company.establishments[0]?.siret === e.siret,
        statut_diffusion_etablissement: company.diffusion,
        adresse: e.address === undefined ? null : hidden ? "[NON-DIFFUSIBLE]" : `${e.address.line1} ${e.address.postcode} ${e.address.city}`,
        code_postal: e.address?.postcode ?? null,
        libelle_commune: e.address?.city ?? null
      }
    }
    const recherche = HttpRouter.add("GET", `${paths.rechercheEntreprises}/search`, (request) =>
      Effect.sync(() => {
        const url = urlOf(request)
        const q = (url.searchParams.get("q") ?? "").trim()
        const page = Number(url.searchParams.get("page") ?? "1")
        const perPage = Number(url.searchParams.get("per_page") ?? "10")
        if (q === "") return json(400, { erreur: "Veuillez indiquer au moins un paramètre de recherche." })
        if (!Number.isInteger(perPage) || perPage < 1 || perPage > 25 || !Number.isInteger(page) || page < 1) {
          return json(400, { erreur: "Paramètres de pagination invalides." })
        }
        const digits = q.replace(/[\s.-]/g, "")
        const listed = [...companies.values()].filter((c) => c.diffusion !== "N")
        const hits = /^\d{14}$/.test(digits)
          ? listed.filter((c) => c.establishments.some((e) => e.siret === digits))
          : /^\d{9}$/.test(digits)
          ? listed.filter((c) => c.siren === digits)
          : listed.filter((c) =>
            (c.denomination ?? `${c.person?.firstName} ${c.person?.lastName}`).toUpperCase().includes(q.toUpperCase())
          )
        const results = hits.slice((page - 1) * perPage, page * perPage).map((c) => {
          const name = c.denomination ?? (c.person === undefined ? null : `${c.person.firstName} ${c.person.lastName}`.toUpperCase())
          const siege = c.establishments[0]
          return {
            siren: c.siren,
            nom_complet: masked(c.diffusion, name, "[NON-DIFFUSIBLE]"),
            nom_raison_sociale: masked(c.diffusion, c.denomination, "[NON-DIFFUSIBLE]"),
            etat_administratif: c.ceased ? "C" : "A",
            statut_diffusion: c.diffusion,
            siege: siege === undefined ? null : establishmentJson(c, siege),
            matching_etablissements: c.establishments.filter((e) => e.siret === digits).map((e) => establishmentJson(c, e))
          }
        })
        return json(200, {
          results,
          total_results: hits.length,
          page,
          per_page: perPage,
          total_pages: Math.ceil(hits.length / perPage)
        })
      }))

    // --- VIES REST: GET /ms/{country}/vat/{number} ---
    const vies = HttpRouter.add("GET", `${paths.vies}/ms/:country/vat/:number`, () =>
      Effect.gen(function*() {
        const params = yield* HttpRouter.params
        const countryCode = (params["country"] ?? "").toUpperCase()
        const vatNumber = params["number"] ?? ""
        const entry = vat.get(`${countryCode}${vatNumber}`)
        const answer = (a: Parameters<typeof viesBody>[2]) =>
          HttpServerResponse.text(viesBody(countryCode, vatNumber, a), { status: 200, contentType: "application/json" })
        if (!memberStates.has(countryCode)) return answer({ isValid: false, userError: "INVALID_INPUT" })
        if (unavailableStates.has(countryCode) || entry?.state === "unavailable") {
          return answer({ isValid: false, userError: "MS_UNAVAILABLE" })
        }
        if (entry === undefined) return answer({ isValid: false, userError: "INVALID" })
        consultation++
        return answer({
          isValid: true,
          userError: "VALID",
          name: entry.name,
          address: entry.address,
          requestIdentifier: `WAPISANDBOX${String(consultation).padStart(6, "0")}`
        })
      }))

    const routes = Layer.mergeAll(insee, recherche, vies)
    const web = HttpRouter.toWebHandler(routes, { disableLogger: true })
    yield* Effect.addFinalizer(() => Effect.promise(() => web.dispose()))

    const fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init)
      const url = new URL(request.url)
      const { key, upstream } = classify(url)
      const headers: Record<string, string> = {}
      request.headers.forEach((value, name) => {
        headers[name] = value
      })
      const fault = faultFor(upstream, key)
      const entry = (outcome: RecordedRequest["outcome"]) => record({ upstream, method: request.method, url, headers, key, outcome })
      // Listening first, so a caller's timeout ends even a hang.
      const aborted = new Promise<never>((_, reject) => {
        if (request.signal.aborted) reject(request.signal.reason)
        request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true })
      })
      // The client aborts a request once done with it too: that later rejection is nobody's failure.
      aborted.catch(() => undefined)
      if (fault?.kind === "hang") {
        entry("hang")
        return aborted
      }
      if (fault?.kind === "drop") {
        entry("drop")
        return Promise.reject(new TypeError("fetch failed: the sandbox registry dropped the connection"))
      }
      if (fault?.kind === "vies-busy" && upstream === "vies") {
        entry(fault.userError)
        const [, country = "", number = ""] = /^\/?.*\/ms\/([^/]+)\/vat\/([^/]+)$/.exec(url.pathname) ?? []
        return Promise.resolve(
          new Response(viesBody(decodeURIComponent(country), decodeURIComponent(number), { isValid: false, userError: fault.userError }), {
            status: 200,
            headers: { "content-type": "application/json" }
          })
        )
      }
      if (fault?.kind === "stall") {
        entry("stall")
        const body = new ReadableStream<Uint8Array>({
          start: (controller) => controller.enqueue(new TextEncoder().encode(fault.body))
        })
        return Promise.resolve(new Response(body, { status: fault.status, headers: { "content-type": "application/json" } }))
      }
      if (fault?.kind === "status") {
        entry(fault.status)
        return Promise.resolve(
          new Response(fault.body ?? "", {
            status: fault.status,
            headers: { "content-type": "application/json", ...(fault.retryAfter === undefined ? {} : { "retry-after": fault.retryAfter }) }
          })
        )
      }
      return Promise.race([aborted, web.handler(request)]).then((response) => {
        entry(response.status)
        return response
      })
    }

    const control: RegistryControl = {
      putCompany: (company) => void companies.set(company.siren, company),
      removeCompany: (siren) => void companies.delete(siren),
      putVat: (vatNumber, entry) => void vat.set(vatNumber, entry),
      removeVat: (vatNumber) => void vat.delete(vatNumber),
      setMemberStateAvailable: (countryCode, available) =>
        void (available ? unavailableStates.delete(countryCode) : unavailableStates.add(countryCode)),
      addFault: (fault) => void faults.push({ fault, used: 0 }),
      clearFaults: () => void faults.splice(0, faults.length),
      requests: (key) => key === undefined ? [...log] : log.filter((r) => r.key === key)
    }

    const httpClient = FetchHttpClient.layer.pipe(
      Layer.provide(Layer.succeed(FetchHttpClient.Fetch, fetch as typeof globalThis.fetch))
    )
    return { control, fetch: fetch as typeof globalThis.fetch, httpClient, routes }
  })
