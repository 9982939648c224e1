// In-memory VatRegistry: a fixed table of VAT numbers, for tests and for sandbox mode (never outside it). Every number
// outside the table is not registered; one number stands for VIES being down.
import { Clock, Effect, Layer } from "effect"
import { VatRegistry, VatRegistryUnavailable } from "../../ports/VatRegistry.ts"

/** VAT numbers with a role in tests and in the sandbox. */
export const FixtureVatNumbers = {
  /** Registered: a Belgian company (made up). */
  belgianCompany: "BE0123456749",
  /** Not registered: VIES rejects it. */
  belgianRejected: "BE0987654321",
  /** Registered: a German company (made up). */
  germanCompany: "DE123456789",
  /** VIES (or the member state's register) does not answer for it. */
  viesDown: "BE0503503503",
  /** The French numbers of the registry fixture's companies, derived from their SIREN. */
  edf: "FR03552081317",
  googleFrance: "FR64443061841"
} as const

const registered = new Map<string, { readonly name: string; readonly address: string }>([
  [FixtureVatNumbers.belgianCompany, { name: "DEMO BELGIUM SRL", address: "Rue de la Loi 1\n1000 Bruxelles" }],
  [FixtureVatNumbers.germanCompany, { name: "DEMO DEUTSCHLAND GMBH", address: "Unter den Linden 1\n10117 Berlin" }],
  [FixtureVatNumbers.edf, { name: "SA ELECTRICITE DE FRANCE", address: "22 30 AV DE WAGRAM\n75008 PARIS" }],
  [FixtureVatNumbers.googleFrance, { name: "SARL GOOGLE FRANCE", address: "8 RUE DE LONDRES\n75009 PARIS" }]
])

let consultation = 0

export const make = VatRegistry.of({
  check: (vat) =>
    Effect.gen(function*() {
      const full = `${vat.countryCode}${vat.number}`
      if (full === FixtureVatNumbers.viesDown) return yield* new VatRegistryUnavailable({ reason: "DOWN" })
      const found = registered.get(full)
      return {
        valid: found !== undefined,
        checkedAt: new Date(yield* Clock.currentTimeMillis),
        requestIdentifier: found === undefined ? null : `SANDBOX${String(++consultation).padStart(8, "0")}`,
        registeredName: found?.name ?? null,
        registeredAddress: found?.address ?? null
      }
    })
})

export const layer: Layer.Layer<VatRegistry> = Layer.succeed(VatRegistry, make)
