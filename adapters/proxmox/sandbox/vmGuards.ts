// The checks qemu-server repeats across calls: config locks, root-only parameters, "running" as `check_running` sees it.
import type { Identity } from "./Auth.ts"
import { type Cluster, lockOf, type Vm } from "./Cluster.ts"
import { configNotOnNode, fail, locked, paramError, TaskError } from "./PveError.ts"
import type { Params } from "./Route.ts"

/** `check_lock`: a VM holding a config lock refuses other writes. */
export const assertUnlocked = (vm: Vm, inTask = false): void => {
  const lock = lockOf(vm)
  if (lock === undefined) return
  if (inTask) throw new TaskError(locked(lock))
  throw fail(locked(lock))
}

/** Parameters only `root@pam` may set (`skiplock`, `keepActive`, migration internals). */
export const rootOnly = (identity: Identity | null, params: Params, names: ReadonlyArray<string>): void => {
  if (identity?.user === "root@pam") return
  const errors: Record<string, string> = {}
  for (const name of names) {
    const value = params.str(name)
    if (value !== undefined && value !== "" && value !== "0") errors[name] = "Only root may use this option."
  }
  if (Object.keys(errors).length > 0) throw paramError(errors)
}

/** `check_running($vmid)` on `node`: the config must be there (else its own message), then the power state. */
export const runningOn = (cluster: Cluster, node: string, vmid: number, inTask = false): { vm: Vm; running: boolean } => {
  const vm = cluster.vms.get(vmid)
  if (vm === undefined || vm.node !== node) {
    if (inTask) throw new TaskError(configNotOnNode(node, vmid))
    throw fail(configNotOnNode(node, vmid))
  }
  return { vm, running: vm.status === "running" }
}

/** `load_config` inside a worker: a missing VM fails the task rather than the call. */
export const vmInTask = (cluster: Cluster, node: string, vmid: number): Vm => {
  try {
    return cluster.vmOn(node, vmid)
  } catch (e) {
    throw new TaskError(e instanceof Error ? e.message : String(e))
  }
}
