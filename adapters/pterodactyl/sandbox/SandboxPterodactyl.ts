// The simulated Pterodactyl panel and its Wings over real HTTP and WebSocket on loopback (PterodactylSimulation.ts is
// the state and the front ends): the `npm start` game panel when none is registered, and the upstream of the
// end-to-end tests and of the adapter's tests over sockets. Every node is served by the one Wings listener at `nodeUrl`.
import { Context, Effect, Layer, type Scope } from "effect"
import { serveOnPort } from "./Fronts.ts"
import { openSimulation, type PterodactylSimulationOptions } from "./PterodactylSimulation.ts"
import type { PterodactylControl } from "./PterodactylControl.ts"
import { processClock } from "./SimClock.ts"

export type * from "./PterodactylControl.ts"
export type { KeepState, PterodactylSimulationOptions, StateKeeper, StateSource } from "./PterodactylSimulation.ts"

export interface SandboxPterodactylOptions extends PterodactylSimulationOptions {
  /** Default "127.0.0.1". */
  readonly host?: string
}

export interface SandboxPterodactyl {
  readonly url: string // panel base URL (APIs under /api/application and /api/client)
  readonly nodeUrl: string // the Wings base URL of every node
  readonly applicationKey: string // "ptla_" + 11 + 32 random chars
  readonly clientKey: string // "ptlc_…", belongs to the root-admin panel user
  readonly control: PterodactylControl
}

/** Listens on two ephemeral ports until the scope closes; timers run on the process clock. */
export const sandboxPterodactyl = (options: SandboxPterodactylOptions = {}): Effect.Effect<SandboxPterodactyl, never, Scope.Scope> =>
  Effect.gen(function*() {
    const open = yield* openSimulation(options, processClock())
    const host = options.host ?? "127.0.0.1"
    const urlHost = host.includes(":") ? `[${host}]` : host
    open.sim.panelUrl = `http://${urlHost}:${yield* serveOnPort(open.panel, host)}`
    open.sim.nodeUrl = `http://${urlHost}:${yield* serveOnPort(open.wings, host)}`
    return {
      url: open.sim.panelUrl,
      nodeUrl: open.sim.nodeUrl,
      applicationKey: open.applicationKey,
      clientKey: open.clientKey,
      control: open.control
    }
  })

export class SandboxPterodactylInstance extends Context.Service<SandboxPterodactylInstance, SandboxPterodactyl>()(
  "app/sandbox/SandboxPterodactyl"
) {}

/** A layer holding one running sandbox for the lifetime of the layer. */
export const layerSandboxPterodactyl = (options: SandboxPterodactylOptions = {}): Layer.Layer<SandboxPterodactylInstance> =>
  Layer.effect(SandboxPterodactylInstance, sandboxPterodactyl(options))
