// In-memory Virtualization: a seeded cluster (nodes, storages, templates) that answers as Proxmox answers the real
// adapter (reference/proxmox.md §3), with a simulated guest behind the agent and the serial console, and a
// MemoryCluster control surface (seed, VM snapshots, injected faults, call counts) for domain tests.
import { type Cause, Clock, Context, Effect, Layer, Queue, Redacted, Ref, Stream, SynchronizedRef } from "effect"
import {
  type CloudInit, ClusterUnknown, ConsoleClosed, GuestAgentUnavailable, type GuestCommandResult, type SerialConsole,
  type MachineCreation, NoMachineIdFree, type Snapshot, TaskFailed, Virtualization, VmNotFound, VmNotOurs, type VmRef,
  type VmSummary
} from "../../ports/Virtualization.ts"

export interface NodeSeed {
  readonly name: string
  readonly cpus: number
  readonly memoryBytes: number
  readonly online?: boolean
  /** Storages the node sees, and what they already hold besides the seeded templates' disks. */
  readonly storages: Readonly<Record<string, { readonly totalBytes: number; readonly usedBytes?: number }>>
}

export interface TemplateSeed extends Pick<VmSummary, "vmid" | "node" | "name" | "cpus" | "memoryBytes" | "diskBytes"> {
  readonly storage: string
  /** `agent: 1` in the template's config, inherited by its clones (default true). */
  readonly agent?: boolean
  /** `serial0: socket` in the template's config (default false: `configure` adds it). */
  readonly serialConsole?: boolean
}

export interface ClusterSeed {
  readonly name: string
  readonly nodes: ReadonlyArray<NodeSeed>
  readonly templates: ReadonlyArray<TemplateSeed>
}
export interface Options {
  readonly clusters: ReadonlyArray<ClusterSeed>
  /** The ids new machines get, lowest free first (100000–199999 by default, as the application's range). */
  readonly machineIds?: { readonly from: number; readonly to: number }
}

const defaultMachineIds = { from: 100_000, to: 200_000 }

/** A VM as the fake holds it: its summary, the parts of its config that matter, and its guest. */
export interface MemoryVm extends Omit<VmSummary, "busy" | "managed"> {
  /** The operation holding the VM (`clone`, `snapshot`, …), as Proxmox names it; the port says only `busy`. */
  readonly lock: string | null
  /**
   * The order our stamp on the VM's own record names (PVE: the description a clone is given, then the tags too).
   * `stamp` (from VmSummary) is what the cluster's listing shows: the tags, written by `configure` only.
   */
  readonly ownStamp: string | null
  readonly storage: string
  /** Started when its node boots (`configure` turns it on, a lapse off). */
  readonly onBoot: boolean
  readonly agentEnabled: boolean
  /** Whether the guest runs its agent; it answers only while the VM runs with the agent enabled. */
  readonly agentRunning: boolean
  readonly serialConsole: boolean
  /** What `configure` / `setCloudInitPassword` wrote; the guest applies it at its next start (§5.7). */
  readonly cloudInit: Pick<CloudInit, "user" | "hostname" | "password"> | null
  /** The guest as of its last boot: host name and accounts (user → password; null = no password login). */
  readonly hostname: string
  readonly guestUsers: ReadonlyMap<string, string | null>
  readonly snapshots: ReadonlyArray<Snapshot>
}

type Port = Virtualization["Service"]
export type Operation = keyof Port
export type OperationError<Op extends Operation> = Effect.Error<ReturnType<Port[Op]>>
type Faults = {
  readonly [Op in Operation]?: { readonly next: ReadonlyArray<OperationError<Op>>; readonly always?: OperationError<Op> }
}

