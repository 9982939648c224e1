// What the GamePanel contract drives besides the port (which panel, how and when installs end, files put on a server
// behind the Client API's back), its implementations over the simulated panel (in memory, and on loopback), and a
// multipart body builder.
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as SimulatedGamePanel from "../../adapters/pterodactyl/SimulatedGamePanel.ts"
import * as PterodactylGamePanel from "../../adapters/pterodactyl/PterodactylGamePanel.ts"
import { PterodactylSimulationInstance } from "../../adapters/pterodactyl/sandbox/PterodactylSimulation.ts"
import type { InstallOutcome } from "../../adapters/pterodactyl/sandbox/World.ts"
import { layerSandboxPterodactyl, type PterodactylControl, SandboxPterodactylInstance } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"

export type { InstallOutcome }

export interface GamePanelHarness<R = never> {
  /** The panel's name as the port takes it. */
  readonly panel: string
  /** A Paper egg (map-shaped `docker_images`) and, when the panel has one, an egg with list-shaped images. */
  readonly eggs: { readonly paper: number; readonly listImages: number | null }
  /** How the install of the server made for `orderId` ends; called before the server is created. */
  setInstallOutcome(orderId: string, outcome: InstallOutcome): Effect.Effect<void, unknown, R>
  /** Lets every install started so far report its outcome (those set to hang stay installing). */
  readonly finishInstalls: Effect.Effect<void, unknown, R>
  /** Puts a file on the server's disk as the game (or an SFTP user) would. */
  putFile(uuid: string, path: string, bytes: Uint8Array): Effect.Effect<void, unknown, R>
}

/**
 * The simulated panel through its control, on the live clock: installs take 50 ms, so finishing them is waiting a
 * little longer.
 */
const harnessOver = <R>(control: Effect.Effect<PterodactylControl, never, R>): GamePanelHarness<R> => ({
  panel: "sandbox",
  eggs: { paper: 5, listImages: 6 },
  setInstallOutcome: (orderId, outcome) => Effect.map(control, (c) => c.setInstallOutcome({ externalId: orderId }, outcome)),
  finishInstalls: Effect.sleep("150 millis"),
  putFile: (uuid, path, bytes) => Effect.map(control, (c) => c.putFile(uuid, path, bytes))
})

/** The simulation in memory (no socket). */
export const simulationHarness = () => harnessOver(Effect.map(PterodactylSimulationInstance, (s) => s.control))

/** The simulation on loopback. */
export const sandboxHarness = () => harnessOver(Effect.map(SandboxPterodactylInstance, (s) => s.control))

const encoder = new TextEncoder()

/** A `multipart/form-data` body with one `files` part per file, plus `extra` non-file fields, as a browser sends it. */
export const multipart = (
  files: ReadonlyArray<{ readonly name: string; readonly bytes: Uint8Array }>,
  extra: Readonly<Record<string, string>> = {}
) => {
  const boundary = "----zh-contract-7d1f2a"
  const parts = [
    ...Object.entries(extra).map(([name, value]) =>
      [encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)]
    ),
    ...files.map((f) => [
      encoder.encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${f.name}"\r\n` +
          "Content-Type: application/octet-stream\r\n\r\n"
      ),
      f.bytes,
      encoder.encode("\r\n")
    ]),
    [encoder.encode(`--${boundary}--\r\n`)]
  ].flat()
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  parts.reduce((at, p) => (bytes.set(p, at), at + p.length), 0)
  return { contentType: `multipart/form-data; boundary=${boundary}`, bytes }
}

/** Short deadlines and back-offs for tests on the live clock. */
export const testDeadlines = {
  requestTimeout: "5 seconds",
  retries: 2,
  retryBaseDelay: "10 millis",
  maxRetryAfter: "2 seconds",
  consoleOpenTimeout: "3 seconds",
  uploadTimeout: "5 seconds"
} as const

/** The adapter (with short test deadlines) over the simulation in memory, on the live clock (installs take 50 ms). */
export const simulationPanelLayer = SimulatedGamePanel.layer({ installDurationMs: 50, adapter: testDeadlines })

/** The client (with short test deadlines) wired to a fresh sandbox panel, and the sandbox itself for the harness. */
export const sandboxPanelLayer = Layer.unwrap(Effect.map(SandboxPterodactylInstance, (sandbox) =>
  PterodactylGamePanel.layerWith(testDeadlines).pipe(
    Layer.provide(SimulatedGamePanel.onePanel("sandbox", sandbox)),
    Layer.provide(NodeHttpClient.layerUndici)
  ))).pipe(Layer.provideMerge(layerSandboxPterodactyl({ installDurationMs: 50 })))
