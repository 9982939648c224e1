// The sandbox's registry simulation, read through the real adapters (no socket): the seeded SIRETs and VAT numbers
// answer as README and the tests name them, the same state answers on the three upstreams, and faults are data.
import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Redacted } from "effect"
import * as InseeRegistry from "../../../adapters/registry/InseeRegistry.ts"
import * as RechercheEntreprisesRegistry from "../../../adapters/registry/RechercheEntreprisesRegistry.ts"
import {
  paths,
  type RegistrySimulationOptions,
  registrySimulation,
  SandboxSirets,
  SandboxVatNumbers,
  sandboxHost,
  seedCompanies
} from "../../../adapters/registry/sandbox/RegistrySimulation.ts"
import * as SandboxRegistry from "../../../adapters/registry/sandbox/SandboxRegistry.ts"
import * as ViesVatRegistry from "../../../adapters/registry/ViesVatRegistry.ts"
import { isValidSiret, luhn } from "../../../domain/account/Siret.ts"
import { BusinessRegistry } from "../../../ports/BusinessRegistry.ts"
import { VatRegistry } from "../../../ports/VatRegistry.ts"

const policy = { timeout: "500 millis", retries: 2, retryBaseDelay: "10 millis" } as const

/** The three adapters over one fresh simulation, and its control. */
const world = (options: RegistrySimulationOptions = {}) =>
  Effect.gen(function*() {
    const simulation = yield* registrySimulation(options)
    const recherche = yield* Layer.build(
      RechercheEntreprisesRegistry.layer({ ...policy, baseUrl: `${sandboxHost}${paths.rechercheEntreprises}` }).pipe(
        Layer.provide(simulation.httpClient)
      )
    )
    const insee = yield* Layer.build(
      InseeRegistry.layer({ ...policy, baseUrl: `${sandboxHost}${paths.insee}`, apiKey: Redacted.make("sandbox-key") })
        .pipe(Layer.provide(simulation.httpClient))
    )
    const vies = yield* Layer.build(
      ViesVatRegistry.layer({ ...policy, baseUrl: `${sandboxHost}${paths.vies}` }).pipe(Layer.provide(simulation.httpClient))
    )
    const lookUp = (siret: string) =>
      Effect.flatMap(BusinessRegistry, (r) => r.lookUpSiret(siret)).pipe(Effect.provideContext(recherche), Effect.provide(Logger.layer([])))
    const lookUpInsee = (siret: string) =>
      Effect.flatMap(BusinessRegistry, (r) => r.lookUpSiret(siret)).pipe(Effect.provideContext(insee), Effect.provide(Logger.layer([])))
    const check = (vat: string) =>
      Effect.flatMap(VatRegistry, (r) => r.check({ countryCode: vat.slice(0, 2), number: vat.slice(2) })).pipe(
        Effect.provideContext(vies),
        Effect.provide(Logger.layer([]))
      )
    return { control: simulation.control, lookUp, lookUpInsee, check }
  })

