// The simulated Pterodactyl panel 1.11.8 and its Wings 1.11.11 (reference/pterodactyl.md), one state for both ways of
// reaching it (DESIGN.md §7: the fake is the simulator without sockets). `openSimulation` builds the world, the panel
// and Wings fronts (effect/http apps) and the control surface; `pterodactylSimulation` connects to them in memory (an undici
// dispatcher and WebSocket connections over stream pairs, no port, no OS socket, time on the Effect Clock) and
// SandboxPterodactyl.ts puts the same front ends on loopback ports.
import { NodeHttpClient } from "@effect/platform-node"
import { Context, Effect, Layer, type Scope } from "effect"
import type { HttpClient } from "effect/http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { Agent, type Dispatcher } from "undici"
import { DEFAULT_MAX_FILE_BYTES, durableWorld, type KeepState, type StateKeeper } from "./durableState.ts"
import { Faults, RateLimiter } from "./Faults.ts"
import { type Front, serveInMemory } from "./Fronts.ts"
import { panelApp } from "./PanelServer.ts"
import { makeControl, type PterodactylControl } from "./PterodactylControl.ts"
import type { Sim } from "./Sim.ts"
import { effectClock, type SimClock } from "./SimClock.ts"
import { Tokens } from "./Tokens.ts"
import { wingsApp } from "./WingsServer.ts"
import { makeKey, seedWorld, type User, World } from "./World.ts"

export type { KeepState, StateKeeper, StateSource } from "./durableState.ts"
export type * from "./PterodactylControl.ts"

export interface PterodactylSimulationOptions {
  /** How long an install takes; default 3000; 0 = finished on the next status read. */
  readonly installDurationMs?: number | undefined
  /** Console JWT lifetime, default 600_000; `token expiring` when <= 60 s left. */
  readonly wingsTokenTtlMs?: number | undefined
  /** Default 900_000. */
  readonly signedUrlTtlMs?: number | undefined
  /** Per minute per user; default 240/720. */
  readonly rateLimits?: { readonly application: number; readonly client: number } | undefined
  /** Default { limit: 2, periodMs: 600_000 }. */
  readonly backupThrottle?: { readonly limit: number; readonly periodMs: number } | undefined
  /** Default 100. */
  readonly uploadLimitMiB?: number | undefined
  /** Default true; false = a pre-1.8 panel ignoring `filter[server_id]` on allocation lists (§2.11). */
  readonly allocationServerFilter?: boolean | undefined
  /**
   * Keeps the panel across restarts (the sandbox wiring passes its state file): users, nodes, allocations, nests,
   * eggs and servers with their status, running install, files and backups. Servers come back offline; API keys and
   * node secrets are new at every start. Default: none, everything in memory.
   */
  readonly keepState?: KeepState | undefined
  /** Real file bytes (distinct contents) the kept document holds; beyond it, no real file content is kept. 64 MiB. */
  readonly stateFileMaxFileBytes?: number | undefined
  /**
   * The most recent requests the log (the control's `requests()`) keeps; older ones are dropped. Default: all of them
   * (a test's sandbox); the sandbox mode of a running server keeps 10,000, so a sandbox left running for days does not
   * grow without bound.
   */
  readonly requestLogLimit?: number | undefined
  /** Unexpected handler errors, an invalid state file, a failed save. Default: `process.emitWarning`. */
  readonly onWarning?: ((message: string) => void) | undefined
}

/** One simulated panel and its Wings: their two fronts, to serve on ports or reach in memory (Fronts.ts). */
export interface OpenSimulation {
  readonly sim: Sim
  readonly panel: Front
  readonly wings: Front
  readonly applicationKey: string
  readonly clientKey: string
  readonly control: PterodactylControl
}

const rootAdmin = (world: World): User => {
  const admin = [...world.users.values()].sort((a, b) => a.id - b.id).find((u) => u.root_admin)
  // The seed has one, and a kept document without one is refused.
  if (admin === undefined) throw new Error("sandbox Pterodactyl: no root admin user")
  return admin
}

/**
 * The world (seeded, then what `keepState` kept), the two fronts, new keys and the control; when the scope closes,
 * pending work is cancelled and the state keeper closed (after the fronts opened later in the same scope stop).
 */
