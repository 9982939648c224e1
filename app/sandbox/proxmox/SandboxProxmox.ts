// A simulated Proxmox VE cluster over real HTTP(S) and WebSocket on loopback, faithful to reference/proxmox.md: the
// `npm start` upstream when no cluster is registered, and the counterpart of the Proxmox adapter's tests.
//
// Defaults: nodes `pve1` and `pve2` (16 CPUs, 64 GiB, storage `local-lvm` of 2 TiB each) and cloud-image templates
// 9000 `debian-12` and 9001 `ubuntu-24-04` on pve1, with copies 9100 `debian-12` and 9101 `ubuntu-24-04` on pve2:
// storage is local (a clone cannot cross nodes, §5.9), so every node carries its own template copies.
import { Context, Effect, Layer, type Scope } from "effect"
import { StateFile } from "../StateFile.ts"
import { Auth } from "./Auth.ts"
import { Cluster, type NodeSpec, type TemplateSpec } from "./Cluster.ts"
import { Consoles } from "./Consoles.ts"
import { durableCluster } from "./durableState.ts"
import { Faults } from "./Faults.ts"
import { PveServer } from "./PveServer.ts"
import { makeControl, type SandboxControl } from "./SandboxControl.ts"
import type { Sim } from "./Sim.ts"
import { SimClock } from "./SimClock.ts"
import { Tasks } from "./Tasks.ts"

export type {
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

export interface SandboxProxmoxOptions {
  readonly host?: string // default "127.0.0.1"
  readonly port?: number // default 0 (ephemeral)
  readonly tls?: { readonly cert: string; readonly key: string } // PEM; HTTPS when given, else plain HTTP
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
   * A JSON file that keeps the VMs across restarts (configs, disks, power state, snapshots, guest passwords); read at
   * start when it exists, rewritten atomically (mode 0600) within 200 ms of a change and on close. Running tasks,
   * tickets, console sessions and faults are not kept. An invalid file is moved aside and reported via `onWarning`;
   * the sandbox then starts from its default VMs. Default: none, everything lives in memory.
   */
  readonly stateFile?: string | undefined
  /** Problems with `stateFile` that do not stop the sandbox (an invalid file, a failed save). Default: `process.emitWarning`. */
  readonly onWarning?: ((message: string) => void) | undefined
}

export interface SandboxProxmox {
  readonly url: string // e.g. "http://127.0.0.1:41234" (no path; the API is under /api2/json)
  readonly control: SandboxControl
  close(): Promise<void>
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

export const startSandboxProxmox = async (options: SandboxProxmoxOptions = {}): Promise<SandboxProxmox> => {
  const nodes = options.nodes ?? defaultNodes
  // With custom nodes and no templates given, only the default templates whose node exists are kept.
  const templates = options.templates ?? defaultTemplates.filter((t) => nodes.some((n) => n.name === t.node))
  const clock = new SimClock()
  const timers = new Set<NodeJS.Timeout>()
  const auth = new Auth(clock, {
    username: options.username ?? "root@pam",
    password: options.password ?? "sandbox",
    tokens: options.tokens ?? []
  })
  const cluster = new Cluster(nodes, templates)
  const warn = options.onWarning ?? ((message: string) => process.emitWarning(message, "SandboxProxmoxWarning"))
  const stateFile = options.stateFile === undefined
    ? undefined
    : new StateFile(options.stateFile, durableCluster(cluster), { sandbox: "sandbox PVE", seed: "its default VMs", warn })
  await stateFile?.load()
  const changed = () => stateFile?.changed()
  const tasks = new Tasks(clock, cluster, options.taskDurations ?? {}, timers, changed)
  const sim: Sim = {
    clock,
    auth,
    cluster,
    tasks,
    consoles: new Consoles(clock, auth, cluster, tasks, timers),
    faults: new Faults(),
    requests: [],
    timers,
    authFailureDelayMs: options.authFailureDelayMs ?? 0,
    clusterName: "sandbox",
    changed
  }
  const front = new PveServer(sim, options.tls)
  const host = options.host ?? "127.0.0.1"
  await new Promise<void>((resolve, reject) => {
    front.server.once("error", reject)
    front.server.listen(options.port ?? 0, host, () => {
      front.server.off("error", reject)
      resolve()
    })
  })
  const address = front.server.address()
  if (address === null || typeof address === "string") throw new Error("sandbox PVE: no TCP address after listen")
  const { port } = address
  const urlHost = host.includes(":") ? `[${host}]` : host
  let closed: Promise<void> | undefined
  return {
    url: `${options.tls === undefined ? "http" : "https"}://${urlHost}:${port}`,
    control: makeControl(sim),
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        sim.consoles.close()
        front.server.close(() => resolve())
        front.dropConnections()
      }).then(() => stateFile?.close())
      return closed
    }
  }
}

/** The sandbox as a scoped resource: started on acquire, closed when the scope closes. */
export const sandboxProxmox = (options: SandboxProxmoxOptions = {}): Effect.Effect<SandboxProxmox, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startSandboxProxmox(options)),
    (sandbox) => Effect.promise(() => sandbox.close())
  )

export class SandboxProxmoxInstance extends Context.Service<SandboxProxmoxInstance, SandboxProxmox>()(
  "app/sandbox/SandboxProxmox"
) {}

/** A layer holding one running sandbox for the lifetime of the layer. */
export const layerSandboxProxmox = (options: SandboxProxmoxOptions = {}): Layer.Layer<SandboxProxmoxInstance> =>
  Layer.effect(SandboxProxmoxInstance, sandboxProxmox(options))