export class MemoryCluster extends Context.Service<MemoryCluster, {
  readonly seed: Options
  readonly vms: Effect.Effect<ReadonlyArray<MemoryVm>>
  /** The next call of `operation` fails with `error` before doing anything; queued (twice = the next two). */
  failNext<Op extends Operation>(operation: Op, error: OperationError<Op>): Effect.Effect<void>
  /** Every call of `operation` fails with `error` until `clearFaults` (queued `failNext` faults come first). */
  failAlways<Op extends Operation>(operation: Op, error: OperationError<Op>): Effect.Effect<void>
  readonly clearFaults: Effect.Effect<void>
  setAgentRunning(vm: VmRef, running: boolean): Effect.Effect<void, VmNotFound | ClusterUnknown>
  /** The VM is migrated to `node` (HA, an operator): found there from now on, as missing on its old node. */
  migrate(vm: VmRef, node: string): Effect.Effect<void, VmNotFound | ClusterUnknown>
  /**
   * A VM made outside our provisioning (by hand, another tool, an earlier run) appears at `vm`; `stamp` is what its own
   * record names (as a clone's description does; the listing shows none), none by default.
   */
  place(
    vm: Pick<MemoryVm, "cluster" | "node" | "vmid" | "name" | "status" | "cpus" | "memoryBytes" | "diskBytes">,
    stamp?: string
  ): Effect.Effect<void, TaskFailed | ClusterUnknown>
  /** Someone outside our control re-marks the VM (null: wipes our stamp), as when its VMID is reused. */
  restamp(vm: VmRef, stamp: string | null): Effect.Effect<void, VmNotFound | ClusterUnknown>
  /** How many times `operation` was called, failed calls included. */
  calls(operation: Operation): Effect.Effect<number>
}>()("zh/fake/MemoryCluster") {}

type NodeState = Required<Omit<NodeSeed, "storages">> & { readonly cluster: string }
interface StorageState { readonly totalBytes: number; readonly usedBytes: number }
/** One console client's terminal: the login dialogue's step, the line being typed, the size, why it closed. */
interface Session {
  readonly phase: "login" | "password" | "shell"
  readonly user: string
  readonly line: string
  readonly lastCR: boolean
  readonly columns: number
  readonly rows: number
  readonly closed: string | null
}
interface ConsoleHandle {
  readonly output: Queue.Queue<Uint8Array, ConsoleClosed | Cause.Done>
  readonly session: Ref.Ref<Session>
}
interface State {
  readonly nodes: ReadonlyArray<NodeState>
  readonly storages: ReadonlyMap<string, StorageState>
  readonly vms: ReadonlyMap<string, MemoryVm>
  readonly consoles: ReadonlyMap<string, ReadonlyArray<ConsoleHandle>>
}

const MiB = 1024 ** 2
const GiB = 1024 ** 3
const vmKey = (cluster: string, vmid: number) => `${cluster}/${vmid}`
const storageKey = (cluster: string, node: string, storage: string) => `${cluster}/${node}/${storage}`
/** Exit status and log lines as a failed PVE task reports them (§2.3). */
const taskFailed = (operation: string, exitStatus: string) =>
  new TaskFailed({ operation, exitStatus, log: [exitStatus, `TASK ERROR: ${exitStatus}`] })
/** VM names are DNS names (§3.4): no underscores. */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i
/** pve-configid `[a-z][a-z0-9_-]+`, case-insensitive, at most 40 characters (§3.8); `current` is reserved. */
const SNAPSHOT_NAME = /^[a-z][a-z0-9_-]{1,39}$/i
const encoder = new TextEncoder()
const freshGuest = (hostname: string) =>
  ({ cloudInit: null, hostname, guestUsers: new Map([["root", null]]), snapshots: [] }) as const
const summary = (range: { readonly from: number; readonly to: number }) =>
({ cluster, cpus, createdFor, diskBytes, lock, memoryBytes, name, node, stamp, status, template, vmid }: MemoryVm) =>
  ({
    cluster, node, vmid, name, stamp, createdFor, managed: vmid >= range.from && vmid < range.to, status, template,
    busy: lock !== null, cpus, memoryBytes, diskBytes
  }) satisfies VmSummary

