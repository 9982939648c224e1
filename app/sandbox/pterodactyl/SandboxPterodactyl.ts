// A simulated Pterodactyl panel 1.11.8 and its Wings 1.11.11 over real HTTP and WebSocket on loopback, faithful to
// reference/pterodactyl.md: the `npm start` game panel when none is registered, and the upstream of the Pterodactyl
// adapter's tests and of the end-to-end tests. Every node is served by the one Wings listener at `nodeUrl`.
import { Context, Effect, Layer, type Scope } from "effect"
import type { Server as HttpServer } from "node:http"
import { StateFile } from "../StateFile.ts"
import { DEFAULT_MAX_FILE_BYTES, durableWorld } from "./durableState.ts"
import { Faults, RateLimiter } from "./Faults.ts"
import { PanelServer } from "./PanelServer.ts"
import { makeControl, type PterodactylControl } from "./PterodactylControl.ts"
import type { Sim } from "./Sim.ts"
import { Tokens } from "./Tokens.ts"
import { WingsServer } from "./WingsServer.ts"
import { makeKey, seedWorld, type User, World } from "./World.ts"

export type {
  FailSpec,
  IssuedToken,
  NodeSpec,
  PterodactylControl,
  RecordedRequest,
  SandboxServerState,
  ThrottleSpec
} from "./PterodactylControl.ts"

export interface SandboxPterodactylOptions {
  readonly host?: string // default "127.0.0.1"
  readonly installDurationMs?: number // how long an install takes; default 3000; 0 = finished on the next status read
  readonly wingsTokenTtlMs?: number // console JWT lifetime, default 600_000; `token expiring` when <= 60 s left
  readonly signedUrlTtlMs?: number // default 900_000
  readonly rateLimits?: { readonly application: number; readonly client: number } // per minute per user; default 240/720
  readonly backupThrottle?: { readonly limit: number; readonly periodMs: number } // default { limit: 2, periodMs: 600_000 }
  readonly uploadLimitMiB?: number // default 100
  /**
   * A JSON file that keeps the panel across restarts: users, nodes, allocations, nests, eggs and servers with their
   * status, running install, files and backups. Read at start when it exists, rewritten atomically (mode 0600) within
   * 200 ms of a change and on close. Servers come back offline; API keys and node secrets are new at every start. An
   * invalid file is moved aside and reported via `onWarning`; the sandbox then starts from its seed. Default: none.
   */
  readonly stateFile?: string | undefined
  /** Real file bytes (distinct contents) the state file keeps; beyond it, no real file content is saved. Default 64 MiB. */
  readonly stateFileMaxFileBytes?: number | undefined
  /** Unexpected handler errors, an invalid state file, a failed save. Default: `process.emitWarning`. */
  readonly onWarning?: ((message: string) => void) | undefined
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

const rootAdmin = (world: World): User => {
  const admin = [...world.users.values()].sort((a, b) => a.id - b.id).find((u) => u.root_admin)
  // The seed has one, and a state file without one is refused.
  if (admin === undefined) throw new Error("sandbox Pterodactyl: no root admin user")
  return admin
}

export const startSandboxPterodactyl = async (
  options: SandboxPterodactylOptions = {}
): Promise<SandboxPterodactyl & { close(): Promise<void> }> => {
  const timers = new Set<NodeJS.Timeout>()
  const world = new World()
  seedWorld(world)
  let stateFile: StateFile | undefined
  const sim: Sim = {
    settings: {
      installDurationMs: options.installDurationMs ?? 3000,
      wingsTokenTtlMs: options.wingsTokenTtlMs ?? 600_000,
      signedUrlTtlMs: options.signedUrlTtlMs ?? 900_000,
      rateLimits: { ...(options.rateLimits ?? { application: 240, client: 720 }) },
      backupThrottle: options.backupThrottle ?? { limit: 2, periodMs: 600_000 },
      uploadLimitMiB: options.uploadLimitMiB ?? 100,
      warn: options.onWarning ?? ((message) => process.emitWarning(message, "SandboxPterodactylWarning"))
    },
    world,
    faults: new Faults(),
    limiter: new RateLimiter(),
    tokens: new Tokens(),
    requests: [],
    installOutcomes: { default: "succeed", byExternalId: new Map() },
    transfers: { inFlight: 0 },
    panelUrl: "",
    nodeUrl: "",
    later: (ms, f) => {
      const timer = setTimeout(() => {
        timers.delete(timer)
        f()
      }, ms)
      timers.add(timer)
      return timer
    },
    cancel: (timer) => {
      clearTimeout(timer)
      timers.delete(timer)
    },
    changed: () => stateFile?.changed()
  }
  if (options.stateFile !== undefined) {
    const source = durableWorld(sim, options.stateFileMaxFileBytes ?? DEFAULT_MAX_FILE_BYTES)
    const messages = { sandbox: "sandbox Pterodactyl", seed: "its seed", warn: sim.settings.warn }
    stateFile = new StateFile(options.stateFile, source, messages)
    await stateFile.load()
  }
  const host = options.host ?? "127.0.0.1"
  const urlHost = host.includes(":") ? `[${host}]` : host
  const panel = new PanelServer(sim)
  const wings = new WingsServer(sim)
  sim.panelUrl = `http://${urlHost}:${await listen(panel.server, host)}`
  sim.nodeUrl = `http://${urlHost}:${await listen(wings.server, host)}`
  // The keys are new at every start (the caller registers them again); they belong to the first root admin.
  const admin = rootAdmin(world)
  const applicationKey = makeKey("application", admin.id)
  const clientKey = makeKey("client", admin.id)
  for (const key of [applicationKey, clientKey]) world.keys.set(key.identifier, key)
  let closed: Promise<void> | undefined
  return {
    url: sim.panelUrl,
    nodeUrl: sim.nodeUrl,
    applicationKey: applicationKey.identifier + applicationKey.secret,
    clientKey: clientKey.identifier + clientKey.secret,
    control: makeControl(sim),
    close: () => {
      closed ??= (async () => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        for (const server of world.servers.values()) server.console.shutdown()
        await Promise.all([panel.close(), wings.close()])
        await stateFile?.close()
      })()
      return closed
    }
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
