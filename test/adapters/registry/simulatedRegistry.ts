// The registry simulation (adapters/registry/sandbox) as the adapters' specifications use it: one simulation per suite,
// in memory, the adapter under test built over it with fast test settings, and its request log read per SIRET.
import { Clock, Effect, Layer, Logger } from "effect"
import type { HttpClient } from "effect/http"
import { registrySimulation, type RegistrySimulationOptions } from "../../../adapters/registry/sandbox/RegistrySimulation.ts"
import { SandboxRegistryInstance } from "../../../adapters/registry/sandbox/SandboxRegistry.ts"
import type { AttemptPolicy } from "../../../adapters/registry/upstreamHttp.ts"
import { BusinessRegistry } from "../../../ports/BusinessRegistry.ts"

/** Short enough for a quick suite; two retries make three attempts, as the suites count them. */
export const testPolicy: AttemptPolicy = { timeout: "500 millis", retries: 2, retryBaseDelay: "10 millis" }

/**
 * A suite's simulation, holding only what `options` seed. Silent by default: a test that specifies a warning provides
 * its own logger.
 */
export const simulationEnv = (options: RegistrySimulationOptions) =>
  Layer.mergeAll(
    Layer.effect(SandboxRegistryInstance, registrySimulation({ companies: [], vat: [], faults: [], ...options })),
    Logger.layer([])
  )

/** A lookup through the adapter `layer` builds from `options` (with `overrides` on top) over the suite's simulation. */
export const registryUnderTest = <O>(
  layer: (options: O) => Layer.Layer<BusinessRegistry, never, HttpClient.HttpClient>,
  options: O
) => {
  const lookUp = (siret: string, overrides: Partial<O> = {}) =>
    Effect.gen(function*() {
      const simulation = yield* SandboxRegistryInstance
      return yield* Effect.flatMap(BusinessRegistry, (registry) => registry.lookUpSiret(siret)).pipe(
        Effect.provide(layer({ ...options, ...overrides }).pipe(Layer.provide(simulation.httpClient)))
      )
    })
  const failureOf = (siret: string, overrides: Partial<O> = {}) => Effect.flip(lookUp(siret, overrides))
  return { lookUp, failureOf }
}

/** The requests the simulation saw about `key` (a SIRET or a full VAT number), oldest first. */
export const requestsFor = (key: string) => Effect.map(SandboxRegistryInstance, (s) => s.control.requests(key))

export const attempts = (key: string) => Effect.map(requestsFor(key), (requests) => requests.length)

export const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    const result = yield* effect
    return { result, elapsed: (yield* Clock.currentTimeMillis) - start }
  })