/** The few programs of the simulated guest, shared by the agent and the console's shell. */
const runProgram = (vm: MemoryVm, user: string, argv: ReadonlyArray<string>, input = ""): GuestCommandResult => {
  const out = (stdout: string, exitCode = 0, stderr = "") => ({ exitCode, stdout, stderr })
  const programs: Record<string, () => GuestCommandResult> = {
    echo: () => out(`${argv.slice(1).join(" ")}\n`),
    cat: () => out(input),
    hostname: () => out(`${vm.hostname}\n`),
    whoami: () => out(`${user}\n`),
    "cloud-init": () => argv[1] === "status" ? out("status: done\n") : out("", 2, "usage: cloud-init status\n")
  }
  const program = programs[argv[0] ?? ""]
  return program === undefined ? out("", 127, `${argv[0] ?? ""}: command not found\n`) : program()
}

const loginPrompt = (vm: MemoryVm) => `${vm.hostname} login: `
const shellPrompt = (vm: MemoryVm, user: string) => `${user}@${vm.hostname}:~${user === "root" ? "#" : "$"} `
const loggedOut = (s: Session): Session => ({ ...s, phase: "login", user: "", line: "" })

/** Enter at the end of a line, answered as getty, login and a shell would. */
const enter = (s: Session, vm: MemoryVm): readonly [Session, string] => {
  const next = { ...s, line: "" }
  if (s.phase === "login") {
    if (s.line === "") return [next, `\r\n${loginPrompt(vm)}`]
    return [{ ...next, phase: "password", user: s.line }, "\r\nPassword: "]
  }
  if (s.phase === "password") {
    const expected = vm.guestUsers.get(s.user)
    return typeof expected === "string" && expected === s.line
      ? [{ ...next, phase: "shell" }, `\r\n${shellPrompt(vm, s.user)}`]
      : [loggedOut(s), `\r\n\r\nLogin incorrect\r\n${loginPrompt(vm)}`]
  }
  const argv = s.line.split(/\s+/).filter((a) => a !== "")
  if (argv[0] === "exit" || argv[0] === "logout") return [loggedOut(s), `\r\nlogout\r\n\r\n${loginPrompt(vm)}`]
  const result = argv.join(" ") === "stty size"
    ? `${s.rows} ${s.columns}\n`
    : argv.length === 0
    ? ""
    : ((r: GuestCommandResult) => r.stdout + r.stderr)(runProgram(vm, s.user, argv))
  return [next, `\r\n${result.replaceAll("\n", "\r\n")}${shellPrompt(vm, s.user)}`]
}

/** One typed character: echoed except at the password prompt; `\r`, `\n` and `\r\n` are one Enter. */
const keystroke = (s: Session, ch: string, vm: MemoryVm): readonly [Session, string] => {
  if (ch === "\n" && s.lastCR) return [{ ...s, lastCR: false }, ""]
  if (ch === "\r" || ch === "\n") {
    const [next, out] = enter(s, vm)
    return [{ ...next, lastCR: ch === "\r" }, out]
  }
  const t = { ...s, lastCR: false }
  const echo = s.phase !== "password"
  if (ch === "\x7f" || ch === "\b") {
    return t.line === "" ? [t, ""] : [{ ...t, line: t.line.slice(0, -1) }, echo ? "\b \b" : ""]
  }
  return ch < " " ? [t, ""] : [{ ...t, line: t.line + ch }, echo ? ch : ""]
}

const seedState = (options: Options): State => {
  const storages = new Map<string, StorageState>()
  const vms = new Map<string, MemoryVm>()
  for (const cluster of options.clusters) {
    for (const node of cluster.nodes) {
      for (const [id, { totalBytes, usedBytes = 0 }] of Object.entries(node.storages)) {
        storages.set(storageKey(cluster.name, node.name, id), { totalBytes, usedBytes })
      }
    }
    for (const t of cluster.templates) {
      const key = storageKey(cluster.name, t.node, t.storage)
      const held = storages.get(key)
      if (held !== undefined) storages.set(key, { ...held, usedBytes: held.usedBytes + t.diskBytes })
      vms.set(vmKey(cluster.name, t.vmid), {
        ...t, ...freshGuest(t.name), cluster: cluster.name, status: "stopped", template: true, lock: null, stamp: null, ownStamp: null,
        createdFor: null, onBoot: false,
        agentEnabled: t.agent ?? true, agentRunning: true, serialConsole: t.serialConsole ?? false
      })
    }
  }
  const nodes = options.clusters.flatMap((c) =>
    c.nodes.map(({ cpus, memoryBytes, name, online = true }) => ({ cluster: c.name, name, cpus, memoryBytes, online }))
  )
  return { nodes, storages, vms, consoles: new Map() }
}

