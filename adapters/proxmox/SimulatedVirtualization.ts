// The Virtualization of tests that need no network: the Proxmox adapter, unchanged (with whichever ProxmoxVmids the
// caller provides), over the Proxmox VE simulation reached in memory (sandbox/ProxmoxSimulation.ts), with time on the Effect Clock. What
// a test drives besides the port (faults, the guest agent, edits behind our back, the request log, the cluster's
// state) is the simulation's control, provided beside the port as ProxmoxSimulationInstance.
import { Effect, Layer, Redacted } from "effect"
import { ProxmoxClusters } from "../../ports/ProxmoxClusters.ts"
import type { ProxmoxVmids } from "../../ports/ProxmoxVmids.ts"
import { ClusterUnknown, Virtualization } from "../../ports/Virtualization.ts"
import { layerWith, type ProxmoxOptions } from "./ProxmoxVirtualization.ts"
import {
  layerProxmoxSimulation,
  ProxmoxSimulationInstance,
  type ProxmoxSimulationOptions
} from "./sandbox/ProxmoxSimulation.ts"

export interface SimulatedVirtualizationOptions extends ProxmoxSimulationOptions {
  /** The cluster's name as the port takes it (the only one there is). Default "sandbox". */
  readonly cluster?: string
  /** The adapter's own settings (VMID range, timeouts, retries). */
  readonly adapter?: Partial<ProxmoxOptions>
}

const USERNAME = "root@pam"
const PASSWORD = "simulated"

/** Every task ends before its UPID is answered: a domain test waits for no clone, start or snapshot. */
export const instantTasks: Readonly<Record<string, number>> = { default: 0 }

/** ProxmoxClusters knowing one cluster: `name`, the simulation, signed in with the simulation's password. */
const oneCluster = (name: string, url: string): Layer.Layer<ProxmoxClusters> =>
  Layer.succeed(ProxmoxClusters, {
    get: (asked) =>
      asked === name
        ? Effect.succeed({
          name,
          url,
          auth: { kind: "password", username: USERNAME, password: Redacted.make(PASSWORD) },
          tls: { ca: null, fingerprint: null, insecure: false }
        })
        : Effect.fail(new ClusterUnknown({ cluster: asked }))
  })

/** The adapter over the simulation of `options` (a fresh one per build, instant tasks by default) and its control. */
export const layer = (
  options: SimulatedVirtualizationOptions = {}
): Layer.Layer<Virtualization | ProxmoxSimulationInstance, never, ProxmoxVmids> => {
  const { adapter = {}, cluster = "sandbox", ...simulation } = options
  // One attempt per call unless told otherwise: what a domain test observes of a failing cluster is the domain's own
  // retrying, not the adapter's back-off on its clock.
  const overSimulation = Layer.unwrap(Effect.map(ProxmoxSimulationInstance, (sim) =>
    layerWith({ retries: 0, ...adapter, connect: () => sim.agents }).pipe(
      Layer.provide(oneCluster(cluster, sim.url))
    )))
  return overSimulation.pipe(Layer.provideMerge(layerProxmoxSimulation({
    taskDurations: instantTasks,
    ...simulation,
    username: USERNAME,
    password: PASSWORD
  })))
}