export const openSimulation = (options: PterodactylSimulationOptions, clock: SimClock): Effect.Effect<OpenSimulation, never, Scope.Scope> =>
  Effect.gen(function*() {
    const world = new World(clock.now)
    seedWorld(world)
    let keeper: StateKeeper | undefined
    const sim: Sim = {
      settings: {
        installDurationMs: options.installDurationMs ?? 3000,
        wingsTokenTtlMs: options.wingsTokenTtlMs ?? 600_000,
        signedUrlTtlMs: options.signedUrlTtlMs ?? 900_000,
        rateLimits: { ...(options.rateLimits ?? { application: 240, client: 720 }) },
        backupThrottle: options.backupThrottle ?? { limit: 2, periodMs: 600_000 },
        uploadLimitMiB: options.uploadLimitMiB ?? 100,
        allocationServerFilter: options.allocationServerFilter ?? true,
        warn: options.onWarning ?? ((message) => process.emitWarning(message, "SandboxPterodactylWarning"))
      },
      world,
      faults: new Faults(),
      limiter: new RateLimiter(),
      tokens: new Tokens(),
      requests: [],
      requestLogLimit: options.requestLogLimit ?? Number.POSITIVE_INFINITY,
      installOutcomes: { default: "succeed", byExternalId: new Map() },
      transfers: { inFlight: 0 },
      panelUrl: "",
      nodeUrl: "",
      clock,
      changed: () => keeper?.changed()
    }
    if (options.keepState !== undefined) {
      keeper = yield* options.keepState(durableWorld(sim, options.stateFileMaxFileBytes ?? DEFAULT_MAX_FILE_BYTES), sim.settings.warn)
    }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        clock.stop()
        for (const server of world.servers.values()) server.console.shutdown()
      })
    )
    // The keys are new at every start (the caller registers them again); they belong to the first root admin.
    const admin = rootAdmin(world)
    const applicationKey = makeKey("application", admin.id)
    const clientKey = makeKey("client", admin.id)
    for (const key of [applicationKey, clientKey]) world.keys.set(key.identifier, key)
    return {
      sim,
      panel: panelApp(sim),
      wings: wingsApp(sim),
      applicationKey: applicationKey.identifier + applicationKey.secret,
      clientKey: clientKey.identifier + clientKey.secret,
      control: makeControl(sim)
    }
  })

// --- without sockets ----------------------------------------------------------------------------------------

/** Hosts that never resolve (RFC 2606): a request leaving the process by mistake fails instead of reaching anything. */
const PANEL_HOST = "panel.pterodactyl.invalid"
const WINGS_HOST = "wings.pterodactyl.invalid"

export interface PterodactylSimulation {
  /** `http://panel.pterodactyl.invalid`: only the simulation's dispatcher reaches it. */
  readonly url: string
  readonly applicationKey: string
  readonly clientKey: string
  readonly control: PterodactylControl
  /** HTTP to the panel and Wings, answered in memory by the same front ends SandboxPterodactyl serves on ports. */
  readonly dispatcher: Dispatcher
  /** The byte stream of a new connection to Wings (for a console WebSocket: `ws`'s `createConnection`). */
  readonly connectWings: () => Duplex
}

/** The simulation reached in memory, its timers on the current Effect Clock; closed with the scope. */
export const pterodactylSimulation = (
  options: PterodactylSimulationOptions = {}
): Effect.Effect<PterodactylSimulation, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clock = yield* effectClock
    const open = yield* openSimulation(options, clock)
    open.sim.panelUrl = `http://${PANEL_HOST}`
    open.sim.nodeUrl = `http://${WINGS_HOST}`
    const connectPanel = yield* serveInMemory(open.panel)
    const connectWings = yield* serveInMemory(open.wings)
    const dispatcher = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Agent({
          connect: (target, callback) => {
            const connect = target.hostname === PANEL_HOST ? connectPanel : target.hostname === WINGS_HOST ? connectWings : undefined
            if (connect === undefined) return callback(new Error(`the simulation serves no ${target.hostname}`), null)
            // undici types its connector's socket as a net.Socket but reads and writes it as the Duplex it is; its
            // callback must come after the connector returns (a synchronous one leaves the request unsent).
            const socket = connect() as Socket
            queueMicrotask(() => callback(null, socket))
          }
        })
      ),
      (agent) => Effect.promise(() => agent.destroy())
    )
    return {
      url: open.sim.panelUrl,
      applicationKey: open.applicationKey,
      clientKey: open.clientKey,
      control: open.control,
      dispatcher,
      connectWings
    } satisfies PterodactylSimulation
  })

/** An HttpClient whose every request (panel or Wings) is answered by the simulation in memory. */
export const httpClientOf = (simulation: PterodactylSimulation): Layer.Layer<HttpClient.HttpClient> =>
  NodeHttpClient.layerUndiciNoDispatcher.pipe(Layer.provide(Layer.succeed(NodeHttpClient.Dispatcher, simulation.dispatcher)))

export class PterodactylSimulationInstance extends Context.Service<PterodactylSimulationInstance, PterodactylSimulation>()(
  "adapters/pterodactyl/PterodactylSimulation"
) {}

/** A layer holding one simulation (in memory) for the lifetime of the layer. */
export const layerPterodactylSimulation = (options: PterodactylSimulationOptions = {}): Layer.Layer<PterodactylSimulationInstance> =>
  Layer.effect(PterodactylSimulationInstance, pterodactylSimulation(options))
