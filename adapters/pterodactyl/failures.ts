// What a failed panel or node call means: the adapter's one internal failure, the decoding of Pterodactyl's error
// envelope (reference/pterodactyl.md §1.3), its mapping onto the port's errors (here and nowhere else), which failures
// are worth another attempt, and the redaction that keeps keys, tokens, signed URLs and addresses out of every error.
import { Data, Duration, Effect, Schedule, Schema } from "effect"
import {
  BackupLimitReached,
  BackupLocked,
  FileAlreadyExists,
  FileTooLarge,
  GamePanelThrottled,
  GamePanelUnavailable,
  type PanelRefusal,
  PanelRefused,
  PanelResourceNotFound,
  PanelValidationFailed,
  ServerStateConflict
} from "../../ports/GamePanel.ts"

/**
 * One call that produced no usable answer. `status` is null when nothing came back (transport error, timeout, an
 * undecodable answer counts as 200 with code "UnexpectedAnswer"). Every text in it is already sanitized.
 */
export class CallFailed extends Data.TaggedError("CallFailed")<{
  readonly operation: string
  readonly status: number | null
  /** The panel's exception class (`ConflictHttpException`…), or ours (`TransportError`, `Timeout`). */
  readonly code: string
  readonly detail: string
  /** 422 only: one entry per failed rule per field. */
  readonly fields: ReadonlyArray<{ readonly field: string; readonly rule: string; readonly detail: string }>
  /** 429 only: seconds from Retry-After (a default when the header is missing). */
  readonly retryAfterSeconds: number | null
}> {}

export const failure = (
  operation: string,
  status: number | null,
  code: string,
  detail: string,
  extra: { readonly fields?: CallFailed["fields"]; readonly retryAfterSeconds?: number | null } = {}
) =>
  new CallFailed({
    operation,
    status,
    code,
    detail: sanitize(detail),
    fields: extra.fields ?? [],
    retryAfterSeconds: extra.retryAfterSeconds ?? null
  })

// --- the error envelope (§1.3) -------------------------------------------------------------------------------

const ErrorEntry = Schema.Struct({
  code: Schema.optional(Schema.NullOr(Schema.String)),
  status: Schema.optional(Schema.NullOr(Schema.Union([Schema.String, Schema.Finite]))),
  detail: Schema.optional(Schema.NullOr(Schema.String)),
  meta: Schema.optional(Schema.NullOr(Schema.Struct({
    source_field: Schema.optional(Schema.NullOr(Schema.String)),
    rule: Schema.optional(Schema.NullOr(Schema.String))
  })))
})

/** The panel's `{errors:[…]}`; Wings answers `{error: "…"}` on its own routes. */
const ErrorBody = Schema.Struct({
  errors: Schema.optional(Schema.Array(ErrorEntry)),
  error: Schema.optional(Schema.String)
})

const decodeErrorBody = Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))

/** Without the header a 429 is taken as the whole one-minute window of the panel's limiter (§1.5). */
export const defaultRetryAfterSeconds = 60

/** Retry-After is delta-seconds on Laravel's throttle; an HTTP date is accepted too (RFC 9110 §10.2.3). */
export const retryAfterSecondsOf = (header: string | undefined, now: number): number => {
  if (header === undefined) return defaultRetryAfterSeconds
  const value = header.trim()
  if (/^\d+$/.test(value)) return Number(value)
  const at = Date.parse(value)
  return Number.isNaN(at) ? defaultRetryAfterSeconds : Math.max(0, Math.ceil((at - now) / 1000))
}

/** A non-2xx answer as one CallFailed: code/detail from the first entry, fields from every 422 entry. */
export const fromErrorAnswer = (
  operation: string,
  status: number,
  body: string,
  retryAfterHeader: string | undefined,
  now: number
): CallFailed => {
  const decoded = decodeErrorBody(body)
  const entries = decoded._tag === "Some" ? decoded.value.errors ?? [] : []
  const first = entries[0]
  const wingsError = decoded._tag === "Some" ? decoded.value.error : undefined
  const code = first?.code ?? (wingsError !== undefined ? "WingsError" : `HTTP${status}`)
  const detail = first?.detail ?? wingsError ?? "no message"
  const fields = status === 422
    ? entries.map((e) => ({
      field: sanitize(e.meta?.source_field ?? "unknown"),
      rule: sanitize(e.meta?.rule ?? "unknown"),
      detail: sanitize(e.detail ?? "")
    }))
    : []
  const retryAfterSeconds = status === 429 ? retryAfterSecondsOf(retryAfterHeader, now) : null
  return failure(operation, status, code, detail, { fields, retryAfterSeconds })
}

// --- what is worth another attempt ---------------------------------------------------------------------------

/** No answer (transport error, timeout) or a 5xx: the panel or the node may answer next time. */
export const isTransient = (f: CallFailed) => f.status === null || f.status >= 500

export const isThrottled = (f: CallFailed) => f.status === 429