describe("RegistrySimulation", () => {
  it("every named SIRET and every seeded establishment passes the SIRET checksum rule", () => {
    const seeded = seedCompanies.flatMap((c) => c.establishments.map((e) => e.siret))
    for (const siret of [...Object.values(SandboxSirets), ...seeded]) assert.isTrue(isValidSiret(siret), siret)
  })

  it("the La Poste establishment is valid only through the digit-sum rule", () => {
    assert.isFalse(luhn(SandboxSirets.laPosteEstablishment))
    assert.isTrue(isValidSiret(SandboxSirets.laPosteEstablishment))
  })

  it("the reference's unknown example fails the SIREN checksum, hence a different named unknown SIRET", () => {
    assert.isFalse(isValidSiret("88800012300008"))
  })

  it.live("well-known companies are active with their names, and two with their head office's address", () =>
    Effect.gen(function*() {
      const { lookUp } = yield* world()
      assert.deepStrictEqual(yield* lookUp(SandboxSirets.edf), {
        _tag: "Active",
        companyName: "ELECTRICITE DE FRANCE",
        headOffice: { line1: "22-30 AVENUE DE WAGRAM", postcode: "75008", city: "PARIS" }
      })
      assert.deepStrictEqual(yield* lookUp(SandboxSirets.googleFrance), {
        _tag: "Active",
        companyName: "GOOGLE FRANCE",
        headOffice: { line1: "8 RUE DE LONDRES", postcode: "75009", city: "PARIS" }
      })
      assert.deepStrictEqual(yield* lookUp(SandboxSirets.laPoste), { _tag: "Active", companyName: "LA POSTE" })
      assert.deepStrictEqual(yield* lookUp(SandboxSirets.laPosteEstablishment), { _tag: "Active", companyName: "LA POSTE" })
    }))

  it.live("INSEE answers from the same state", () =>
    Effect.gen(function*() {
      const { lookUpInsee } = yield* world()
      assert.deepStrictEqual(yield* lookUpInsee(SandboxSirets.edf), { _tag: "Active", companyName: "ELECTRICITE DE FRANCE" })
      assert.deepStrictEqual(yield* lookUpInsee(SandboxSirets.laPosteEstablishment), { _tag: "Active", companyName: "LA POSTE" })
      assert.deepStrictEqual(yield* lookUpInsee(SandboxSirets.partiallyDiffusible), { _tag: "Active", companyName: null })
      assert.deepStrictEqual(yield* lookUpInsee(SandboxSirets.closed), { _tag: "Closed" })
      assert.deepStrictEqual(yield* lookUpInsee(SandboxSirets.unknown), { _tag: "Unknown" })
    }))

  it.live("INSEE refuses a request without its key header", () =>
    Effect.gen(function*() {
      const simulation = yield* registrySimulation()
      const response = yield* Effect.promise(() => simulation.fetch(`${sandboxHost}${paths.insee}/siret/${SandboxSirets.edf}`))
      assert.strictEqual(response.status, 401)
    }))

  it.live("the partially diffusible SIRET is active with no name to store", () =>
    Effect.gen(function*() {
      const { lookUp } = yield* world()
      assert.deepStrictEqual(yield* lookUp(SandboxSirets.partiallyDiffusible), { _tag: "Active", companyName: null })
    }))

  it.live("the closed SIRET is Closed, any other SIRET Unknown", () =>
    Effect.gen(function*() {
      const { lookUp } = yield* world()
      assert.deepStrictEqual(yield* lookUp(SandboxSirets.closed), { _tag: "Closed" })
      assert.deepStrictEqual(yield* lookUp(SandboxSirets.unknown), { _tag: "Unknown" })
      assert.deepStrictEqual(yield* lookUp("88800012300008"), { _tag: "Unknown" })
    }))

  it.live("the registry-down SIRET is DOWN after every attempt answered 503", () =>
    Effect.gen(function*() {
      const { control, lookUp } = yield* world()
      assert.strictEqual((yield* Effect.flip(lookUp(SandboxSirets.registryDown))).reason, "DOWN")
      assert.deepStrictEqual(control.requests(SandboxSirets.registryDown).map((r) => r.outcome), [503, 503, 503])
    }))

  it.live("the registry-throttled SIRET is THROTTLED at once: its Retry-After is beyond the adapters' cap", () =>
    Effect.gen(function*() {
      const { control, lookUp } = yield* world()
      assert.strictEqual((yield* Effect.flip(lookUp(SandboxSirets.registryThrottled))).reason, "THROTTLED")
      assert.deepStrictEqual(control.requests(SandboxSirets.registryThrottled).map((r) => r.outcome), [429])
    }))

  it.live("a company added through the control is found; one removed is Unknown", () =>
    Effect.gen(function*() {
      const { control, lookUp } = yield* world()
      control.putCompany({
        siren: "100000009",
        denomination: null,
        person: { firstName: "Jeanne", lastName: "Dupont" },
        ceased: false,
        diffusion: "O",
        establishments: [{ siret: "10000000900016", open: true }]
      })
      assert.deepStrictEqual(yield* lookUp("10000000900016"), { _tag: "Active", companyName: "JEANNE DUPONT" })
      control.removeCompany("552081317")
      assert.deepStrictEqual(yield* lookUp(SandboxSirets.edf), { _tag: "Unknown" })
    }))

  it.live("a fault for a number of requests answers them, then the state answers again", () =>
    Effect.gen(function*() {
      const { control, lookUp } = yield* world()
      control.addFault({ upstream: "recherche-entreprises", key: SandboxSirets.edf, answer: { kind: "status", status: 500 }, times: 1 })
      assert.strictEqual((yield* lookUp(SandboxSirets.edf))._tag, "Active")
      assert.deepStrictEqual(control.requests(SandboxSirets.edf).map((r) => r.outcome), [500, 200])
    }))

  it.live("dropped and hung requests end DOWN; the log says what each request got", () =>
    Effect.gen(function*() {
      const { control, lookUp } = yield* world()
      control.addFault({ key: SandboxSirets.googleFrance, answer: { kind: "drop" } })
      assert.strictEqual((yield* Effect.flip(lookUp(SandboxSirets.googleFrance))).reason, "DOWN")
      assert.deepStrictEqual(control.requests(SandboxSirets.googleFrance).map((r) => r.outcome), ["drop", "drop", "drop"])
      control.addFault({ key: SandboxSirets.laPoste, answer: { kind: "hang" } })
      assert.strictEqual((yield* Effect.flip(lookUp(SandboxSirets.laPoste))).reason, "DOWN")
      assert.deepStrictEqual(control.requests(SandboxSirets.laPoste).map((r) => r.outcome), ["hang", "hang", "hang"])
    }))

  it.live("VIES: registered numbers are valid with their evidence, others invalid", () =>
    Effect.gen(function*() {
      const { check } = yield* world()
      const belgian = yield* check(SandboxVatNumbers.belgianCompany)
      assert.deepInclude(belgian, {
        valid: true,
        registeredName: "DEMO BELGIUM SRL",
        registeredAddress: "Rue de la Loi 1\n1000 Bruxelles"
      })
      assert.match(belgian.requestIdentifier ?? "", /^WAPISANDBOX\d{6}$/)
      assert.isTrue((yield* check(SandboxVatNumbers.germanCompany)).valid)
      assert.deepInclude(yield* check(SandboxVatNumbers.edf), { valid: true, registeredName: "SA ELECTRICITE DE FRANCE" })
      assert.deepInclude(yield* check(SandboxVatNumbers.belgianRejected), {
        valid: false,
        requestIdentifier: null,
        registeredName: null
      })
    }))

  it.live("VIES: a number whose member state does not answer is unavailable after three attempts", () =>
    Effect.gen(function*() {
      const { check, control } = yield* world()
      assert.strictEqual((yield* Effect.flip(check(SandboxVatNumbers.viesDown)))._tag, "VatRegistryUnavailable")
      assert.strictEqual(control.requests(SandboxVatNumbers.viesDown).length, 3)
    }))

  it.live("VIES: a whole member state can be made unavailable, then available again", () =>
    Effect.gen(function*() {
      const { check, control } = yield* world()
      control.setMemberStateAvailable("DE", false)
      assert.strictEqual((yield* Effect.flip(check(SandboxVatNumbers.germanCompany)))._tag, "VatRegistryUnavailable")
      control.setMemberStateAvailable("DE", true)
      assert.isTrue((yield* check(SandboxVatNumbers.germanCompany)).valid)
    }))

  it.live("sandbox mode's layers run the real adapters over one simulation", () =>
    Effect.gen(function*() {
      const registry = yield* BusinessRegistry
      const vat = yield* VatRegistry
      assert.strictEqual((yield* registry.lookUpSiret(SandboxSirets.closed))._tag, "Closed")
      assert.isTrue((yield* vat.check({ countryCode: "BE", number: "0123456749" })).valid)
      const { control } = yield* SandboxRegistry.SandboxRegistryInstance
      assert.deepStrictEqual(control.requests().map((r) => r.upstream), ["recherche-entreprises", "vies"])
    }).pipe(Effect.provide(Layer.mergeAll(
      SandboxRegistry.businessRegistry(policy),
      SandboxRegistry.vatRegistry(policy),
      SandboxRegistry.layerSimulation
    ))))
})

