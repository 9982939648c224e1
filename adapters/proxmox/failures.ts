// What a failed Proxmox call means: the adapter's one internal failure, how PVE's status codes and messages are
// recognised (reference/proxmox.md §2.2, §5), which failures are worth another attempt, and the redaction that keeps
// tickets, CSRF tokens and passwords out of every error and log.
import { Data, Duration, Effect, Schedule } from "effect"
import { TaskFailed, VirtualizationUnavailable } from "../../ports/Virtualization.ts"

/**
 * One call that produced no usable answer. `status` is null when nothing came back (transport error or timeout);
 * `outcomeUnknown` says the server may still have acted on it (59x proxy timeouts, lost answers — §2.2).
 */
export class CallFailed extends Data.TaggedError("CallFailed")<{
  readonly operation: string
  readonly status: number | null
  /** Already sanitized. */
  readonly detail: string
  readonly outcomeUnknown: boolean
}> {}

export interface RetryPolicy {
  /** Extra attempts after the first one. */
  readonly retries: number
  readonly baseDelay: Duration.Input
}

// --- recognising PVE's messages (§2.2, §3.9, §5) -----------------------------------------------------------

/** `Configuration file 'nodes/<node>/qemu-server/<vmid>.conf' does not exist`: a missing VM, or the wrong node. */
export const isVmMissing = (f: CallFailed) => /configuration file .* does not exist/i.test(f.detail)

/** `VM is locked (clone)`, `can't lock file '…' - got timeout`: another operation holds the VM or the storage. */
export const isLocked = (text: string) => /VM is locked|can't lock file|got timeout/i.test(text) && !isShutdownTimeout(text)

/** `VM quit/powerdown failed - got timeout`: a graceful shutdown whose guest is still up (§3.7), not a lock. */
export const isShutdownTimeout = (text: string) => /quit\/powerdown failed/i.test(text)

/** `unable to create VM N: config file already exists`, `VM N already exists` (nextid). */
export const isAlreadyExists = (text: string) => /already exists/i.test(text)

/** A fresh UPID whose log file is not written yet, or asked on the wrong node (§2.3). */
export const isNoSuchTask = (f: CallFailed) => f.status === 400 && /no such task/i.test(f.detail)

/** "No QEMU guest agent configured", "QEMU guest agent is not running", "VM 101 is not running" (§3.9). */
export const isAgentUnavailable = (f: CallFailed) => f.status === 500 && /guest agent|not running/i.test(f.detail)

/** 59x are pveproxy's own answers when forwarding timed out: the target may still be working (§2.2). */
const isProxyPseudoStatus = (status: number) => status >= 595 && status <= 599

export const outcomeUnknownStatus = (status: number) => isProxyPseudoStatus(status)

/**
 * 500s that state a fact about the VM or the request rather than a passing trouble: asking again gets the same answer
 * (a stopped VM to reset, snapshot `current`, an SSH key PVE cannot parse — §3.5, §3.7, §3.8, §3.10).
 */
const isDefinite = (text: string) =>
  /does not exist|already exists|already running|not running|is running|guest agent|protection|reserved name|SSH public key validation error/i
    .test(text)

/**
 * Worth another attempt: no answer, 59x, a lock held by someone else, or a 5xx that is not one of the messages with a
 * meaning of their own. Callers retry `outcomeUnknown` failures of non-idempotent calls only after re-reading state.
 */
export const isTransient = (f: CallFailed): boolean => {
  if (f.status === null) return true
  if (isLocked(f.detail)) return true
  if (f.status < 500 || f.status === 501) return false
  return !isDefinite(f.detail)
}

/** Exponential back-off from `baseDelay`, capped at 5 s between attempts. */
export const backOff = (policy: RetryPolicy) =>
  Schedule.exponential(policy.baseDelay).pipe(
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(5))))
  )

/** Retries `effect` while its failure passes `retryable`, up to the policy's bound. */
export const retrying = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  policy: RetryPolicy,
  retryable: (e: E) => boolean
): Effect.Effect<A, E, R> =>
  Effect.retry(effect, { schedule: backOff(policy), times: policy.retries, while: retryable })

// --- redaction ------------------------------------------------------------------------------------------

/** Tickets (`PVE:user:HEX::sig`, `PVEVNC:…`), API-token headers and CSRF tokens (`HEX8:base64`). */
const credentialPatterns = [
  /PVE(?:VNC)?:[^\s"',;]+/g,
  /PVEAPIToken[=\s][^\s"',;]+/g,
  /PVEAuthCookie=[^\s"',;]+/g,
  /\b[0-9A-F]{8}:[A-Za-z0-9+/]{20,}={0,2}/g
]

/** A detail safe to show an operator: credentials and the request's secrets replaced, length bounded. */
export const sanitize = (text: string, secrets: ReadonlyArray<string> = []): string => {
  let out = text
  for (const secret of secrets) {
    if (secret.length > 0) out = out.split(secret).join("<redacted>")
  }
  for (const pattern of credentialPatterns) out = out.replace(pattern, "<redacted>")
  out = out.replace(/\s+/g, " ").trim()
  return out.length > 500 ? `${out.slice(0, 500)}…` : out
}

/** `2m`, `35s`: for details such as "no answer within 35s". */
export const formatDuration = (duration: Duration.Input) => Duration.format(Duration.fromInputUnsafe(duration))

export const describe = (f: CallFailed) => (f.status === null ? f.detail : `HTTP ${f.status}: ${f.detail}`)

export const unavailable = (f: CallFailed) =>
  new VirtualizationUnavailable({ operation: f.operation, detail: describe(f) })

/**
 * PVE said no at once and will say it again: a parameter it rejects (400 "Parameter verification failed", §2.2) or a
 * 500 stating a definite fact. The caller must change something, so it is not "try again later".
 */
export const isRefusal = (f: CallFailed) =>
  !f.outcomeUnknown && (f.status === 400 || (f.status === 500 && !isTransient(f)))

/** A refusal as the port reports a failed task: the synchronous answer stands in for the exit status; no log. */
export const refused = (f: CallFailed) => new TaskFailed({ operation: f.operation, exitStatus: describe(f), log: [] })

/** The port's error for a call that failed: a refusal is TaskFailed, anything else VirtualizationUnavailable. */
export const portError = (f: CallFailed) => (isRefusal(f) ? refused(f) : unavailable(f))
