// Specification of the VIES adapter against the registry simulation (in memory): the REST path it asks, how an answer
// maps onto the port (with its evidence), and how a member state that is down, a 5xx or a hang end in
// VatRegistryUnavailable after bounded retries.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import {
  paths,
  type RegistrySimulationOptions,
  registrySimulation,
  sandboxHost
} from "../../../adapters/registry/sandbox/RegistrySimulation.ts"
import * as ViesVatRegistry from "../../../adapters/registry/ViesVatRegistry.ts"
import { VatRegistry } from "../../../ports/VatRegistry.ts"
import { testPolicy, timed } from "./simulatedRegistry.ts"


const vies = (options: RegistrySimulationOptions = {}) =>
  Effect.gen(function*() {
    const simulation = yield* registrySimulation({ companies: [], vat: [], faults: [], ...options })
    const context = yield* Layer.build(
      ViesVatRegistry.layer({ ...testPolicy, baseUrl: `${sandboxHost}${paths.vies}` }).pipe(Layer.provide(simulation.httpClient))
    )
    const check = (countryCode: string, number: string) =>
      Effect.flatMap(VatRegistry, (registry) => registry.check({ countryCode, number })).pipe(
        Effect.provideContext(context),
        Effect.provide(Logger.layer([]))
      )
    return { control: simulation.control, check }
  })

describe("ViesVatRegistry", () => {
  it.live("a registered number is valid, with VIES's consultation number, name and address kept as evidence", () =>
    Effect.gen(function*() {
      const { check, control } = yield* vies({
        vat: [["BE0123456749", { state: "valid", name: "DEMO SRL", address: "Rue de la Loi 1\n1000 Bruxelles" }]]
      })
      const result = yield* check("BE", "0123456749")
      assert.deepStrictEqual({ ...result, checkedAt: undefined, requestIdentifier: undefined }, {
        valid: true,
        checkedAt: undefined,
        requestIdentifier: undefined,
        registeredName: "DEMO SRL",
        registeredAddress: "Rue de la Loi 1\n1000 Bruxelles"
      })
      assert.match(result.requestIdentifier ?? "", /^WAPISANDBOX\d{6}$/)
      assert.instanceOf(result.checkedAt, Date)
      const [request] = control.requests("BE0123456749")
      assert.strictEqual(request?.url.pathname, "/taxation_customs/vies/rest-api/ms/BE/vat/0123456749")
      assert.strictEqual(request?.headers["accept"], "application/json")
    }))

  it.live("a number VIES does not know is invalid, and its masked name is not kept", () =>
    Effect.gen(function*() {
      const { check } = yield* vies()
      const result = yield* check("BE", "0987654321")
      assert.deepStrictEqual(
        [result.valid, result.registeredName, result.registeredAddress, result.requestIdentifier],
        [false, null, null, null]
      )
    }))

  it.live("a member state that is down is asked again, and its next answer counts", () =>
    Effect.gen(function*() {
      const { check, control } = yield* vies({
        vat: [["DE111111125", { state: "valid", name: "DEMO GMBH", address: "Berlin" }]],
        faults: [{ key: "DE111111125", answer: { kind: "vies-busy", userError: "MS_UNAVAILABLE" }, times: 1 }]
      })
      assert.isTrue((yield* check("DE", "111111125")).valid)
      assert.deepStrictEqual(control.requests("DE111111125").map((r) => r.outcome), ["MS_UNAVAILABLE", 200])
    }))

  it.live("a member state that stays saturated ends in VatRegistryUnavailable after three attempts", () =>
    Effect.gen(function*() {
      const { check, control } = yield* vies({
        faults: [{ upstream: "vies", answer: { kind: "vies-busy", userError: "MS_MAX_CONCURRENT_REQ" } }]
      })
      const failure = yield* Effect.flip(check("DE", "222222222"))
      assert.strictEqual(failure._tag, "VatRegistryUnavailable")
      assert.strictEqual(control.requests("DE222222222").length, 3)
    }))

  it.live("a member state whose register is unavailable ends in VatRegistryUnavailable after three attempts", () =>
    Effect.gen(function*() {
      const { check, control } = yield* vies({ vat: [["FR03552081317", { state: "valid", name: "EDF", address: "PARIS" }]] })
      control.setMemberStateAvailable("FR", false)
      assert.strictEqual((yield* Effect.flip(check("FR", "03552081317")))._tag, "VatRegistryUnavailable")
      assert.deepStrictEqual(control.requests("FR03552081317").map((r) => r.outcome), [200, 200, 200])
    }))

  it.live("VIES answering 503 ends in VatRegistryUnavailable after three attempts", () =>
    Effect.gen(function*() {
      const { check, control } = yield* vies({ faults: [{ upstream: "vies", answer: { kind: "status", status: 503 } }] })
      assert.strictEqual((yield* Effect.flip(check("IT", "00000000000")))._tag, "VatRegistryUnavailable")
      assert.strictEqual(control.requests("IT00000000000").length, 3)
    }))

  it.live("a VIES that never answers is given up within the attempts' timeouts", () =>
    Effect.gen(function*() {
      const { check, control } = yield* vies({ faults: [{ upstream: "vies", answer: { kind: "hang" } }] })
      const { elapsed, result } = yield* timed(Effect.flip(check("NL", "000000000B01")))
      assert.strictEqual(result._tag, "VatRegistryUnavailable")
      assert.strictEqual(control.requests("NL000000000B01").length, 3)
      assert.isBelow(elapsed, 3 * 500 + 1_000)
    }))
})
