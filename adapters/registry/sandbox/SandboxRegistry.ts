// The registry simulation as sandbox mode uses it: one instance per application (memoized by this module's layer),
// the real Recherche d'entreprises and VIES adapters pointed at it through its in-memory HttpClient.
import { Context, Effect, Layer } from "effect"
import * as RechercheEntreprisesRegistry from "../RechercheEntreprisesRegistry.ts"
import type { AttemptPolicy } from "../upstreamHttp.ts"
import * as ViesVatRegistry from "../ViesVatRegistry.ts"
import { paths, type RegistrySimulation, registrySimulation, sandboxHost } from "./RegistrySimulation.ts"

export class SandboxRegistryInstance extends Context.Service<SandboxRegistryInstance, RegistrySimulation>()(
  "adapters/registry/SandboxRegistry"
) {}

/** One seeded simulation; a running sandbox keeps the newest 10,000 requests in its log. */
export const layerSimulation: Layer.Layer<SandboxRegistryInstance> = Layer.effect(
  SandboxRegistryInstance,
  registrySimulation({ requestLogLimit: 10_000 })
)

const httpClient = Layer.unwrap(Effect.map(SandboxRegistryInstance, (simulation) => simulation.httpClient))

/** The real Recherche d'entreprises adapter over the simulation. */
export const businessRegistry = (policy: AttemptPolicy) =>
  RechercheEntreprisesRegistry.layer({ ...policy, baseUrl: `${sandboxHost}${paths.rechercheEntreprises}` }).pipe(
    Layer.provide(httpClient),
    Layer.provide(layerSimulation)
  )

/** The real VIES adapter over the simulation. */
export const vatRegistry = (policy: AttemptPolicy) =>
  ViesVatRegistry.layer({ ...policy, baseUrl: `${sandboxHost}${paths.vies}` }).pipe(
    Layer.provide(httpClient),
    Layer.provide(layerSimulation)
  )
