// Virtualization over the Proxmox VE HTTP API: each port operation as its upstream calls (reference/proxmox.md §3),
// with PVE's failures mapped onto the port's errors once, here.
import { Duration, Effect, Layer, Redacted, Schema } from "effect"
import { ProxmoxClusters } from "../../ports/ProxmoxClusters.ts"
import { ProxmoxVmids, type VmidRange } from "../../ports/ProxmoxVmids.ts"
import {
  ConsoleClosed,
  GuestAgentUnavailable,
  type NodeCapacity,
  type PowerState,
  ShutdownTimedOut,
  TaskFailed,
  Virtualization,
  VirtualizationUnavailable,
  type VmRef,
  VmNotFound,
  type VmSummary
} from "../../ports/Virtualization.ts"
import { call, type CallContext, runTask } from "./calls.ts"
import { createMachine } from "./machines.ts"
import { destroyVm } from "./destroy.ts"
import { openSerialConsole } from "./console.ts"
import type { ProxmoxRequest } from "./encoding.ts"
import {
  CallFailed,
  formatDuration,
  isAgentUnavailable,
  isShutdownTimeout,
  isVmMissing,
  portError,
  unavailable
} from "./failures.ts"
import { type PowerAction, requests } from "./requests.ts"
import {
  ExecStarted,
  ExecStatus,
  lockOf,
  missingConfig,
  qemuOf,
  Resources,
  says,
  Snapshots,
  VmConfigStamp,
  VmCurrentStatus
} from "./responses.ts"
import type { SessionOptions } from "./ProxmoxSession.ts"
import { makeSessions } from "./sessions.ts"
import { stampOf, stampOfTags } from "./stamp.ts"
import { pollSchedule } from "./tasks.ts"

export interface ProxmoxOptions {
  /** The VMIDs our machines get: keep the cluster's own `next-id` range out of it (VMID_RANGE_START/END). */
  readonly vmidRange: VmidRange
  /** Per HTTP attempt; a little over pveproxy's 30 s forwarding timeout, so its 596 arrives before ours (§2.2). */
  readonly requestTimeout: Duration.Input
  /** Extra attempts for transient failures and lock races. */
  readonly retries: number
  readonly retryBaseDelay: Duration.Input
  readonly ticketRenewAfter: Duration.Input
  readonly taskPollInitial: Duration.Input
  readonly taskPollMax: Duration.Input
  readonly taskLogLines: number
  /** A full clone copies the whole disk (§5.9). */
  readonly cloneTimeout: Duration.Input
  readonly taskTimeout: Duration.Input
  readonly guestExecTimeout: Duration.Input
  readonly consoleKeepAlive: Duration.Input
  readonly consoleOpenTimeout: Duration.Input
  /** How sessions reach a cluster (ProxmoxSession.ts); default: sockets. */
  readonly connect?: SessionOptions["connect"]
}

export const defaultOptions: ProxmoxOptions = {
  vmidRange: { from: 100_000, to: 200_000 },
  requestTimeout: "35 seconds",
  retries: 4,
  retryBaseDelay: "500 millis",
  ticketRenewAfter: "1 hour",
  taskPollInitial: "50 millis",
  taskPollMax: "2 seconds",
  taskLogLines: 20,
  cloneTimeout: "15 minutes",
  taskTimeout: "2 minutes",
  guestExecTimeout: "2 minutes",
  consoleKeepAlive: "30 seconds",
  consoleOpenTimeout: "10 seconds"
}

const powerStateOf = (status: string | null | undefined): PowerState =>
  status === "running" || status === "stopped" ? status : "unknown"


/**
 * The port's error for a failed call or task about `vm`: a missing config file is VmNotFound (§2.2, §5.6), a refusal
 * TaskFailed, any other failed call VirtualizationUnavailable.
 */
const vmErrors = (vm: VmRef) =>
<A, E, R>(
  effect: Effect.Effect<A, E | CallFailed | TaskFailed, R>
): Effect.Effect<A, E | TaskFailed | VmNotFound | VirtualizationUnavailable, R> =>
  Effect.mapError(effect, (e) => {
    const notFound = () => new VmNotFound({ cluster: vm.cluster, vmid: vm.vmid })
    if (e instanceof CallFailed) return isVmMissing(e) ? notFound() : portError(e)
    if (e instanceof TaskFailed && missingConfig.test(e.exitStatus)) return notFound()
    return e
  })

/** "No QEMU guest agent configured", "QEMU guest agent is not running", a stopped VM (§3.9). */
const agentErrors = <A, E, R>(
  effect: Effect.Effect<A, E | CallFailed, R>
): Effect.Effect<A, E | CallFailed | GuestAgentUnavailable, R> =>
  Effect.mapError(effect, (e) =>
    e instanceof CallFailed && isAgentUnavailable(e) && !isVmMissing(e)
      ? new GuestAgentUnavailable({ detail: e.detail })
      : e)

