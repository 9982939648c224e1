// Full clone of a template, the one call that is neither idempotent nor safe to repeat blindly: a VMID race surfaces
// as VmidTaken, and a clone whose answer was lost (59x, timeout) is settled by re-reading the target before any
// retry (reference/proxmox.md §2.2, §3.4, §5.1, §5.5).
import { type Duration, Effect, Schema } from "effect"
import { TaskFailed } from "../../ports/Virtualization.ts"
import { call, type CallContext } from "./calls.ts"
import { CallFailed, isAlreadyExists, isLocked, isVmMissing } from "./failures.ts"
import { requests, type VmAddress } from "./requests.ts"
import { TaskId, VmCurrentStatus } from "./responses.ts"
import { pollSchedule, waitForTask } from "./tasks.ts"

/** The VMID is already used by another VM: the allocator sets it aside and picks another one. */
export class VmidTaken extends Schema.TaggedError<VmidTaken>()("VmidTaken", { vmid: Schema.Number }) {}

export interface CloneRequest {
  readonly template: VmAddress
  readonly newid: number
  readonly name: string
  readonly storage: string
  /** Our ownership stamp (the order id), in the clone's description. */
  readonly stamp: string
}

const operation = "cloneTemplate"

/** What the target VMID holds right now, read on the template's node, where the clone is created. */
type TargetState = "missing" | "ours-in-progress" | "ours-done" | "someone-else"

const readTarget = (ctx: CallContext, clone: CloneRequest): Effect.Effect<TargetState, CallFailed> =>
  call(ctx, operation, requests.statusCurrent({ node: clone.template.node, vmid: clone.newid }), VmCurrentStatus).pipe(
    Effect.map((vm): TargetState => {
      // A clone in progress carries `lock: clone` from its first moment (§3.4); a finished one has our name.
      if (vm.lock === "clone") return "ours-in-progress"
      return vm.name === clone.name ? "ours-done" : "someone-else"
    }),
    Effect.catchIf(isVmMissing, () => Effect.succeed<TargetState>("missing"))
  )

/** Waits until a clone we did not see start is finished (done) or cleaned up after failing (missing). */
const settle = (ctx: CallContext, clone: CloneRequest, timeout: Duration.Input) =>
  readTarget(ctx, clone).pipe(
    Effect.repeat({
      schedule: pollSchedule(ctx.polling),
      until: (state) => state !== "ours-in-progress"
    }),
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(
          new CallFailed({ operation, status: null, detail: "the clone is still running", outcomeUnknown: true })
        )
    })
  )

const taken = (clone: CloneRequest) => new VmidTaken({ vmid: clone.newid })

/**
 * Clones and waits for the task. `already exists` (synchronous or in the task) is a VMID race: VmidTaken, so the caller
 * picks another id — unless it answers our own earlier attempt, which re-reading the target tells apart.
 */
export const cloneTemplate = (
  ctx: CallContext,
  clone: CloneRequest,
  timeout: Duration.Input
): Effect.Effect<void, CallFailed | TaskFailed | VmidTaken> => {
  type Outcome = Effect.Effect<void, CallFailed | TaskFailed | VmidTaken>

  /** Where a clone whose outcome we did not see stands, and what to do about it. */
  const fromTarget = (failure: CallFailed, retriesLeft: number): Outcome =>
    Effect.flatMap(readTarget(ctx, clone), (state): Outcome => {
      if (state === "ours-done") return Effect.void
      if (state === "someone-else") return Effect.fail(taken(clone))
      if (state === "missing") return retriesLeft > 0 ? again(retriesLeft) : Effect.fail(failure)
      return Effect.flatMap(settle(ctx, clone, timeout), (settled): Outcome => {
        if (settled === "ours-done") return Effect.void
        if (settled === "someone-else") return Effect.fail(taken(clone))
        // The clone failed and PVE removed what it had created (§3.4).
        return retriesLeft > 0 ? again(retriesLeft) : Effect.fail(failure)
      })
    })

  const attempt = (retriesLeft: number, retried: boolean): Outcome =>
    Effect.gen(function*() {
      const sent = yield* call(
        ctx,
        operation,
        requests.clone(clone.template, clone.newid, clone.name, clone.storage, clone.stamp),
        TaskId,
        { idempotent: false }
      ).pipe(Effect.result)
      if (sent._tag === "Failure") {
        const failure = sent.failure
        if (isAlreadyExists(failure.detail)) {
          return yield* (retried ? fromTarget(failure, retriesLeft) : Effect.fail(taken(clone)))
        }
        if (failure.outcomeUnknown) return yield* fromTarget(failure, retriesLeft)
        return yield* failure
      }
      if (sent.success === null) return
      const waited = yield* Effect.result(waitForTask(ctx.session, operation, sent.success, timeout, ctx.polling))
      if (waited._tag === "Success") return
      const failure = waited.failure
      if (failure._tag === "CallFailed") return yield* fromTarget(failure, retriesLeft)
      if (isAlreadyExists(failure.exitStatus)) return yield* taken(clone)
      // A failed clone removes what it created, so a lost lock race is simply run again (§3.4, §5.3).
      if (isLocked(failure.exitStatus) && retriesLeft > 0) return yield* again(retriesLeft)
      return yield* failure
    })

  /** Another attempt after a pause; it may meet its own predecessor, so "already exists" is re-read, not trusted. */
  const again = (retriesLeft: number): Outcome =>
    Effect.sleep(ctx.retry.baseDelay).pipe(Effect.andThen(attempt(retriesLeft - 1, true)))

  return attempt(ctx.retry.retries, false)
}
