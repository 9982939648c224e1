// Calls with the adapter's retry rules: reads and idempotent writes are retried on transient failures; writes whose
// outcome is unknown are left to the caller, who must re-read state first (reference/proxmox.md §2.2, §5.3, §5.5).
// Asynchronous calls wait for their task, and a task that lost a lock race is run again.
import { type Duration, Effect, type Schema } from "effect"
import type { TaskFailed } from "../../ports/Virtualization.ts"
import type { ProxmoxRequest } from "./encoding.ts"
import { CallFailed, isLocked, isTransient, retrying, type RetryPolicy } from "./failures.ts"
import type { ProxmoxSession } from "./ProxmoxSession.ts"
import { dataAs, TaskId } from "./responses.ts"
import { type TaskPolling, waitForTask } from "./tasks.ts"

export interface CallContext {
  readonly session: ProxmoxSession
  readonly retry: RetryPolicy
  readonly polling: TaskPolling
}

/**
 * A retry is safe for anything idempotent; for the rest only when the failure proves nothing happened (an answer that
 * is not a 59x).
 */
const retryableFor = (idempotent: boolean) => (f: CallFailed) => isTransient(f) && (idempotent || !f.outcomeUnknown)

export const call = <S extends Schema.Top & { readonly DecodingServices: never }>(
  ctx: CallContext,
  operation: string,
  request: ProxmoxRequest,
  schema: S,
  options: { readonly idempotent: boolean } = { idempotent: true }
): Effect.Effect<S["Type"], CallFailed> =>
  retrying(
    Effect.flatMap(ctx.session.send(operation, request), dataAs(schema, operation)),
    ctx.retry,
    retryableFor(options.idempotent)
  )

/** A task that failed because another operation held the VM or its storage (§5.2, §5.3). */
export const isLockedTask = (e: CallFailed | TaskFailed): e is TaskFailed => e._tag === "TaskFailed" && isLocked(e.exitStatus)

/**
 * Sends an asynchronous call and waits for its task (a null answer means it already finished). A task that failed on
 * a lock is started again, within the retry bound; a lock still held after the last attempt is the same trouble as a
 * lock PVE answers at once (a config write's 500 "VM is locked"): the operation is unavailable for now, not refused.
 * Returns the task's exit status.
 */
export const runTask = (
  ctx: CallContext,
  operation: string,
  request: ProxmoxRequest,
  timeout: Duration.Input,
  options: { readonly idempotent: boolean } = { idempotent: true }
): Effect.Effect<string, CallFailed | TaskFailed> =>
  retrying(
    Effect.gen(function*() {
      const upid = yield* call(ctx, operation, request, TaskId, options)
      if (upid === null) return "OK"
      return yield* waitForTask(ctx.session, operation, upid, timeout, ctx.polling)
    }),
    ctx.retry,
    isLockedTask
  ).pipe(Effect.catchIf(isLockedTask, (e) =>
    Effect.fail(new CallFailed({ operation: e.operation, status: 500, detail: e.exitStatus, outcomeUnknown: false }))))
