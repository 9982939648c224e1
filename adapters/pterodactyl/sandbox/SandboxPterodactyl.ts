// The simulated Pterodactyl panel and its Wings over real HTTP and WebSocket on loopback (PterodactylSimulation.ts is
// the state and the front ends): the `npm start` game panel when none is registered, and the upstream of the
// end-to-end tests and of the adapter's tests over sockets. Every node is served by the one Wings listener at `nodeUrl`.
import { Context, Effect, Layer, type Scope } from "effect"
import type { Server as HttpServer } from "node:http"
import { openSimulation, type PterodactylSimulationOptions } from "./PterodactylSimulation.ts"
import type { PterodactylControl } from "./PterodactylControl.ts"
import { processClock } from "./SimClock.ts"

export type * from "./PterodactylControl.ts"
export type { PterodactylSimulationOptions, StateKeeper, StateSource } from "./PterodactylSimulation.ts"

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

const listen = (server: HttpServer, host: string): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, host, () => {
      server.off("error", reject)
      const address = server.address()
      if (address === null || typeof address === "string") reject(new Error("sandbox Pterodactyl: no TCP address"))
      else resolve(address.port)
    })
  })

/** Listens on two ephemeral ports; timers run on the process clock. */
export const startSandboxPterodactyl = async (
  options: SandboxPterodactylOptions = {}
): Promise<SandboxPterodactyl & { close(): Promise<void> }> => {
  const open = await openSimulation(options, processClock())
  const host = options.host ?? "127.0.0.1"
  const urlHost = host.includes(":") ? `[${host}]` : host
  open.sim.panelUrl = `http://${urlHost}:${await listen(open.panel.server, host)}`
  open.sim.nodeUrl = `http://${urlHost}:${await listen(open.wings.server, host)}`
  return {
    url: open.sim.panelUrl,
    nodeUrl: open.sim.nodeUrl,
    applicationKey: open.applicationKey,
    clientKey: open.clientKey,
    control: open.control,
    close: open.close
  }
}

/** The sandbox as a scoped resource: started on acquire, closed when the scope closes. */
export const sandboxPterodactyl = (options: SandboxPterodactylOptions = {}): Effect.Effect<SandboxPterodactyl, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startSandboxPterodactyl(options)),
    (sandbox) => Effect.promise(() => sandbox.close())
  )

export class SandboxPterodactylInstance extends Context.Service<SandboxPterodactylInstance, SandboxPterodactyl>()(
  "app/sandbox/SandboxPterodactyl"
) {}

/** A layer holding one running sandbox for the lifetime of the layer. */
export const layerSandboxPterodactyl = (options: SandboxPterodactylOptions = {}): Layer.Layer<SandboxPterodactylInstance> =>
  Layer.effect(SandboxPterodactylInstance, sandboxPterodactyl(options))
