// Specification of the VIES adapter against a scripted upstream on loopback: the REST path it asks, how an answer
// maps onto the port (with its evidence), and how a member state that is down, a 5xx or a hang end in
// VatRegistryUnavailable after bounded retries.
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as ViesVatRegistry from "../../../adapters/registry/ViesVatRegistry.ts"
import { VatRegistry } from "../../../ports/VatRegistry.ts"
import { attempts, ok, type Reply, stubEnv, testPolicy, timed, Upstream } from "./upstreamStub.ts"

const answer = (fields: Record<string, unknown>) =>
  ok(JSON.stringify({
    countryCode: "BE",
    vatNumber: "0123456749",
    requestDate: "2026-11-25T10:00:00.000Z",
    isValid: false,
    requestIdentifier: "",
    name: "---",
    address: "---",
    userError: "INVALID",
    viesApproximate: { name: "---", street: "---", postalCode: "---", city: "---", companyType: "---", matchName: 3 },
    ...fields
  }))

const scenarios: Record<string, (attempt: number) => Reply> = {
  "BE/0123456749": () =>
    answer({ isValid: true, userError: "VALID", name: "DEMO SRL", address: "Rue de la Loi 1\n1000 Bruxelles", requestIdentifier: "WAPIAAAAZ123" }),
  "BE/0987654321": () => answer({}),
  "DE/111111125": (n) => n === 0 ? answer({ userError: "MS_UNAVAILABLE" }) : answer({ isValid: true, userError: "VALID", vatNumber: "111111125" }),
  "DE/222222222": () => answer({ userError: "MS_MAX_CONCURRENT_REQ" }),
  "IT/00000000000": () => ({ status: 503, body: "" }),
  "NL/000000000B01": () => "hang"
}

const TestEnv = stubEnv({
  basePath: "/taxation_customs/vies/rest-api",
  contentType: "application/json",
  keyOf: (url) => url.pathname.replace(/^.*\/ms\/([^/]+)\/vat\/([^/]+)$/, "$1/$2"),
  scenarios,
  unscripted: { status: 404, body: "" }
})

const check = (countryCode: string, number: string) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* Upstream
    return yield* Effect.flatMap(VatRegistry, (registry) => registry.check({ countryCode, number })).pipe(
      Effect.provide(ViesVatRegistry.layer({ baseUrl, ...testPolicy }))
    )
  })

layer(TestEnv, { excludeTestServices: true })("ViesVatRegistry", (it) => {
  it.effect("a registered number is valid, with VIES's consultation number, name and address kept as evidence", () =>
    Effect.gen(function*() {
      const result = yield* check("BE", "0123456749")
      assert.deepStrictEqual({ ...result, checkedAt: undefined }, {
        valid: true,
        checkedAt: undefined,
        requestIdentifier: "WAPIAAAAZ123",
        registeredName: "DEMO SRL",
        registeredAddress: "Rue de la Loi 1\n1000 Bruxelles"
      })
      assert.instanceOf(result.checkedAt, Date)
      const [request] = (yield* Upstream).requestsFor("BE/0123456749")
      assert.strictEqual(request?.url.pathname, "/taxation_customs/vies/rest-api/ms/BE/vat/0123456749")
    }))

  it.effect("a number VIES does not know is invalid, and its masked name is not kept", () =>
    Effect.gen(function*() {
      const result = yield* check("BE", "0987654321")
      assert.deepStrictEqual([result.valid, result.registeredName, result.registeredAddress, result.requestIdentifier], [false, null, null, null])
    }))

  it.effect("a member state that is down is asked again, and its next answer counts", () =>
    Effect.gen(function*() {
      assert.isTrue((yield* check("DE", "111111125")).valid)
      assert.strictEqual(yield* attempts("DE/111111125"), 2)
    }))

  it.effect("a member state that stays saturated ends in VatRegistryUnavailable after three attempts", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(check("DE", "222222222"))
      assert.strictEqual(failure._tag, "VatRegistryUnavailable")
      assert.strictEqual(yield* attempts("DE/222222222"), 3)
    }))

  it.effect("VIES answering 503 ends in VatRegistryUnavailable after three attempts", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* Effect.flip(check("IT", "00000000000")))._tag, "VatRegistryUnavailable")
      assert.strictEqual(yield* attempts("IT/00000000000"), 3)
    }))

  it.effect("a VIES that never answers is given up within the attempts' timeouts", () =>
    Effect.gen(function*() {
      const { elapsed, result } = yield* timed(Effect.flip(check("NL", "000000000B01")))
      assert.strictEqual(result._tag, "VatRegistryUnavailable")
      assert.isBelow(elapsed, 3 * 500 + 1_000)
    }))
})