describe("RegistrySimulation on loopback", () => {
  it.live("answers the real adapter over a socket, and its faults hold there: a drop resets the connection", () =>
    Effect.gen(function*() {
      const simulation = yield* registrySimulation()
      const { baseUrl } = yield* SandboxRegistry.serveOnLoopback(simulation)
      const registry = yield* Layer.build(
        RechercheEntreprisesRegistry.layer({ ...policy, baseUrl: `${baseUrl}${paths.rechercheEntreprises}` }).pipe(
          Layer.provide(NodeHttpClient.layerUndici)
        )
      )
      const lookUp = (siret: string) =>
        Effect.flatMap(BusinessRegistry, (r) => r.lookUpSiret(siret)).pipe(
          Effect.provideContext(registry),
          Effect.provide(Logger.layer([]))
        )
      assert.deepInclude(yield* lookUp(SandboxSirets.edf), { _tag: "Active", companyName: "ELECTRICITE DE FRANCE" })
      simulation.control.addFault({ key: SandboxSirets.laPoste, answer: { kind: "drop" }, times: 1 })
      assert.deepStrictEqual(yield* lookUp(SandboxSirets.laPoste), { _tag: "Active", companyName: "LA POSTE" })
      assert.deepStrictEqual(simulation.control.requests(SandboxSirets.laPoste).map((r) => r.outcome), ["drop", 200])
      assert.strictEqual((yield* Effect.flip(lookUp(SandboxSirets.registryThrottled))).reason, "THROTTLED")
    }))

  it.live("a hung request on loopback ends with the client's timeout", () =>
    Effect.gen(function*() {
      const simulation = yield* registrySimulation({ faults: [{ answer: { kind: "hang" } }] })
      const { baseUrl } = yield* SandboxRegistry.serveOnLoopback(simulation)
      const registry = yield* Layer.build(
        RechercheEntreprisesRegistry.layer({ timeout: "100 millis", retries: 0, retryBaseDelay: "10 millis", baseUrl }).pipe(
          Layer.provide(NodeHttpClient.layerUndici)
        )
      )
      const failure = yield* Effect.flip(
        Effect.flatMap(BusinessRegistry, (r) => r.lookUpSiret(SandboxSirets.edf)).pipe(
          Effect.provideContext(registry),
          Effect.provide(Logger.layer([]))
        )
      )
      assert.strictEqual(failure.reason, "DOWN")
      assert.deepStrictEqual(simulation.control.requests().map((r) => r.outcome), ["hang"])
    }))
})
