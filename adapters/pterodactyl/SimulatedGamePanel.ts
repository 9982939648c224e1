// The GamePanel of tests that need no network: this adapter, unchanged, over the Pterodactyl simulation reached in
// memory (sandbox/PterodactylSimulation.ts), with time on the Effect Clock. What a test drives besides the port
// (install outcomes, faults, files put behind the panel's back, the request log) is the simulation's control,
// provided beside the port as PterodactylSimulationInstance.
import { Effect, Layer, Redacted } from "effect"
import { GamePanel, GamePanels, PanelUnknown } from "../../ports/GamePanel.ts"
import { NodeConnections } from "./NodeConnections.ts"
import { layerWith, type PterodactylOptions } from "./PterodactylGamePanel.ts"
import {
  httpClientOf,
  layerPterodactylSimulation,
  PterodactylSimulationInstance,
  type PterodactylSimulationOptions
} from "./sandbox/PterodactylSimulation.ts"

export interface SimulatedGamePanelOptions extends PterodactylSimulationOptions {
  /** The panel's name as the port takes it (the only one there is). Default "sandbox". */
  readonly panel?: string
  /** The adapter's own settings (timeouts, retries, caches). */
  readonly adapter?: Partial<PterodactylOptions>
}

/**
 * Installs take 30 s of the Clock; the panel's rate limits are lifted (a test doing a month of renewals in a second is
 * no client a real limit is meant for) unless given.
 */
export const defaults: PterodactylSimulationOptions = {
  installDurationMs: 30_000,
  rateLimits: { application: 1_000_000, client: 1_000_000 }
}

/** GamePanels knowing one panel: `name`, at `url` with its two keys. */
export const onePanel = (
  name: string,
  panel: { readonly url: string; readonly applicationKey: string; readonly clientKey: string }
): Layer.Layer<GamePanels> =>
  Layer.succeed(GamePanels, {
    get: (asked) =>
      asked === name
        ? Effect.succeed({
          name,
          url: panel.url,
          applicationKey: Redacted.make(panel.applicationKey),
          clientKey: Redacted.make(panel.clientKey)
        })
        : Effect.fail(new PanelUnknown({ panel: asked }))
  })

/** The adapter over the simulation of `options` (a fresh one per build) and the simulation's control. */
export const layer = (options: SimulatedGamePanelOptions = {}): Layer.Layer<GamePanel | PterodactylSimulationInstance> => {
  const { adapter = {}, panel = "sandbox", ...simulation } = options
  // One attempt per call unless told otherwise: what a domain test observes of a failing panel is the domain's own
  // retrying, not the adapter's back-off on its clock.
  const overSimulation = Layer.unwrap(Effect.map(PterodactylSimulationInstance, (sim) =>
    layerWith({ retries: 0, ...adapter }).pipe(
      Layer.provide(onePanel(panel, sim)),
      Layer.provide(httpClientOf(sim)),
      Layer.provide(Layer.succeed(NodeConnections, { dispatcher: sim.dispatcher, webSocket: sim.connectWings }))
    )))
  return overSimulation.pipe(Layer.provideMerge(layerPterodactylSimulation({ ...defaults, ...simulation })))
}
