// What of the simulated cluster survives a restart (the `keepState` option): every VM with its config, power state,
// snapshots and the guest's accounts, as a versioned JSON document. Storage use and committed capacity are derived
// from the VMs' drives, so they come back with them. Tickets, tasks, console sessions and faults are not durable.
import { type Effect, Result, Schema, type Scope } from "effect"
import { type Cluster, lockOf, newGuest, type Vm } from "./Cluster.ts"
import { decodeDocument } from "./durable.ts"

/** What a state keeper (the sandbox wiring's file) saves and puts back: the cluster as a document. */
export interface StateSource {
  /** Equal states give equal text: an unchanged document need not be written again. */
  encode(): string
  /** Applies a saved document (the text taken as on disk from then on), or says what is wrong with it. */
  restore(text: string): Result.Result<string, string>
}

/**
 * Keeps the document somewhere (a file in sandbox mode), opened for a scope by the `keepState` option: loaded when
 * opened, saved after `changed()` and when the scope closes.
 */
export interface StateKeeper {
  changed(): void
}

/** The `keepState` option: opens a keeper over the document for the current scope. */
export type KeepState = (source: StateSource, warn: (message: string) => void) => Effect.Effect<StateKeeper, never, Scope.Scope>

const FORMAT = "sandbox-proxmox-state"

const ConfigDoc = Schema.Record(Schema.String, Schema.String)

const SnapshotDoc = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  snaptime: Schema.Int,
  vmstate: Schema.Boolean,
  parent: Schema.NullOr(Schema.String),
  config: ConfigDoc
})

const VmDoc = Schema.Struct({
  vmid: Schema.Int.check(Schema.isBetween({ minimum: 100, maximum: 999_999_999 })),
  node: Schema.String,
  status: Schema.Literals(["running", "stopped"]),
  /** Simulated ms of the last start: uptime goes on across a restart, as the guests did not stop. */
  startedAt: Schema.NullOr(Schema.Finite),
  imageUser: Schema.String,
  /** Every key as stored: `cipassword` in clear, `sshkeys` percent-encoded, drives with their `size=`. */
  config: ConfigDoc,
  snapshots: Schema.Array(SnapshotDoc),
  guest: Schema.Struct({
    hostname: Schema.String,
    /** What cloud-init, `chpasswd` and `set-user-password` left, by user. */
    passwords: Schema.Record(Schema.String, Schema.String)
  })
})

const StateDoc = Schema.Struct({
  format: Schema.Literal(FORMAT),
  version: Schema.Literal(1),
  vms: Schema.Array(VmDoc)
})

type VmDoc = typeof VmDoc.Type
export type DurableState = typeof StateDoc.Type

/**
 * A running worker's config lock at save time. The restart loses the task, so the VM is saved as the task leaves it
 * where that is certain, else as if it had not run: a clone has its whole config from the moment its task begins
 * (finishing only unlocks it), and a destroy holding `destroyed` has passed every check (the VM is left out);
 * `snapshot` and `snapshot-delete` are dropped with the snapshot list as before the task. Other locks are saved.
 */
const settledLock = (lock: string | undefined): "keep" | "unlock" | "gone" =>
  lock === "destroyed" ? "gone" : lock === "clone" || lock === "snapshot" || lock === "snapshot-delete" ? "unlock" : "keep"

const vmDoc = (vm: Vm): VmDoc | undefined => {
  const settled = settledLock(lockOf(vm))
  if (settled === "gone") return undefined
  return {
    vmid: vm.vmid,
    node: vm.node,
    status: vm.status,
    startedAt: vm.startedAt,
    imageUser: vm.imageUser,
    config: Object.fromEntries([...vm.config].filter(([key]) => !(key === "lock" && settled === "unlock"))),
    snapshots: vm.snapshots.map((s) => ({
      name: s.name,
      description: s.description,
      snaptime: s.snaptime,
      vmstate: s.vmstate,
      parent: s.parent ?? null,
      config: Object.fromEntries(s.config)
    })),
    guest: { hostname: vm.guest.hostname, passwords: Object.fromEntries(vm.guest.passwords) }
  }
}

/** The document for the cluster as it is now, VMs by VMID; equal states give equal text. */
export const encodeDurableState = (cluster: Cluster): string => {
  const vms = [...cluster.vms.values()].sort((a, b) => a.vmid - b.vmid).flatMap((vm) => vmDoc(vm) ?? [])
  const state: DurableState = { format: FORMAT, version: 1, vms }
  return `${JSON.stringify(state, null, 2)}\n`
}

/** What the schema cannot say: VMIDs and snapshot names are unique, and every VM is on a node this sandbox has. */
const consistencyProblems = (state: DurableState, nodes: ReadonlySet<string>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const seen = new Set<number>()
  for (const vm of state.vms) {
    if (seen.has(vm.vmid)) problems.push(`VM ${vm.vmid} appears twice`)
    seen.add(vm.vmid)
    if (!nodes.has(vm.node)) problems.push(`VM ${vm.vmid} is on node '${vm.node}', which this sandbox does not have`)
    const names = vm.snapshots.map((s) => s.name)
    if (new Set(names).size !== names.length) problems.push(`VM ${vm.vmid} has two snapshots with the same name`)
  }
  return problems
}

/** Parses and checks a state file's text; the failure lists what is wrong, for the warning. */
export const decodeDurableState = (text: string, nodes: ReadonlySet<string>): Result.Result<DurableState, string> => {
  const decoded = decodeDocument(StateDoc, text)
  if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
  const problems = consistencyProblems(decoded.success, nodes)
  return problems.length === 0 ? Result.succeed(decoded.success) : Result.fail(problems.join("; "))
}

const toVm = (doc: VmDoc): Vm => {
  const guest = newGuest(doc.guest.hostname)
  for (const [user, password] of Object.entries(doc.guest.passwords)) guest.passwords.set(user, password)
  return {
    vmid: doc.vmid,
    node: doc.node,
    config: new Map(Object.entries(doc.config)),
    status: doc.status,
    startedAt: doc.status === "running" ? doc.startedAt : null,
    snapshots: doc.snapshots.map((s) => ({
      name: s.name,
      description: s.description,
      snaptime: s.snaptime,
      vmstate: s.vmstate,
      parent: s.parent ?? undefined,
      config: new Map(Object.entries(s.config))
    })),
    imageUser: doc.imageUser,
    guest,
    agentHeldDown: false
  }
}

/**
 * Puts the saved VMs into a freshly seeded cluster. A saved VM replaces the seed with its VMID; seeded templates the
 * file lacks stay, so a template added to the defaults appears in an older file (and a destroyed one comes back).
 */
export const restoreDurableState = (cluster: Cluster, state: DurableState): void => {
  for (const doc of state.vms) cluster.vms.set(doc.vmid, toVm(doc))
}

/**
 * The cluster as the state file sees it. A restored file counts as the cluster's own document (seeded templates
 * added), so a change that changes nothing durable after the load writes nothing.
 */
export const durableCluster = (cluster: Cluster): StateSource => ({
  encode: () => encodeDurableState(cluster),
  restore: (text) => {
    const decoded = decodeDurableState(text, new Set(cluster.nodes.keys()))
    if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
    restoreDurableState(cluster, decoded.success)
    return Result.succeed(encodeDurableState(cluster))
  }
})
