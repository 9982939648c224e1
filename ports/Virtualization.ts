// The hypervisor, as the VPS domain needs it: capacity, a machine made for an order, configuration, power, snapshots,
// guest commands, destruction and the serial console. Every VPS operation goes through this one port. How a machine is
// named upstream (a Proxmox VMID: chosen from our range, confirmed free, chosen again when something takes it) and how
// a creation under way is recognised are the adapter's business: the domain asks for the machine of an order.
import { Context, type Effect, type Redacted, Schema, type Scope, type Stream } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

/** A machine's handle: which cluster (a name from the catalog), the node it runs on, and its id there. */
export interface VmRef {
  readonly cluster: string
  readonly node: string
  readonly vmid: number
}

export interface NodeCapacity {
  readonly node: string
  readonly online: boolean
  /** Logical CPUs and memory of the node. */
  readonly cpus: number
  readonly memoryBytes: number
  /** What the node's non-template VMs already claim (stopped ones included: they can be started). */
  readonly committedCpus: number
  readonly committedMemoryBytes: number
  /** Free and total bytes of the target storage on this node; null when the node has no such storage. */
  readonly storage: { readonly availableBytes: number; readonly totalBytes: number } | null
}

export type PowerState = "running" | "stopped" | "unknown"

export interface VmSummary extends VmRef {
  readonly name: string
  /**
   * The order our ownership stamp names, as the cluster's listing shows it (null: no stamp there). The listing can lag
   * behind a fresh clone: `ownerOf` reads the VM's own record, which carries the stamp from the clone's first moment.
   */
  readonly stamp: string | null
  /**
   * The order this machine was created for, known from the moment of its creation (unlike `stamp`, which the listing
   * shows only once the machine is configured); null for a machine we did not create.
   */
  readonly createdFor: string | null
  /** Where we create machines (our own range of ids): a machine here that no order of ours explains is an orphan. */
  readonly managed: boolean
  readonly status: PowerState
  readonly template: boolean
  /** An operation (a clone, a snapshot, …) holds the VM right now: what it is may not be final yet. */
  readonly busy: boolean
  readonly cpus: number
  readonly memoryBytes: number
  readonly diskBytes: number
}

export interface VmStatus {
  readonly status: PowerState
  /** An operation holds the VM right now. */
  readonly busy: boolean
  /** Whether the guest agent is enabled in the VM's configuration (not whether it answers). */
  readonly agentEnabled: boolean
}

export interface Snapshot {
  readonly name: string
  readonly description: string
  /** Null for a snapshot still being taken. */
  readonly createdAt: Date | null
}

export interface CloudInit {
  /** Our ownership stamp (the order id), written again with the rest so the VM's every record carries it. */
  readonly stamp: string
  readonly cores: number
  readonly memoryMiB: number
  /** The public bridge the first NIC is attached to. */
  readonly bridge: string
  /** `203.0.113.10/28` and its gateway. */
  readonly address: string
  readonly gateway: string
  readonly nameservers: ReadonlyArray<string>
  readonly user: string
  readonly password: Redacted.Redacted<string>
  readonly sshPublicKeys: ReadonlyArray<string>
  readonly hostname: string
}

/** Who a VM says it belongs to, read from its own record. */
export interface VmOwnership {
  /** The order our stamp names; null when the VM carries none (not made by us, or its stamp was removed). */
  readonly stamp: string | null
  /** An operation holds the VM right now: a clone in progress may not carry its stamp yet. */
  readonly busy: boolean
}

