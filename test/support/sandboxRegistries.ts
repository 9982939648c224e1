// The sandbox's registry simulation where tests need a business registry or VIES: the real adapters in memory, one
// attempt each, so a seeded fault or an unavailable member state answers at once whatever the test's clock.
import * as SandboxRegistry from "../../adapters/registry/sandbox/SandboxRegistry.ts"

export { SandboxSirets, SandboxVatNumbers } from "../../adapters/registry/sandbox/RegistrySimulation.ts"
export { layerSimulation, SandboxRegistryInstance } from "../../adapters/registry/sandbox/SandboxRegistry.ts"

const policy = { timeout: "5 seconds", retries: 0, retryBaseDelay: "10 millis" } as const

/** BusinessRegistry: the Recherche d'entreprises adapter over the layer's simulation. */
export const businessRegistry = SandboxRegistry.businessRegistry(policy)

/** VatRegistry: the VIES adapter over the same simulation when both are in one layer. */
export const vatRegistry = SandboxRegistry.vatRegistry(policy)
