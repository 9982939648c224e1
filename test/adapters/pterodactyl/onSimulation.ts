// The adapter's specifications run on the Pterodactyl simulator (adapters/pterodactyl/sandbox): in memory through
// SimulatedGamePanel (no socket, the simulation's timers on the Effect Clock), the panel named "p1", the adapter's
// deadlines and back-off short enough for a suite. What a test checks on the wire, it reads in the simulation's
// request log; what the panel does wrong, it arms as a fault.
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Logger } from "effect"
import * as SimulatedGamePanel from "../../../adapters/pterodactyl/SimulatedGamePanel.ts"
import { layerWith, type PterodactylOptions } from "../../../adapters/pterodactyl/PterodactylGamePanel.ts"
import {
  type SandboxPterodactyl,
  sandboxPterodactyl,
  type SandboxPterodactylOptions
} from "../../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import {
  type PterodactylSimulation,
  PterodactylSimulationInstance,
  type RecordedRequest
} from "../../../adapters/pterodactyl/sandbox/PterodactylSimulation.ts"
import { GamePanel, type NewServer } from "../../../ports/GamePanel.ts"

/** Fast enough for a suite: 2 retries, short back-off, short deadlines. */
export const testOptions: Partial<PterodactylOptions> = {
  requestTimeout: "2 seconds",
  retries: 2,
  retryBaseDelay: "10 millis",
  maxRetryAfter: "2 seconds",
  consoleOpenTimeout: "3 seconds",
  uploadTimeout: "5 seconds"
}

/** `f` with the adapter (panel "p1") over a fresh simulation in memory, and that simulation. */
export const onSimulation = <A, E>(
  f: (panel: GamePanel["Service"], sim: PterodactylSimulation) => Effect.Effect<A, E>,
  options: { readonly adapter?: Partial<PterodactylOptions>; readonly simulation?: SimulatedGamePanel.SimulatedGamePanelOptions } = {}
) =>
  Effect.gen(function*() {
    const panel = yield* GamePanel
    return yield* f(panel, yield* PterodactylSimulationInstance)
  }).pipe(Effect.provide(SimulatedGamePanel.layer({
    installDurationMs: 0,
    ...options.simulation,
    panel: "p1",
    adapter: { ...testOptions, ...options.adapter }
  })), Effect.provide(Logger.layer([])))

/** The adapter (panel "p1") over real sockets, pointed at `sandbox`; silent. */
export const adapterOver = (sandbox: SandboxPterodactyl, options: Partial<PterodactylOptions> = {}) =>
  Layer.mergeAll(
    layerWith({ ...testOptions, ...options }).pipe(
      Layer.provide(SimulatedGamePanel.onePanel("p1", sandbox)),
      Layer.provide(NodeHttpClient.layerUndici)
    ),
    Logger.layer([])
  )

/** `f` with the adapter over a fresh simulation on loopback ports (for what only a real socket shows), and it. */
export const onLoopback = <A, E>(
  f: (panel: GamePanel["Service"], sandbox: SandboxPterodactyl) => Effect.Effect<A, E>,
  options: { readonly adapter?: Partial<PterodactylOptions>; readonly simulation?: SandboxPterodactylOptions } = {}
) =>
  Effect.gen(function*() {
    const sandbox = yield* sandboxPterodactyl({ installDurationMs: 0, onWarning: () => {}, ...options.simulation })
    return yield* Effect.flatMap(GamePanel, (panel) => f(panel, sandbox)).pipe(Effect.provide(adapterOver(sandbox, options.adapter)))
  }).pipe(Effect.scoped)

/** Recorded requests whose `METHOD /path` starts with `prefix`. */
export const calls = (sim: PterodactylSimulation, prefix = ""): ReadonlyArray<RecordedRequest> =>
  sim.control.requests().filter((r) => `${r.method} ${r.path}`.startsWith(prefix))

/** A server for order `orderId` on the seeded node, its install finished. */
export const aServer = (panel: GamePanel["Service"], orderId = "gs_42") =>
  Effect.gen(function*() {
    const egg = yield* panel.egg("p1", 5)
    const [free] = yield* panel.freeAllocations("p1", 1)
    const spec: NewServer = {
      name: "survival",
      orderId,
      user: 1,
      egg: egg.id,
      dockerImage: Object.values(egg.dockerImages)[0] ?? "",
      startup: egg.startup,
      environment: Object.fromEntries(egg.variables.map((v) => [v.envVariable, v.defaultValue])),
      limits: { memoryMiB: 1024, swapMiB: 0, diskMiB: 3072, io: 500, cpuPercent: 100 },
      oomDisabled: true,
      featureLimits: { databases: 0, backups: 2, allocations: 1 },
      allocation: free?.id ?? 0,
      startOnCompletion: false
    }
    return yield* panel.createServer("p1", spec)
  })
