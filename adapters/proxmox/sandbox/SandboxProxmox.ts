// The simulated Proxmox VE cluster over real HTTP(S) and WebSocket on loopback (ProxmoxSimulation.ts is the state and
// the front end): the `npm start` upstream when no cluster is registered, and the upstream of the end-to-end tests and
// of the adapter's tests over sockets. Timers run on the process clock.
import { Context, Effect, Layer, type Scope } from "effect"
import { openSimulation, type ProxmoxSimulationOptions } from "./ProxmoxSimulation.ts"
import type { SandboxControl } from "./SandboxControl.ts"
import { processClock } from "./SimClock.ts"

export type * from "./ProxmoxSimulation.ts"
export { defaultNodes, defaultTemplates } from "./ProxmoxSimulation.ts"

export interface SandboxProxmoxOptions extends ProxmoxSimulationOptions {
  readonly host?: string // default "127.0.0.1"
  readonly port?: number // default 0 (ephemeral)
  readonly tls?: { readonly cert: string; readonly key: string } // PEM; HTTPS when given, else plain HTTP
}

export interface SandboxProxmox {
  readonly url: string // e.g. "http://127.0.0.1:41234" (no path; the API is under /api2/json)
  readonly control: SandboxControl
}

/** The sandbox as a scoped resource: listening on acquire, closed (connections dropped, state saved) with the scope. */
export const sandboxProxmox = (options: SandboxProxmoxOptions = {}): Effect.Effect<SandboxProxmox, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { control, server } = yield* openSimulation(options, processClock(), options.tls)
    const host = options.host ?? "127.0.0.1"
    yield* Effect.callback<void>((resume) => {
      const failed = (error: Error) => resume(Effect.die(error))
      server.once("error", failed)
      server.listen(options.port ?? 0, host, () => {
        server.off("error", failed)
        resume(Effect.void)
      })
    })
    const address = server.address()
    if (address === null || typeof address === "string") return yield* Effect.die(new Error("sandbox PVE: no TCP address after listen"))
    const urlHost = host.includes(":") ? `[${host}]` : host
    return { url: `${options.tls === undefined ? "http" : "https"}://${urlHost}:${address.port}`, control }
  })

export class SandboxProxmoxInstance extends Context.Service<SandboxProxmoxInstance, SandboxProxmox>()(
  "app/sandbox/SandboxProxmox"
) {}

/** A layer holding one running sandbox for the lifetime of the layer. */
export const layerSandboxProxmox = (options: SandboxProxmoxOptions = {}): Layer.Layer<SandboxProxmoxInstance> =>
  Layer.effect(SandboxProxmoxInstance, sandboxProxmox(options))
