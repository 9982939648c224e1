// Everything one sandbox instance holds, shared by the panel, Wings and the control surface.
import type { Faults, RateLimiter } from "./Faults.ts"
import type { SimClock } from "./SimClock.ts"
import type { Tokens } from "./Tokens.ts"
import type { InstallOutcome, World } from "./World.ts"

export interface Settings {
  readonly installDurationMs: number
  readonly wingsTokenTtlMs: number
  readonly signedUrlTtlMs: number
  /** Per minute per user; the control's `setRateLimits` changes them while the sandbox runs. */
  readonly rateLimits: { application: number; client: number }
  readonly backupThrottle: { readonly limit: number; readonly periodMs: number }
  readonly uploadLimitMiB: number
  /** Whether allocation lists honour `filter[server_id]` (panel ≥ 1.8.0, §2.11); a pre-1.8 panel lists them all. */
  readonly allocationServerFilter: boolean
  readonly warn: (message: string) => void
}

export interface RecordedRequest {
  readonly target: "panel" | "wings"
  readonly method: string
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  readonly accept: string | null
  /** Whether an Authorization header was sent (its value is never kept). */
  readonly authorization: boolean
  /** Which kind of API key the Bearer token looks like, by its prefix (§1.1); null without one. */
  readonly key: "application" | "client" | "other" | null
  readonly origin: string | null
  readonly contentType: string | null
  /** The panel request's body bytes as they arrived, its first 64 KiB (empty before it is read, and on Wings). */
  readonly body: Buffer
}

export interface Sim {
  readonly settings: Settings
  readonly world: World
  readonly faults: Faults
  readonly limiter: RateLimiter
  readonly tokens: Tokens
  readonly requests: Array<RecordedRequest>
  /** How many of the most recent requests `requests` keeps. */
  readonly requestLogLimit: number
  readonly installOutcomes: { default: InstallOutcome; readonly byExternalId: Map<string, InstallOutcome> }
  /** Node downloads whose body is still being sent (a reader that neither reads nor closes keeps one here). */
  readonly transfers: { inFlight: number }
  panelUrl: string
  nodeUrl: string
  /** Now, and work done later (cancelled on close). */
  readonly clock: SimClock
  /** Something durable may have changed (the `stateFile` option saves soon after); a no-op without a state file. */
  changed(): void
}

export const recordRequest = (
  sim: Sim,
  target: RecordedRequest["target"],
  method: string,
  url: URL,
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
) => {
  const header = (name: string) => {
    const v = headers[name]
    return v === undefined ? null : typeof v === "string" ? v : v.join(", ")
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(header("authorization") ?? "")?.[1]
  const recorded: { -readonly [K in keyof RecordedRequest]: RecordedRequest[K] } = {
    target,
    method,
    path: url.pathname,
    // Signed-URL tokens are secrets: the log keeps that one was sent, not its value.
    query: Object.fromEntries([...url.searchParams].map(([k, v]) => [k, k === "token" ? "<redacted>" : v])),
    accept: header("accept"),
    authorization: headers["authorization"] !== undefined,
    key: bearer === undefined ? null : bearer.startsWith("ptla_") ? "application" : bearer.startsWith("ptlc_") ? "client" : "other",
    origin: header("origin"),
    contentType: header("content-type"),
    body: Buffer.alloc(0)
  }
  sim.requests.push(recorded)
  // Trimmed a tenth at a time, so that each request pays for the trim only once in a while.
  if (sim.requests.length > sim.requestLogLimit * 1.1) sim.requests.splice(0, sim.requests.length - sim.requestLogLimit)
  return recorded
}

const KEPT_BODY_BYTES = 64 * 1024

/** A request body as the log keeps it: a copy of its first 64 KiB (the log lives as long as the sandbox). */
export const keptBody = (raw: Buffer): Buffer => Buffer.from(raw.subarray(0, KEPT_BODY_BYTES))
