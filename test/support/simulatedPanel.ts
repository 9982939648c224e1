// What domain tests ask of the simulated panel behind the GamePanel port (SimulatedGamePanel): its servers as the
// panel holds them, how many requests an operation sent, and a panel that keeps failing one operation until cleared.
import { type Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import { PterodactylSimulationInstance } from "../../adapters/pterodactyl/sandbox/PterodactylSimulation.ts"

export const panelControl = Effect.map(PterodactylSimulationInstance, (s) => s.control)

export const panelServers = Effect.map(panelControl, (c) => c.servers())

/** Requests the panel received with this method on a path `path` matches (failed ones and retries included). */
export const panelRequests = (method: string, path: RegExp) =>
  Effect.map(panelControl, (c) => c.requests().filter((r) => r.target === "panel" && r.method === method && path.test(r.path)).length)

/** Panel paths of the operations tests count or break. */
export const panelPaths = {
  users: /^\/api\/application\/users$/,
  server: /^\/api\/application\/servers\/\d+$/
} as const

/** Every matching request answers `status` until `clearFaults`. */
export const panelKeepsFailing = (method: string, path: RegExp, status = 502) =>
  Effect.map(panelControl, (c) => c.failNext({ method, path, times: Number.MAX_SAFE_INTEGER, status }))

export const clearPanelFaults = Effect.map(panelControl, (c) => c.clearFaults())

/** A real turn of the event loop: the simulated panel's answers travel over streams, not fibers the TestClock runs. */
export const panelTurn = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 1)))

/**
 * Moves the TestClock `times` steps of `step`, letting calls in flight reach the panel and come back between steps:
 * one big jump would run every sleep due in it before the first answer arrives.
 */
export const advanceWithPanel = (step: Duration.Input, times: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < times; i++) {
      yield* TestClock.adjust(step)
      yield* panelTurn
    }
  })