export interface GuestCommandResult {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

/** A live serial console: bytes from the guest's terminal, and the means to type into it and resize it. */
export interface SerialConsole {
  readonly output: Stream.Stream<Uint8Array, ConsoleClosed>
  write(data: Uint8Array): Effect.Effect<void, ConsoleClosed>
  resize(columns: number, rows: number): Effect.Effect<void, ConsoleClosed>
}

// --- errors -----------------------------------------------------------------------------------------------

/** The hypervisor could not be reached, timed out or kept failing after bounded retries: try again later. */
export class VirtualizationUnavailable extends Schema.TaggedError<VirtualizationUnavailable>()(
  "VirtualizationUnavailable",
  { operation: Schema.String, detail: Schema.String }
) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** An asynchronous task ended with an exit status other than OK; `log` holds the task log's last lines. */
export class TaskFailed extends Schema.TaggedError<TaskFailed>()("TaskFailed", {
  operation: Schema.String,
  exitStatus: Schema.String,
  log: Schema.Array(Schema.String)
}) {
  override get message() {
    return `${this.operation}: ${this.exitStatus}`
  }
}

export class VmNotFound extends Schema.TaggedError<VmNotFound>()("VmNotFound", {
  cluster: Schema.String,
  vmid: Schema.Number
}) {}

/** Every id of the range we create machines in is in use: no machine can be created until one is freed. */
export class NoMachineIdFree extends Schema.TaggedError<NoMachineIdFree>()("NoMachineIdFree", { cluster: Schema.String }) {
  override get message() {
    return `no machine id of our range is free on cluster ${this.cluster}`
  }
}

/** The guest agent is not configured or does not answer. */
export class GuestAgentUnavailable extends Schema.TaggedError<GuestAgentUnavailable>()("GuestAgentUnavailable", {
  detail: Schema.String
}) {}

/**
 * The VM at this VMID does not carry our stamp for the expected order: the VMID was reused outside our control (or
 * the stamp was changed). Nothing destructive is done to it.
 */
export class VmNotOurs extends Schema.TaggedError<VmNotOurs>()("VmNotOurs", {
  cluster: Schema.String,
  vmid: Schema.Number,
  expected: Schema.String,
  found: Schema.NullOr(Schema.String)
}) {
  override get message() {
    return `VM ${this.vmid} on ${this.cluster} is not ours: it carries ${this.found === null ? "no stamp" : `the stamp of order ${this.found}`}, not order ${this.expected}'s`
  }
}

export class ConsoleClosed extends Schema.TaggedError<ConsoleClosed>()("ConsoleClosed", { reason: Schema.String }) {}

/**
 * A graceful shutdown whose guest did not power off within its timeout (it ignores ACPI, or is busy): the VM is
 * still running; only a hard stop forces it off.
 */
export class ShutdownTimedOut extends Schema.TaggedError<ShutdownTimedOut>()("ShutdownTimedOut", {
  timeoutSeconds: Schema.Number
}) {
  override get message() {
    return `The guest did not shut down within ${this.timeoutSeconds} s`
  }
}

export class ClusterUnknown extends Schema.TaggedError<ClusterUnknown>()("ClusterUnknown", { cluster: Schema.String }) {}

export type VirtualizationError = VirtualizationUnavailable | TaskFailed | ClusterUnknown

/** What a new machine is made of and where it goes. */
export interface MachineSpec {
  readonly cluster: string
  /** The node it is placed on; the template's copy there is cloned (a full clone stays on its template's node). */
  readonly node: string
  readonly template: VmRef
  readonly name: string
  /** The storage its disk goes to. */
  readonly storage: string
}

/** The machine of an order: made (its handle), or its creation still under way upstream (ask again later). */
export type MachineCreation =
  | { readonly _tag: "Created"; readonly vm: VmRef }
  | { readonly _tag: "InProgress" }

export class Virtualization extends Context.Service<Virtualization, {
  /** Every QEMU VM of the cluster (templates included, marked). */
  listVms(cluster: string): Effect.Effect<ReadonlyArray<VmSummary>, VirtualizationError>
  /** Capacity of every node, with the free space of `storage` on each. */
  nodeCapacity(cluster: string, storage: string): Effect.Effect<ReadonlyArray<NodeCapacity>, VirtualizationError>
  /**
   * The machine of `order`: a full clone of the template on the spec's node, carrying our ownership stamp (the order
   * id) from its first moment. Idempotent per order: asked again (a retried step, another process), it answers the
   * machine made for that order, or InProgress while a creation of it is still running upstream (a process stopped in
   * its middle). Never on an id something else holds.
   */
  createMachine(
    order: string,
    spec: MachineSpec
  ): Effect.Effect<MachineCreation, VirtualizationError | NoMachineIdFree | DatabaseUnavailable>
  /**
   * The order's machine is gone (destroyed, or never made): its id may be given to another order. An id something
   * else holds upstream is never given again.
   */
  releaseMachine(order: string): Effect.Effect<void, DatabaseUnavailable>
  /** The ownership stamp the VM carries, read from its own record (never from a cached listing). */
  ownerOf(vm: VmRef): Effect.Effect<VmOwnership, VirtualizationError | VmNotFound>
  /**
   * CPU, memory, public NIC, cloud-init (user, password, SSH keys, address), the serial console socket, start at the
   * node's boot, and our stamp again; the VM is then named after `hostname`.
   */
  configure(vm: VmRef, config: CloudInit): Effect.Effect<void, VirtualizationError | VmNotFound>
  /** Grows the VM's system disk to `sizeGiB` (absolute; never shrinks). */
  resizeDisk(vm: VmRef, sizeGiB: number): Effect.Effect<void, VirtualizationError | VmNotFound>
  status(vm: VmRef): Effect.Effect<VmStatus, VirtualizationError | VmNotFound>
  /** Idempotent: starting a running VM or stopping a stopped one succeeds. */
  start(vm: VmRef): Effect.Effect<void, VirtualizationError | VmNotFound>
  /** A hard power-off (the plug pulled): the guest is not asked. */
  stop(vm: VmRef): Effect.Effect<void, VirtualizationError | VmNotFound>
  /**
   * A graceful shutdown (ACPI, or the guest agent when enabled), waiting up to `timeoutSeconds` for the guest to
   * power off; past it the VM is left running (ShutdownTimedOut), never forced. A stopped VM succeeds at once.
   */
  shutdown(vm: VmRef, timeoutSeconds: number): Effect.Effect<void, VirtualizationError | VmNotFound | ShutdownTimedOut>
  /** A hard reset (the reset button): the guest is not asked. */
  reset(vm: VmRef): Effect.Effect<void, VirtualizationError | VmNotFound>
  listSnapshots(vm: VmRef): Effect.Effect<ReadonlyArray<Snapshot>, VirtualizationError | VmNotFound>
  createSnapshot(vm: VmRef, name: string, description: string): Effect.Effect<void, VirtualizationError | VmNotFound>
  deleteSnapshot(vm: VmRef, name: string): Effect.Effect<void, VirtualizationError | VmNotFound>
  /** Runs a program in the guest through its agent and waits for it to exit. */
  guestExec(
    vm: VmRef,
    command: ReadonlyArray<string>,
    input?: string
  ): Effect.Effect<GuestCommandResult, VirtualizationError | VmNotFound | GuestAgentUnavailable>
  /** Sets a guest user's password through the agent. */
  setGuestPassword(
    vm: VmRef,
    user: string,
    password: Redacted.Redacted<string>
  ): Effect.Effect<void, VirtualizationError | VmNotFound | GuestAgentUnavailable>
  /** Whether the node starts the VM when it boots (a lapsed VPS must not come back with a node reboot). */
  setStartOnBoot(vm: VmRef, enabled: boolean): Effect.Effect<void, VirtualizationError | VmNotFound>
  /** Sets the cloud-init password, applied at the next boot. */
  setCloudInitPassword(vm: VmRef, password: Redacted.Redacted<string>): Effect.Effect<void, VirtualizationError | VmNotFound>
  /**
   * Destroys the VM with its disks (purge, unreferenced disks too); a VM that no longer exists is success. Refused
   * (VmNotOurs, nothing done) unless the VM carries our stamp for order `stamp`.
   */
  destroy(vm: VmRef, stamp: string): Effect.Effect<void, VirtualizationError | VmNotOurs>
  /** Opens the VM's serial console; closed when the scope closes. */
  openConsole(vm: VmRef): Effect.Effect<SerialConsole, VirtualizationError | VmNotFound | ConsoleClosed, Scope.Scope>
}>()("zh/ports/Virtualization") {}
