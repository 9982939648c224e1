// The simulated Proxmox VE 9 cluster (reference/proxmox.md), one state for both ways of reaching it (DESIGN.md §7: the
// fake is the simulator without sockets). `openSimulation` builds the cluster, its HTTP(S)/WebSocket front end and the
// control surface, for the lifetime of a scope; `proxmoxSimulation` connects to them in memory (node:http agents whose connections are stream
// pairs, no port, no OS socket, time on the Effect Clock) and SandboxProxmox.ts puts the same front end on a loopback
// port.
//
// Defaults: nodes `pve1` and `pve2` (16 CPUs, 64 GiB, storage `local-lvm` of 2 TiB each) and cloud-image templates
// 9000 `debian-12` and 9001 `ubuntu-24-04` on pve1, with copies 9100 `debian-12` and 9101 `ubuntu-24-04` on pve2:
// storage is local (a clone cannot cross nodes, §5.9), so every node carries its own template copies.
import { Context, Effect, Layer, type Scope } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import type { Socket } from "node:net"
import { type Duplex, duplexPair } from "node:stream"
import { Auth } from "./Auth.ts"
import { Cluster, type NodeSpec, type TemplateSpec } from "./Cluster.ts"
import { Consoles } from "./Consoles.ts"
import { durableCluster, type KeepState } from "./durableState.ts"
import { Faults } from "./Faults.ts"
import { servePve } from "./PveServer.ts"
import { makeControl, type SandboxControl } from "./SandboxControl.ts"
import type { Sim } from "./Sim.ts"
import { effectClock, type SimClock } from "./SimClock.ts"
import { Tasks } from "./Tasks.ts"

export type { KeepState, StateKeeper, StateSource } from "./durableState.ts"
export type {
  PlacedVm,
  RecordedRequest,
  SandboxControl,
  SandboxFault,
  SandboxFaultKind,
  SandboxNodeState,
  SandboxSnapshotState,
  SandboxState,
  SandboxTaskState,
  SandboxVmState
} from "./SandboxControl.ts"

export interface ProxmoxSimulationOptions {
  readonly username?: string // default "root@pam"
  readonly password?: string // default "sandbox"
  readonly tokens?: ReadonlyArray<{ readonly id: string; readonly secret: string }> // e.g. { id: "root@pam!zh", secret: "…" }
  /** Simulated task durations in ms (0 = immediate) by task type: qmclone, qmconfig, resize, qmstart, qmstop, qmshutdown, qmreset, qmsnapshot, qmdelsnapshot, qmdestroy; `default` for the rest. Default: realistic-ish small values (e.g. clone 1500, others 200–500). */
  readonly taskDurations?: Partial<Record<string, number>>
  readonly nodes?: ReadonlyArray<{ readonly name: string; readonly cpus: number; readonly memoryBytes: number; readonly storage: ReadonlyArray<{ readonly id: string; readonly totalBytes: number }> }>
  readonly templates?: ReadonlyArray<{ readonly vmid: number; readonly node: string; readonly name: string; readonly diskBytes: number }>
  /** Delay before every 401 answer; PVE waits about 3 s (§1.1). Default 0. */
  readonly authFailureDelayMs?: number
  /**
   * Keeps the VMs across restarts (configs, disks, power state, snapshots, guest passwords): the sandbox wiring passes
   * its state file. Running tasks, tickets, console sessions and faults are not kept. Default: none, everything in
   * memory.
   */
  readonly keepState?: KeepState | undefined
  /**
   * The most recent requests the log (the control's `requests()`) keeps; older ones are dropped. Default: all of them
   * (a test's sandbox); the sandbox mode of a running server keeps 10,000, so a sandbox left running for days does not
   * grow without bound.
   */
  readonly requestLogLimit?: number | undefined
  /** Problems with the kept state that do not stop the sandbox (an invalid file, a failed save). Default: `process.emitWarning`. */
  readonly onWarning?: ((message: string) => void) | undefined
}

/** One simulated cluster and the node server its front answers on (not listening: the caller listens or connects). */
export interface OpenSimulation {
  readonly sim: Sim
  readonly server: Http.Server
  readonly control: SandboxControl
}

const GiB = 1024 ** 3
const TiB = 1024 ** 4

export const defaultNodes: ReadonlyArray<NodeSpec> = ["pve1", "pve2"].map((name) => ({
  name,
  cpus: 16,
  memoryBytes: 64 * GiB,
  storage: [{ id: "local-lvm", totalBytes: 2 * TiB }]
}))

export const defaultTemplates: ReadonlyArray<TemplateSpec> = [
  { vmid: 9000, node: "pve1", name: "debian-12", diskBytes: 10 * GiB },
  { vmid: 9001, node: "pve1", name: "ubuntu-24-04", diskBytes: 10 * GiB },
  { vmid: 9100, node: "pve2", name: "debian-12", diskBytes: 10 * GiB },
  { vmid: 9101, node: "pve2", name: "ubuntu-24-04", diskBytes: 10 * GiB }
]

/**
 * The cluster (seeded, then what `keepState` kept), its front end (HTTPS when `tls` is given) and the control, for the
 * scope's lifetime. Closing stops the clock and the consoles, the server and its connections, then saves the state.
 * A state file that exists but cannot be read is a defect: nothing overwrites it.
 */