export const make = (options: Options) =>
  Effect.gen(function*() {
    const clusters = new Set(options.clusters.map((c) => c.name))
    const machineIds = options.machineIds ?? defaultMachineIds
    const state = yield* SynchronizedRef.make(seedState(options))
    const faults = yield* Ref.make<Faults>({})
    const counts = yield* Ref.make<ReadonlyMap<Operation, number>>(new Map())

    /** Counts the call, then fails with an injected fault instead of running `effect`, if there is one. */
    const guard = <Op extends Operation>(operation: Op) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Ref.update(counts, (m) => new Map(m).set(operation, (m.get(operation) ?? 0) + 1)).pipe(
        Effect.andThen(Ref.modify(faults, (all): readonly [OperationError<Op> | undefined, Faults] => {
          const entry = all[operation]
          const [head, ...rest] = entry?.next ?? []
          return head === undefined ? [entry?.always, all] : [head, { ...all, [operation]: { ...entry, next: rest } }]
        })),
        Effect.flatMap((fault): Effect.Effect<A, E | OperationError<Op>, R> =>
          fault === undefined ? effect : Effect.fail(fault))
      )
    const addFault = <Op extends Operation>(operation: Op, error: OperationError<Op>, always: boolean) =>
      Ref.update(faults, (all): Faults => {
        const next = all[operation]?.next ?? []
        return { ...all, [operation]: always ? { next, always: error } : { ...all[operation], next: [...next, error] } }
      })

    const knownCluster = (cluster: string) =>
      clusters.has(cluster) ? Effect.void : Effect.fail(new ClusterUnknown({ cluster }))
    const current = (cluster: string) => Effect.andThen(knownCluster(cluster), SynchronizedRef.get(state))
    /** A VM addressed on another node than its own is as missing as a deleted one (§5.6). */
    const lookup = (s: State, ref: VmRef) =>
      Effect.flatMap(knownCluster(ref.cluster), () => {
        const vm = s.vms.get(vmKey(ref.cluster, ref.vmid))
        return vm !== undefined && vm.node === ref.node
          ? Effect.succeed(vm)
          : Effect.fail(new VmNotFound({ cluster: ref.cluster, vmid: ref.vmid }))
      })
    const lift = <A, E>(out: A | Effect.Effect<A, E>) => Effect.isEffect(out) ? out : Effect.succeed(out)
    const withVm = (s: State, vm: MemoryVm): State => ({ ...s, vms: new Map(s.vms).set(vmKey(vm.cluster, vm.vmid), vm) })
    /** Puts `bytes` on the VM's storage (or frees them, when negative); a full storage fails the task. */
    const claim = (s: State, at: Pick<MemoryVm, "cluster" | "node" | "storage">, bytes: number, operation: string) => {
      const key = storageKey(at.cluster, at.node, at.storage)
      const store = s.storages.get(key)
      if (store === undefined && bytes <= 0) return Effect.succeed(s)
      if (store === undefined) return Effect.fail(taskFailed(operation, `storage '${at.storage}' does not exist`))
      if (store.totalBytes - store.usedBytes < bytes) {
        return Effect.fail(taskFailed(operation, `not enough free space on storage '${at.storage}'`))
      }
      const storages = new Map(s.storages).set(key, { ...store, usedBytes: store.usedBytes + bytes })
      return Effect.succeed({ ...s, storages })
    }
    const read = <A, E>(ref: VmRef, f: (vm: MemoryVm) => A | Effect.Effect<A, E>) =>
      Effect.flatMap(SynchronizedRef.get(state), (s) => Effect.flatMap(lookup(s, ref), (vm) => lift(f(vm))))
    /** Changes one VM atomically; `f` returns the VM unchanged for an idempotent no-op. */
    const edit = <E>(ref: VmRef, f: (vm: MemoryVm, s: State) => MemoryVm | Effect.Effect<MemoryVm, E>) =>
      SynchronizedRef.modifyEffect(state, (s) =>
        lookup(s, ref).pipe(
          Effect.flatMap((vm) => lift(f(vm, s))),
          Effect.map((vm) => [undefined, withVm(s, vm)] as const)
        ))
    const consolesOf = (s: State, vm: MemoryVm) => s.consoles.get(vmKey(vm.cluster, vm.vmid)) ?? []
    /** Powering off ends the guest's serial line: every open console fails with ConsoleClosed. */
    const powerOff = (ref: VmRef, what: string) =>
      edit(ref, (vm, s) => {
        if (vm.status !== "running") return vm
        const reason = `VM ${vm.vmid} ${what}`
        const close = (c: ConsoleHandle) =>
          Ref.update(c.session, (x) => ({ ...x, closed: reason })).pipe(
            Effect.andThen(Queue.fail(c.output, new ConsoleClosed({ reason })))
          )
        return Effect.as(Effect.forEach(consolesOf(s, vm), close), { ...vm, status: "stopped" as const })
      })
    /** The agent answers only inside a running guest whose config enables it (messages of §3.9). */
    const agent = (vm: MemoryVm) => {
      const detail = vm.status !== "running"
        ? `VM ${vm.vmid} is not running`
        : !vm.agentEnabled
        ? "No QEMU guest agent configured"
        : !vm.agentRunning
        ? "QEMU guest agent is not running"
        : null
      return detail === null ? Effect.void : Effect.fail(new GuestAgentUnavailable({ detail }))
    }

    const virtualization = Virtualization.of({
      listVms: (cluster) =>
        guard("listVms")(Effect.map(current(cluster), (s) =>
          [...s.vms.values()].filter((vm) => vm.cluster === cluster).sort((a, b) => a.vmid - b.vmid).map(summary(machineIds)))),
      nodeCapacity: (cluster, storage) =>
        guard("nodeCapacity")(Effect.map(current(cluster), (s) =>
          s.nodes.filter((n) => n.cluster === cluster).map(({ cpus, memoryBytes, name, online }) => {
            const claimed = [...s.vms.values()].filter((vm) => vm.cluster === cluster && vm.node === name && !vm.template)
            const store = s.storages.get(storageKey(cluster, name, storage))
            const committedCpus = claimed.reduce((sum, vm) => sum + vm.cpus, 0)
            const committedMemoryBytes = claimed.reduce((sum, vm) => sum + vm.memoryBytes, 0)
            const free = store ? { availableBytes: store.totalBytes - store.usedBytes, totalBytes: store.totalBytes } : null
            return { node: name, online, cpus, memoryBytes, committedCpus, committedMemoryBytes, storage: free }
          }))),
      // One atomic step: the order's machine found again, or made at the lowest free id of the range. The fake sees
      // its whole cluster at once, so no id is ever taken between the choice and the clone.
      createMachine: (order, { cluster, name, node, storage, template }) =>
        guard("createMachine")(SynchronizedRef.modifyEffect(state, (s) =>
          Effect.gen(function*() {
            const fail = (status: string) => Effect.fail(taskFailed("createMachine", status))
            yield* knownCluster(cluster)
            const made = [...s.vms.values()].find((vm) => vm.cluster === cluster && vm.createdFor === order)
            if (made !== undefined) {
              const answer: MachineCreation = made.lock !== null
                ? { _tag: "InProgress" }
                : { _tag: "Created", vm: { cluster, node: made.node, vmid: made.vmid } }
              return [answer, s] as const
            }
            const source = yield* lookup(s, template).pipe(Effect.catchTag("VmNotFound", () =>
              fail(`Configuration file 'nodes/${template.node}/qemu-server/${template.vmid}.conf' does not exist`)))
            if (cluster !== template.cluster || node !== template.node) {
              return yield* fail(`can't clone VM to node '${node}' (VM uses local storage)`)
            }
            if (!DNS_NAME.test(name)) return yield* fail(`invalid format - '${name}' does not look like a valid DNS name`)
            let vmid = machineIds.from
            while (vmid < machineIds.to && s.vms.has(vmKey(cluster, vmid))) vmid++
            if (vmid >= machineIds.to) return yield* new NoMachineIdFree({ cluster })
            const clone: MemoryVm = {
              ...source, ...freshGuest(name), vmid, name, storage, template: false, stamp: null, ownStamp: order,
              createdFor: order
            }
            const created: MachineCreation = { _tag: "Created", vm: { cluster, node, vmid } }
            return [created, withVm(yield* claim(s, clone, clone.diskBytes, "createMachine"), clone)] as const
          }))),
      releaseMachine: () => guard("releaseMachine")(Effect.void),
      // The real adapter writes `agent=1` and `serial0=socket` with the rest (§7 step 4).
      configure: (ref, config) =>
        guard("configure")(edit(ref, (vm) => ({
          // The real adapter names the VM after the host name too (the config call's `name`).
          ...vm, name: config.hostname, cpus: config.cores, memoryBytes: config.memoryMiB * MiB, agentEnabled: true, serialConsole: true,
          stamp: config.stamp, ownStamp: config.stamp, onBoot: true,
          cloudInit: { user: config.user, hostname: config.hostname, password: config.password }
        }))),
      resizeDisk: (ref, sizeGiB) =>
        guard("resizeDisk")(SynchronizedRef.modifyEffect(state, (s) =>
          Effect.gen(function*() {
            const vm = yield* lookup(s, ref)
            const delta = sizeGiB * GiB - vm.diskBytes
            if (delta < 0) return yield* taskFailed("resizeDisk", "shrinking disks is not supported")
            const grown = { ...vm, diskBytes: vm.diskBytes + delta }
            return [undefined, withVm(yield* claim(s, vm, delta, "resizeDisk"), grown)] as const
          }))),
      ownerOf: (ref) => guard("ownerOf")(read(ref, (vm) => ({ stamp: vm.ownStamp, busy: vm.lock !== null }))),
      status: (ref) =>
        guard("status")(read(ref, (vm) => ({ status: vm.status, busy: vm.lock !== null, agentEnabled: vm.agentEnabled }))),
      // Start regenerates the cloud-init drive (§5.7): the guest takes its host name and password from it.
      start: (ref) =>
        guard("start")(edit(ref, (vm) => {
          if (vm.template) return Effect.fail(taskFailed("start", "you can't start a vm if it's a template"))
          if (vm.status === "running") return vm
          const ci = vm.cloudInit
          if (ci === null) return { ...vm, status: "running" as const, hostname: vm.name }
          const guestUsers = new Map(vm.guestUsers).set(ci.user, Redacted.value(ci.password))
          return { ...vm, status: "running" as const, hostname: ci.hostname, guestUsers }
        })),
      stop: (ref) => guard("stop")(powerOff(ref, "stopped")),
      shutdown: (ref, _timeoutSeconds) => guard("shutdown")(powerOff(ref, "shut down")),
      reset: (ref) =>
        guard("reset")(edit(ref, (vm, s) => {
          if (vm.status !== "running") return Effect.fail(taskFailed("reset", `VM ${vm.vmid} not running`))
          const prompt = encoder.encode(`\r\n\r\n${loginPrompt(vm)}`)
          const reboot = (c: ConsoleHandle) =>
            Effect.andThen(Ref.update(c.session, loggedOut), Queue.offer(c.output, prompt))
          return Effect.as(Effect.forEach(consolesOf(s, vm), reboot), vm)
        })),
      listSnapshots: (ref) => guard("listSnapshots")(read(ref, (vm) => vm.snapshots)),
      createSnapshot: (ref, name, description) =>
        guard("createSnapshot")(Effect.flatMap(Clock.currentTimeMillis, (now) =>
          edit(ref, (vm) => {
            const fail = (status: string) => Effect.fail(taskFailed("createSnapshot", status))
            if (!SNAPSHOT_NAME.test(name)) return fail(`invalid format - invalid configuration ID '${name}'`)
            if (name === "current") return fail("unable to use snapshot name 'current' (reserved name)")
            if (vm.snapshots.some((snap) => snap.name === name)) return fail(`snapshot name '${name}' already used`)
            const createdAt = new Date(Math.floor(now / 1000) * 1000) // PVE keeps `snaptime` in whole seconds
            return { ...vm, snapshots: [...vm.snapshots, { name, description, createdAt }] }
          }))),
      deleteSnapshot: (ref, name) =>
        guard("deleteSnapshot")(edit(ref, (vm) =>
          vm.snapshots.some((snap) => snap.name === name)
            ? { ...vm, snapshots: vm.snapshots.filter((snap) => snap.name !== name) }
            : Effect.fail(taskFailed("deleteSnapshot", `snapshot '${name}' does not exist`)))),
      guestExec: (ref, command, input) =>
        guard("guestExec")(read(ref, (vm) => Effect.as(agent(vm), runProgram(vm, "root", command, input)))),
      setGuestPassword: (ref, user, password) =>
        guard("setGuestPassword")(edit(ref, (vm) =>
          Effect.flatMap(agent(vm), () =>
            vm.guestUsers.has(user)
              ? Effect.succeed({ ...vm, guestUsers: new Map(vm.guestUsers).set(user, Redacted.value(password)) })
              : Effect.fail(taskFailed("setGuestPassword", `Agent error: user '${user}' does not exist`))))),
      setStartOnBoot: (ref, enabled) => guard("setStartOnBoot")(edit(ref, (vm) => ({ ...vm, onBoot: enabled }))),
      setCloudInitPassword: (ref, password) =>
        guard("setCloudInitPassword")(edit(ref, (vm) => ({
          ...vm,
          cloudInit: { user: "root", hostname: vm.name, ...vm.cloudInit, password }
        }))),
      // Only a VM carrying our stamp for `stamp` is destroyed (VmNotOurs otherwise). PVE refuses to destroy a running
      // VM (§3.10: "VM N is running - destroy failed"), a permanent refusal, so TaskFailed, not the retryable
      // VirtualizationUnavailable. A VM that does not exist is already destroyed.
      destroy: (ref, stamp) =>
        guard("destroy")(SynchronizedRef.modifyEffect(state, (s) =>
          lookup(s, ref).pipe(
            Effect.flatMap((vm): Effect.Effect<readonly [undefined, State], VmNotOurs | TaskFailed> => {
              if (vm.ownStamp !== stamp) {
                return Effect.fail(new VmNotOurs({ cluster: ref.cluster, vmid: ref.vmid, expected: stamp, found: vm.ownStamp }))
              }
              if (vm.status === "running") return Effect.fail(taskFailed("destroy", `VM ${vm.vmid} is running - destroy failed`))
              return Effect.map(claim(s, vm, -vm.diskBytes, "destroy"), (freed) => {
                const vms = new Map(freed.vms)
                vms.delete(vmKey(vm.cluster, vm.vmid))
                return [undefined, { ...freed, vms }] as const
              })
            }),
            Effect.catchTag("VmNotFound", () => Effect.succeed([undefined, s] as const))
          ))),
      openConsole: (ref) =>
        guard("openConsole")(Effect.gen(function*() {
          const output = yield* Queue.unbounded<Uint8Array, ConsoleClosed | Cause.Done>()
          const session = yield* Ref.make<Session>(
            { phase: "login", user: "", line: "", lastCR: false, columns: 80, rows: 24, closed: null }
          )
          const handle: ConsoleHandle = { output, session }
          const key = vmKey(ref.cluster, ref.vmid)
          const register = (f: (all: ReadonlyArray<ConsoleHandle>) => ReadonlyArray<ConsoleHandle>) => (s: State) => ({
            ...s,
            consoles: new Map(s.consoles).set(key, f(s.consoles.get(key) ?? []))
          })
          // Registered in the same step as the checks, so a stop cannot slip in between (termproxy, §4.1).
          yield* SynchronizedRef.modifyEffect(state, (s) =>
            Effect.flatMap(lookup(s, ref), (vm) =>
              vm.status !== "running"
                ? Effect.fail(new ConsoleClosed({ reason: `VM ${vm.vmid} not running` }))
                : !vm.serialConsole
                ? Effect.fail(new ConsoleClosed({ reason: "unable to find a serial interface" }))
                : Effect.succeed([undefined, register((all) => [...all, handle])(s)] as const)))
          yield* Effect.addFinalizer(() =>
            SynchronizedRef.update(state, register((all) => all.filter((c) => c !== handle))).pipe(
              Effect.andThen(Ref.update(session, (x) => ({ ...x, closed: x.closed ?? "console closed" }))),
              Effect.andThen(Queue.end(output))
            ))
          yield* Queue.offer(output, encoder.encode("starting serial terminal on interface serial0\r\n"))
          const decoder = new TextDecoder()
          const open = Effect.flatMap(Ref.get(session), (x) =>
            x.closed === null ? Effect.void : Effect.fail(new ConsoleClosed({ reason: x.closed })))
          const serial: SerialConsole = {
            output: Stream.fromQueue(output),
            write: (data) =>
              Effect.gen(function*() {
                yield* open
                const vm = (yield* SynchronizedRef.get(state)).vms.get(key)
                if (vm === undefined) return yield* new ConsoleClosed({ reason: `VM ${ref.vmid} destroyed` })
                const text = decoder.decode(data, { stream: true })
                const echoed = yield* Ref.modify(session, (x) =>
                  [...text].reduce<readonly [string, Session]>(([out, s], ch) => {
                    const [next, more] = keystroke(s, ch, vm)
                    return [out + more, next]
                  }, ["", x]))
                if (echoed !== "") yield* Queue.offer(output, encoder.encode(echoed))
              }),
            resize: (columns, rows) => Effect.andThen(open, Ref.update(session, (x) => ({ ...x, columns, rows })))
          }
          return serial
        }))
    })

    const cluster = MemoryCluster.of({
      seed: options,
      vms: Effect.map(SynchronizedRef.get(state), (s) => [...s.vms.values()].sort((a, b) => a.vmid - b.vmid)),
      place: (vm, stamp) =>
        SynchronizedRef.modifyEffect(state, (s) =>
          Effect.gen(function*() {
            yield* knownCluster(vm.cluster)
            if (s.vms.has(vmKey(vm.cluster, vm.vmid))) return yield* taskFailed("place", `VM ${vm.vmid} already exists`)
            const placed: MemoryVm = {
              ...vm, ...freshGuest(vm.name), stamp: null, ownStamp: stamp ?? null, createdFor: null, template: false, lock: null,
              storage: "local-lvm", onBoot: false, agentEnabled: false, agentRunning: false, serialConsole: false
            }
            return [undefined, withVm(s, placed)] as const
          })),
      failNext: (operation, error) => addFault(operation, error, false),
      failAlways: (operation, error) => addFault(operation, error, true),
      clearFaults: Ref.set(faults, {}),
      setAgentRunning: (ref, running) => edit(ref, (vm) => ({ ...vm, agentRunning: running })),
      restamp: (ref, stamp) => edit(ref, (vm) => ({ ...vm, stamp, ownStamp: stamp })),
      migrate: (ref, node) => edit(ref, (vm) => ({ ...vm, node })),
      calls: (operation) => Effect.map(Ref.get(counts), (m) => m.get(operation) ?? 0)
    })
    return { virtualization, cluster }
  })

/** Virtualization and its MemoryCluster control surface, over one fresh cluster state per build. */
export const layer = (options: Options) =>
  Layer.effectContext(Effect.map(make(options), ({ cluster, virtualization }) =>
    Context.make(Virtualization, virtualization).pipe(Context.add(MemoryCluster, cluster))))
