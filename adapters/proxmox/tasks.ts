// Waiting for PVE's asynchronous tasks: the node named in the UPID is asked for the task's status with back-off until
// it stops, within a per-operation deadline; a failed task brings the last lines of its log
// (reference/proxmox.md §2.3).
import { Duration, Effect, Option, Schedule } from "effect"
import { TaskFailed } from "../../ports/Virtualization.ts"
import { CallFailed, isNoSuchTask, isTransient, sanitize } from "./failures.ts"
import type { ProxmoxSession } from "./ProxmoxSession.ts"
import { requests } from "./requests.ts"
import { dataAs, TaskLog, TaskStatus } from "./responses.ts"

export interface TaskPolling {
  /** First pause between two status reads; doubles up to `maxInterval`. */
  readonly initialInterval: Duration.Input
  readonly maxInterval: Duration.Input
  /** Lines of the task log kept in a TaskFailed. */
  readonly logLines: number
}

/** `UPID:<node>:<pid>:<pstart>:<starttime>:<type>:<id>:<user>:` — the node is the second field (§2.3). */
export const nodeOfUpid = (upid: string): string | undefined => {
  const fields = upid.split(":")
  return fields[0] === "UPID" && fields.length >= 9 && fields[1] !== "" ? fields[1] : undefined
}

/** `OK`, or `WARNINGS: n`, which pve-common counts as success (§2.3, §5.11). */
export const isSuccessfulExit = (exitStatus: string) => exitStatus === "OK" || exitStatus.startsWith("WARNINGS")

/**
 * `initialInterval` for the first second (most config, resize and power tasks end within it, and each late poll
 * adds straight to provisioning time), then a thirty-second of the time elapsed, up to `maxInterval`: a task of a
 * few seconds (a clone) is noticed at most ~3 % late, and a slow one is not asked about more than every `maxInterval`.
 */
export const pollSchedule = (polling: TaskPolling) => {
  const initial = Duration.toMillis(Duration.fromInputUnsafe(polling.initialInterval))
  const max = Duration.toMillis(Duration.fromInputUnsafe(polling.maxInterval))
  return Schedule.spaced(polling.initialInterval).pipe(
    Schedule.modifyDelay(({ elapsed }) => {
      return Effect.succeed(Duration.millis(elapsed < 1000 ? initial : Math.round(Math.min(max, Math.max(initial, elapsed / 32)))))
    })
  )
}

/** The last `lines` lines: the log is paged from the start, and its envelope's `total` says where the end is (§2.3). */
const lastLogLines = (session: ProxmoxSession, operation: string, node: string, upid: string, lines: number) =>
  Effect.gen(function*() {
    const page = 50
    const first = yield* session.send(operation, requests.taskLog(node, upid, 0, page))
    const firstLines = yield* dataAs(TaskLog, operation)(first)
    const total = first.total ?? firstLines.length
    const tail = total > page
      ? yield* Effect.flatMap(
        session.send(operation, requests.taskLog(node, upid, Math.max(0, total - lines), lines)),
        dataAs(TaskLog, operation)
      )
      : firstLines
    return tail.map((line) => sanitize(line.t)).filter((t) => t !== "").slice(-lines)
  }).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))

/**
 * Resolves with the task's exit status once it stopped successfully. Fails TaskFailed for any other exit status;
 * CallFailed when the deadline passes or the status cannot be read. A 400 "no such task" is the task log not being
 * written yet (or a lagging node) and is read again, like transient failures (§2.3).
 */
export const waitForTask = (
  session: ProxmoxSession,
  operation: string,
  upid: string,
  timeout: Duration.Input,
  polling: TaskPolling
): Effect.Effect<string, TaskFailed | CallFailed> =>
  Effect.gen(function*() {
    const node = nodeOfUpid(upid)
    if (node === undefined) {
      return yield* new CallFailed({ operation, status: 200, detail: "malformed task id", outcomeUnknown: true })
    }
    const read = session.send(operation, requests.taskStatus(node, upid)).pipe(
      Effect.flatMap(dataAs(TaskStatus, operation)),
      Effect.map((task) =>
        task.status === "stopped" ? Option.some(task.exitstatus ?? "unexpected status") : Option.none<string>()
      ),
      Effect.catchIf((f) => isNoSuchTask(f) || isTransient(f), () => Effect.succeed(Option.none<string>()))
    )
    const exit = yield* read.pipe(
      Effect.repeat({ schedule: pollSchedule(polling), until: Option.isSome }),
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(
            new CallFailed({
              operation,
              status: null,
              detail: `task still running after ${Duration.format(Duration.fromInputUnsafe(timeout))}`,
              outcomeUnknown: true
            })
          )
      })
    )
    const exitStatus = Option.getOrElse(exit, () => "unexpected status")
    if (isSuccessfulExit(exitStatus)) return exitStatus
    const log = yield* lastLogLines(session, operation, node, upid, polling.logLines)
    return yield* new TaskFailed({ operation, exitStatus: sanitize(exitStatus), log })
  })