export const openSimulation = (
  options: ProxmoxSimulationOptions,
  clock: SimClock,
  tls?: { readonly cert: string; readonly key: string }
): Effect.Effect<OpenSimulation, never, Scope.Scope> =>
  Effect.gen(function*() {
    const nodes = options.nodes ?? defaultNodes
    // With custom nodes and no templates given, only the default templates whose node exists are kept.
    const templates = options.templates ?? defaultTemplates.filter((t) => nodes.some((n) => n.name === t.node))
    const auth = new Auth(clock, {
      username: options.username ?? "root@pam",
      password: options.password ?? "sandbox",
      tokens: options.tokens ?? []
    })
    const cluster = new Cluster(nodes, templates)
    const warn = options.onWarning ?? ((message: string) => process.emitWarning(message, "SandboxProxmoxWarning"))
    const keeper = options.keepState === undefined ? undefined : yield* options.keepState(durableCluster(cluster), warn)
    const changed = () => keeper?.changed()
    const tasks = new Tasks(clock, cluster, options.taskDurations ?? {}, changed)
    const sim: Sim = {
      clock,
      auth,
      cluster,
      tasks,
      consoles: new Consoles(clock, auth, cluster, tasks),
      faults: new Faults((vmid) => cluster.vms.has(vmid)),
      requests: [],
      requestLogLimit: options.requestLogLimit ?? Number.POSITIVE_INFINITY,
      authFailureDelayMs: options.authFailureDelayMs ?? 0,
      clusterName: "sandbox",
      changed
    }
    const server = tls === undefined ? Http.createServer() : Https.createServer({ cert: tls.cert, key: tls.key })
    yield* servePve(sim, server)
    // Registered last, so run first: no task or console timer fires while the server closes.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        clock.stop()
        sim.consoles.close()
      })
    )
    return { sim, server, control: makeControl(sim) }
  })

// --- without sockets ----------------------------------------------------------------------------------------

/** A host that never resolves (RFC 2606): a request leaving the process by mistake fails instead of reaching anything. */
const PVE_HOST = "pve.proxmox.invalid"

export interface ProxmoxSimulation {
  /** `http://pve.proxmox.invalid`: only the simulation's agents reach it. */
  readonly url: string
  readonly control: SandboxControl
  /**
   * node:http agents (what the Proxmox adapter's HTTP client and console WebSocket connect through) whose every
   * connection is answered in memory by the same front end SandboxProxmox serves on a port.
   */
  readonly agents: { readonly http: Http.Agent; readonly https: Https.Agent }
}

/**
 * A connection `server` handles as if it had accepted it from a listener: one end of a stream pair. A destroyed end
 * (the server terminating a console, the agent dropping a connection) closes the other, as a TCP reset would.
 */
const connectTo = (server: Http.Server): Duplex => {
  const [client, served] = duplexPair()
  client.once("close", () => served.destroy())
  served.once("close", () => client.destroy())
  server.emit("connection", served)
  return client
}

/**
 * The client end as node:http's agent and client use a socket: a stream pair has no event-loop handle to (un)ref, no
 * TCP options and no idle timer (the adapter bounds every call with its own timeout), so those are no-ops.
 */
const asSocket = (stream: Duplex): Socket => {
  const itself = () => stream
  Object.assign(stream, { ref: itself, unref: itself, setKeepAlive: itself, setNoDelay: itself, setTimeout: itself })
  // node:http reads the connection only through what a Duplex has and the methods above.
  return stream as Socket
}

/** An agent whose connections go to `server` in memory, whatever host they name. */
class InMemoryAgent extends Http.Agent {
  readonly #server: Http.Server
  constructor(server: Http.Server) {
    super({ keepAlive: true })
    this.#server = server
  }
  override createConnection(
    options: Http.ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void
  ): Duplex | null | undefined {
    const host = options.hostname ?? options.host
    if (host !== PVE_HOST) {
      callback?.(new Error(`the simulation serves no ${host ?? "host"}`), connectTo(this.#server))
      return undefined
    }
    return asSocket(connectTo(this.#server))
  }
}

/** The simulation reached in memory, its timers on the current Effect Clock; closed with the scope. */
export const proxmoxSimulation = (
  options: ProxmoxSimulationOptions = {}
): Effect.Effect<ProxmoxSimulation, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clock = yield* effectClock
    const open = yield* openSimulation(options, clock)
    const http = yield* Effect.acquireRelease(
      Effect.sync(() => new InMemoryAgent(open.server)),
      (agent) => Effect.sync(() => agent.destroy())
    )
    // The simulation speaks plain HTTP: an https URL goes to `.invalid` through an ordinary agent, and fails.
    const https = yield* Effect.acquireRelease(Effect.sync(() => new Https.Agent()), (agent) => Effect.sync(() => agent.destroy()))
    return { url: `http://${PVE_HOST}`, control: open.control, agents: { http, https } } satisfies ProxmoxSimulation
  })

export class ProxmoxSimulationInstance extends Context.Service<ProxmoxSimulationInstance, ProxmoxSimulation>()(
  "adapters/proxmox/ProxmoxSimulation"
) {}

/** A layer holding one simulation (in memory) for the lifetime of the layer. */
export const layerProxmoxSimulation = (options: ProxmoxSimulationOptions = {}): Layer.Layer<ProxmoxSimulationInstance> =>
  Layer.effect(ProxmoxSimulationInstance, proxmoxSimulation(options))