/** The port's error for a failed call that is not about one VM: a refusal is TaskFailed, the rest unavailable. */
const clusterErrors = <A, E, R>(
  effect: Effect.Effect<A, E | CallFailed, R>
): Effect.Effect<A, E | TaskFailed | VirtualizationUnavailable, R> =>
  Effect.mapError(effect, (e) => (e instanceof CallFailed ? portError(e) : e))


export const layerWith = (
  overrides: Partial<ProxmoxOptions> = {}
): Layer.Layer<Virtualization, never, ProxmoxClusters | ProxmoxVmids> =>
  Layer.effect(
    Virtualization,
    Effect.gen(function*() {
      const options: ProxmoxOptions = { ...defaultOptions, ...overrides }
      const sessions = yield* makeSessions(yield* ProxmoxClusters, options)
      const vmids = yield* ProxmoxVmids
      const range = options.vmidRange
      const retry = { retries: options.retries, baseDelay: options.retryBaseDelay }
      const polling = {
        initialInterval: options.taskPollInitial,
        maxInterval: options.taskPollMax,
        logLines: options.taskLogLines
      }

      const withCluster = <A, E>(cluster: string, f: (ctx: CallContext) => Effect.Effect<A, E>) =>
        Effect.flatMap(sessions.api(cluster), (session) => f({ session, retry, polling }))

      const logged = (operation: string) =>
      <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        effect.pipe(
          Effect.tapError((e) =>
            e instanceof VirtualizationUnavailable || e instanceof TaskFailed
              ? Effect.logWarning("Proxmox operation failed").pipe(
                Effect.annotateLogs({
                  operation,
                  error: e._tag,
                  detail: e instanceof TaskFailed ? e.exitStatus : e.detail
                })
              )
              : Effect.void
          ),
          Effect.withSpan(`ProxmoxVirtualization.${operation}`)
        )

      const vmTask = (vm: VmRef, operation: string, request: ProxmoxRequest) =>
        withCluster(vm.cluster, (ctx) => runTask(ctx, operation, request, options.taskTimeout)).pipe(
          Effect.asVoid,
          vmErrors(vm),
          logged(operation)
        )

      /** Starting a running VM and stopping a stopped one reach the wanted state: success (§3.7, §5.11). */
      const power = (vm: VmRef, action: PowerAction, alreadyThere: RegExp | null) =>
        withCluster(vm.cluster, (ctx) =>
          // A reset whose answer was lost is not sent again: that could reset the guest twice.
          runTask(ctx, action, requests.power(vm, action), options.taskTimeout, {
            idempotent: action !== "reset"
          }).pipe(
            Effect.asVoid,
            Effect.catchIf((e) => alreadyThere !== null && says(alreadyThere)(e), () => Effect.void)
          )).pipe(vmErrors(vm), logged(action))

      const resources = (ctx: CallContext, operation: string, type: "vm" | "node" | "storage") =>
        call(ctx, operation, requests.clusterResources(type), Resources)

      const snapshotExists = (ctx: CallContext, vm: VmRef, name: string) =>
        Effect.map(call(ctx, "createSnapshot", requests.listSnapshots(vm), Snapshots), (list) =>
          list.some((s) => s.name === name))

      return Virtualization.of({
        listVms: (cluster) =>
          withCluster(cluster, (ctx) =>
            Effect.all([
              resources(ctx, "listVms", "vm"),
              // A clone's tags come with its configuration; which order each VMID of ours is for, we know from the start.
              vmids.holders(cluster).pipe(Effect.orDie)
            ], { concurrency: 2 })).pipe(
            Effect.map(([list, holders]) =>
              qemuOf(list).map((r): VmSummary => ({
                cluster,
                node: r.node ?? "",
                vmid: r.vmid ?? 0,
                name: r.name ?? "",
                stamp: stampOfTags(r.tags),
                createdFor: holders.get(r.vmid ?? 0) ?? null,
                managed: (r.vmid ?? 0) >= range.from && (r.vmid ?? 0) < range.to,
                status: powerStateOf(r.status),
                template: r.template ?? false,
                busy: lockOf(r.lock) !== null,
                cpus: r.maxcpu ?? 0,
                memoryBytes: r.maxmem ?? 0,
                diskBytes: r.maxdisk ?? 0
              }))
            ),
            clusterErrors,
            logged("listVms")
          ),

        nodeCapacity: (cluster, storage) =>
          withCluster(cluster, (ctx) =>
            Effect.all([
              resources(ctx, "nodeCapacity", "node"),
              resources(ctx, "nodeCapacity", "vm"),
              resources(ctx, "nodeCapacity", "storage")
            ], { concurrency: 3 })).pipe(
              Effect.map(([nodes, vms, storages]) =>
                nodes.filter((n) => n.type === "node" && typeof n.node === "string").map((n): NodeCapacity => {
                  // Stopped VMs count: they can be started. Templates never run (§6).
                  const committed = qemuOf(vms).filter((v) => v.node === n.node && v.template !== true)
                  // A node's own disk/maxdisk is its root file system; the target storage is what matters (§6).
                  const store = storages.find((s) =>
                    s.type === "storage" && s.node === n.node && s.storage === storage && s.status === "available"
                  )
                  const total = store?.maxdisk ?? null
                  return {
                    node: n.node ?? "",
                    online: n.status === "online",
                    cpus: n.maxcpu ?? 0,
                    memoryBytes: n.maxmem ?? 0,
                    committedCpus: committed.reduce((sum, v) => sum + (v.maxcpu ?? 0), 0),
                    committedMemoryBytes: committed.reduce((sum, v) => sum + (v.maxmem ?? 0), 0),
                    storage: store === undefined || total === null
                      ? null
                      : { availableBytes: Math.max(0, total - (store.disk ?? 0)), totalBytes: total }
                  }
                })
              ),
              clusterErrors,
              logged("nodeCapacity")
            ),

        createMachine: (order, spec) =>
          withCluster(spec.cluster, (ctx) =>
            createMachine(ctx, vmids, { range, cloneTimeout: options.cloneTimeout }, order, spec)).pipe(
              clusterErrors,
              logged("createMachine")
            ),

        releaseMachine: (order) => vmids.release(order),

        ownerOf: (vm) =>
          withCluster(vm.cluster, (ctx) => call(ctx, "ownerOf", requests.config(vm), VmConfigStamp)).pipe(
            Effect.map((config) => ({ stamp: stampOf(config.tags, config.description), busy: lockOf(config.lock) !== null })),
            vmErrors(vm),
            logged("ownerOf")
          ),

        configure: (vm, config) =>
          vmTask(vm, "configure", requests.configure(vm, { ...config, password: Redacted.value(config.password) })),

        resizeDisk: (vm, sizeGiB) => vmTask(vm, "resizeDisk", requests.resize(vm, sizeGiB)),

        status: (vm) =>
          withCluster(vm.cluster, (ctx) => call(ctx, "status", requests.statusCurrent(vm), VmCurrentStatus)).pipe(
            Effect.map((s) => ({
              status: powerStateOf(s.status),
              busy: lockOf(s.lock) !== null,
              agentEnabled: s.agent ?? false
            })),
            vmErrors(vm),
            logged("status")
          ),

        start: (vm) => power(vm, "start", /already running/i),
        stop: (vm) => power(vm, "stop", /not running/i),
        shutdown: (vm, timeoutSeconds) =>
          withCluster(vm.cluster, (ctx) =>
            // The task itself lasts up to the guest's timeout; our wait allows that plus the usual task margin.
            runTask(ctx, "shutdown", requests.shutdown(vm, timeoutSeconds), Duration.sum(Duration.seconds(timeoutSeconds), Duration.fromInputUnsafe(options.taskTimeout))).pipe(
              Effect.asVoid,
              Effect.catchIf(says(/not running/i), () => Effect.void)
            )).pipe(
              vmErrors(vm),
              // "VM quit/powerdown failed - got timeout": the guest is still up (§3.7); the caller may force it.
              Effect.mapError((e) => e instanceof TaskFailed && isShutdownTimeout(e.exitStatus) ? new ShutdownTimedOut({ timeoutSeconds }) : e),
              logged("shutdown")
            ),
        reset: (vm) => power(vm, "reset", null),

        listSnapshots: (vm) =>
          withCluster(vm.cluster, (ctx) => call(ctx, "listSnapshots", requests.listSnapshots(vm), Snapshots)).pipe(
            // `current` is the live state, listed as a pseudo snapshot (§3.8).
            Effect.map((list) =>
              list.filter((s) => s.name !== "current").map((s) => ({
                name: s.name,
                description: s.description ?? "",
                createdAt: s.snaptime === undefined || s.snaptime === null ? null : new Date(s.snaptime * 1000)
              }))
            ),
            vmErrors(vm),
            logged("listSnapshots")
          ),

        createSnapshot: (vm, name, description) =>
          withCluster(vm.cluster, (ctx) => {
            const request = requests.createSnapshot(vm, name, description)
            const once = runTask(ctx, "createSnapshot", request, options.taskTimeout, { idempotent: false })
            // A lost answer may hide a snapshot that was taken: look before taking it again (§2.2).
            const attempt = (left: number): Effect.Effect<unknown, CallFailed | TaskFailed> =>
              once.pipe(Effect.catchIf(
                (e): e is CallFailed => e instanceof CallFailed && e.outcomeUnknown,
                (e) =>
                  Effect.flatMap(snapshotExists(ctx, vm, name), (exists) => {
                    if (exists) return Effect.void
                    return left > 0 ? Effect.andThen(Effect.sleep(retry.baseDelay), attempt(left - 1)) : Effect.fail(e)
                  })
              ))
            return attempt(retry.retries)
          }).pipe(Effect.asVoid, vmErrors(vm), logged("createSnapshot")),

        deleteSnapshot: (vm, name) =>
          withCluster(vm.cluster, (ctx) =>
            runTask(ctx, "deleteSnapshot", requests.deleteSnapshot(vm, name), options.taskTimeout).pipe(
              Effect.asVoid,
              // Deleting is idempotent: a snapshot already gone (e.g. by our own lost earlier attempt) is success.
              Effect.catchIf(says(/snapshot '[^']*' does not exist/i), () => Effect.void)
            )).pipe(vmErrors(vm), logged("deleteSnapshot")),

        guestExec: (vm, command, input) =>
          withCluster(vm.cluster, (ctx) =>
            Effect.gen(function*() {
              // Not repeated when its answer is lost: the command may already be running in the guest.
              const started = yield* call(ctx, "guestExec", requests.agentExec(vm, command, input), ExecStarted, {
                idempotent: false
              })
              const done = yield* call(ctx, "guestExec", requests.agentExecStatus(vm, started.pid), ExecStatus).pipe(
                Effect.repeat({ schedule: pollSchedule(polling), until: (s) => s.exited }),
                Effect.timeoutOrElse({
                  duration: options.guestExecTimeout,
                  orElse: () =>
                    Effect.fail(
                      new CallFailed({
                        operation: "guestExec",
                        status: null,
                        detail: `the command did not exit within ${formatDuration(options.guestExecTimeout)}`,
                        outcomeUnknown: true
                      })
                    )
                })
              )
              // A process killed by a signal has no exit code; the shell convention 128+n keeps it non-zero.
              const signal = done.signal ?? null
              const exitCode = done.exitcode ?? (signal === null ? -1 : 128 + signal)
              return { exitCode, stdout: done["out-data"] ?? "", stderr: done["err-data"] ?? "" }
            })).pipe(agentErrors, vmErrors(vm), logged("guestExec")),

        setGuestPassword: (vm, user, password) =>
          withCluster(vm.cluster, (ctx) =>
            call(
              ctx,
              "setGuestPassword",
              requests.setUserPassword(vm, user, Redacted.value(password)),
              Schema.Unknown
            )).pipe(
              Effect.asVoid,
              agentErrors,
              vmErrors(vm),
              logged("setGuestPassword")
            ),

        setStartOnBoot: (vm, enabled) => vmTask(vm, "setStartOnBoot", requests.setOnBoot(vm, enabled)),

        setCloudInitPassword: (vm, password) =>
          vmTask(vm, "setCloudInitPassword", requests.setCloudInitPassword(vm, Redacted.value(password))),

        destroy: (vm, stamp) =>
          withCluster(vm.cluster, (ctx) => destroyVm(ctx, vm, stamp, options.taskTimeout)).pipe(
            // Still missing on the node the cluster named: the VM is moving between nodes, so try again later.
            Effect.mapError((e) => (e instanceof CallFailed && isVmMissing(e) ? unavailable(e) : e)),
            clusterErrors,
            logged("destroy")
          ),

        openConsole: (vm) =>
          Effect.gen(function*() {
            const session = yield* sessions.forConsole(vm.cluster)
            if (session === null || session.ticket === null) {
              return yield* new ConsoleClosed({
                reason:
                  "the cluster signs in with an API token and has no console login: tokens cannot open the serial console"
              })
            }
            // PVE hands out a termproxy for a stopped VM and only fails once the socket is open (§4.1): ask first.
            const current = yield* withCluster(
              vm.cluster,
              (ctx) => call(ctx, "openConsole", requests.statusCurrent(vm), VmCurrentStatus)
            )
            if (current.status !== "running") {
              return yield* new ConsoleClosed({ reason: `the VM is not running (${current.status})` })
            }
            const ticket = yield* session.ticket
            return yield* openSerialConsole(session, ticket, vm, {
              keepAliveInterval: options.consoleKeepAlive,
              openTimeout: options.consoleOpenTimeout
            })
          }).pipe(vmErrors(vm), logged("openConsole"))
      })
    })
  )

export const layer: Layer.Layer<Virtualization, never, ProxmoxClusters | ProxmoxVmids> = layerWith()