/**
 * The panel-wide limiter's 429 (`ThrottleRequestsException`, keyed by the key owner: every user of the relay shares
 * it). Per-server throttles (backup creation, §4.3) answer 429 with another exception class and block nothing else.
 */
export const isPanelWideThrottle = (f: CallFailed) =>
  f.status === 429 && (f.code === "ThrottleRequestsException" || f.code === "HTTP429")

export interface RetryPolicy {
  /** Extra attempts after the first one. */
  readonly retries: number
  readonly baseDelay: Duration.Input
}

/** Exponential back-off from `baseDelay`, capped at 5 s between attempts. */
export const backOff = (policy: RetryPolicy) =>
  Schedule.exponential(policy.baseDelay).pipe(
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(5))))
  )

// --- redaction ---------------------------------------------------------------------------------------------

/**
 * URLs (panel, node, signed URLs), JWTs and API keys (`ptla_`/`ptlc_`, Pelican's `papp_`/`pacc_`/`peli_`/`plcn_`).
 * Debug-mode panels put raw Guzzle messages with the node URL in `detail` (§1.3).
 */
const hiddenPatterns = [
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi,
  /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g,
  /\b(?:ptla|ptlc|papp|pacc|peli|plcn)_[A-Za-z0-9]+/g,
  /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g,
  /\b[a-z0-9-]+(?:\.[a-z0-9-]+)+:\d{2,5}\b/gi
]

/** A text safe to log: addresses and credentials replaced, whitespace folded, length bounded. */
export const sanitize = (text: string): string => {
  let out = text
  for (const pattern of hiddenPatterns) out = out.replace(pattern, "<hidden>")
  out = out.replace(/\s+/g, " ").trim()
  return out.length > 300 ? `${out.slice(0, 300)}…` : out
}

// --- the port's errors, in one place ------------------------------------------------------------------------------

export type PortError =
  | GamePanelUnavailable
  | GamePanelThrottled
  | PanelValidationFailed
  | ServerStateConflict
  | PanelResourceNotFound
  | PanelRefusal

const describe = (f: CallFailed) => (f.status === null ? `${f.code}: ${f.detail}` : `HTTP ${f.status} ${f.code}: ${f.detail}`)

export const unavailable = (f: CallFailed) => new GamePanelUnavailable({ operation: f.operation, detail: describe(f) })

/**
 * 422 → PanelValidationFailed, 409 → ServerStateConflict, 404 → PanelResourceNotFound, 429 → GamePanelThrottled,
 * no answer or 5xx → GamePanelUnavailable, any other 4xx → a refusal named by its exception class (refusalOf,
 * reference/pterodactyl.md §1.4, §4.1, §4.3).
 */
export const portError = (f: CallFailed): PortError => {
  const { operation, status } = f
  if (status === null || status >= 500 || status < 400) return unavailable(f)
  if (status === 422) return new PanelValidationFailed({ operation, fields: f.fields })
  if (status === 409) return new ServerStateConflict({ operation, detail: f.detail })
  if (status === 404) return new PanelResourceNotFound({ operation })
  if (status === 429) {
    return new GamePanelThrottled({ operation, retryAfterSeconds: f.retryAfterSeconds ?? defaultRetryAfterSeconds })
  }
  return refusalOf(f)
}

/** The panel's exception classes the domain gives a meaning to; any other refusal is PanelRefused. */
const refusals: Readonly<Record<string, (operation: string) => PanelRefusal>> = {
  TooManyBackupsException: (operation) => new BackupLimitReached({ operation }),
  BackupLockedException: (operation) => new BackupLocked({ operation }),
  FileSizeTooLargeException: (operation) => new FileTooLarge({ operation }),
  FileExistsException: (operation) => new FileAlreadyExists({ operation })
}

export const refusalOf = (f: CallFailed): PanelRefusal =>
  refusals[f.code]?.(f.operation) ?? new PanelRefused({ operation: f.operation, detail: describe(f) })

/** The tags of every refusal, for `portErrorAmong`. */
export const refusalTags = ["BackupLimitReached", "BackupLocked", "FileTooLarge", "FileAlreadyExists", "PanelRefused"] as const

/**
 * The port's error for an operation whose signature allows only `tags` (besides GamePanelUnavailable): any other
 * answer means the panel refused something it should not have (a key without the right ACL, a 422 on a lookup)
 * and is reported as unavailable, with the answer in the detail for the operator.
 */
export const portErrorAmong = <T extends PortError["_tag"]>(...tags: ReadonlyArray<T>) =>
(f: CallFailed): Extract<PortError, { readonly _tag: T }> | GamePanelUnavailable => {
  const error = portError(f)
  if (error._tag === "GamePanelUnavailable") return error
  return isAmong(error, tags) ? error : unavailable(f)
}

const isAmong = <T extends PortError["_tag"]>(
  error: PortError,
  tags: ReadonlyArray<T>
): error is Extract<PortError, { readonly _tag: T }> => (tags as ReadonlyArray<string>).includes(error._tag)
