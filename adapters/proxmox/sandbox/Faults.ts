// Injected upstream failures (SandboxControl.inject): answer with a status, never answer, drop or reset the connection,
// answer late, carry the call out and lose its answer, or let the call succeed and make its task fail. Each fault fires `times` times
// (default 1; `Infinity` until cleared) on requests it matches.
export type FaultKind =
  /** An error answer instead of the call: `errors` as a 400's parameter errors (`{ upid: "no such task" }`, §2.3). */
  | { readonly _tag: "status"; readonly status: number; readonly message?: string; readonly errors?: Readonly<Record<string, string>> }
  | { readonly _tag: "hang" }
  /** The task stops with `exitStatus`, its work undone, after writing `log` (default none) before its last line. */
  | { readonly _tag: "taskFailure"; readonly exitStatus: string; readonly log?: ReadonlyArray<string> }
  /** The connection is closed without an answer. */
  | { readonly _tag: "dropConnection" }
  /** The connection is reset (a TCP RST where there is TCP; in memory, closed) without an answer. */
  | { readonly _tag: "reset" }
  /** The call is carried out and answered as usual, `ms` later on the simulator's clock (a slow proxy or network). */
  | { readonly _tag: "delay"; readonly ms: number }
  /**
   * The call is carried out (a clone forked, a snapshot taken) but its answer is lost on the way back: the client gets
   * `status` instead, as pveproxy answers 596/599 when a proxied call outlives it while the operation finishes on the
   * node (reference/proxmox.md §2.2, "outcome unknown").
   */
  | { readonly _tag: "answerLost"; readonly status: number; readonly message?: string }

/** A fault answered before the call runs. */
export type TransportFault = Exclude<FaultKind, { _tag: "taskFailure" } | { _tag: "answerLost" }>

export interface Fault {
  /**
   * `path` is tested against the URI-unescaped path, `/api2/json/…` included (no query string); `query`, when given,
   * names parameters the query string must carry with these values (`{ type: "vm" }` for `/cluster/resources`);
   * `vm: "exists"` matches only requests about a VM that exists when they arrive (the config reads of a VM, not the
   * check that a VMID is free before a clone).
   */
  readonly match: {
    readonly method?: string
    readonly path: RegExp
    readonly query?: Readonly<Record<string, string>>
    readonly vm?: "exists"
  }
  readonly kind: FaultKind
  readonly times?: number
}

interface Armed {
  readonly fault: Fault
  remaining: number
}

const reasons: Readonly<Record<number, string>> = {
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  595: "Errors during connection establishment, proxy handshake",
  596: "Connection timed out",
  597: "Connection closed unexpectedly",
  599: "Too many redirects"
}

export const defaultFaultMessage = (status: number) => reasons[status] ?? `simulated error ${status}`

/** The JSON answer of a `status` or `answerLost` fault: status, reason phrase (the message's first line) and body. */
export const faultAnswer = (
  fault: Extract<FaultKind, { _tag: "status" | "answerLost" }>
): { readonly status: number; readonly reason: string; readonly body: Record<string, unknown> } => {
  const message = `${fault.message ?? defaultFaultMessage(fault.status)}\n`
  const errors = fault._tag === "status" && fault.errors !== undefined ? { errors: fault.errors } : {}
  return { status: fault.status, reason: message.split("\n")[0] ?? "", body: { data: null, ...errors, message } }
}

/**
 * What the front does with a request a transport fault caught: wait `delayMs` on the simulator's clock, then answer
 * with a PVE error (`body` on a request, the status line and `message` on a WebSocket upgrade), never answer, drop or
 * reset the connection, or go on with the call as usual. A fault kind is mapped to one of these here, so a new kind
 * needs no change in the front.
 */
export interface TransportAction {
  readonly delayMs: number
  readonly then:
    | {
      readonly _tag: "respond"
      readonly status: number
      readonly reason: string
      readonly message: string
      readonly body: Record<string, unknown>
    }
    | { readonly _tag: "hang" }
    | { readonly _tag: "drop" }
    | { readonly _tag: "reset" }
    | { readonly _tag: "proceed" }
}

const transportAction = (fault: TransportFault): TransportAction => {
  switch (fault._tag) {
    case "status":
      return {
        delayMs: 0,
        then: { _tag: "respond", message: `${fault.message ?? defaultFaultMessage(fault.status)}\n`, ...faultAnswer(fault) }
      }
    case "hang":
      return { delayMs: 0, then: { _tag: "hang" } }
    case "dropConnection":
      return { delayMs: 0, then: { _tag: "drop" } }
    case "reset":
      return { delayMs: 0, then: { _tag: "reset" } }
    case "delay":
      return { delayMs: fault.ms, then: { _tag: "proceed" } }
  }
}

/** The VMID a `/nodes/{node}/qemu/{vmid}…` path names, if it names one. */
export const vmidIn = (path: string): number | undefined => {
  const found = /^\/api2\/json\/nodes\/[^/]+\/qemu\/(\d+)(?:\/|$)/.exec(path)?.[1]
  return found === undefined ? undefined : Number(found)
}

export class Faults {
  private armed: Array<Armed> = []
  private readonly vmExists: (vmid: number) => boolean

  constructor(vmExists: (vmid: number) => boolean) {
    this.vmExists = vmExists
  }

  inject(fault: Fault): void {
    this.armed.push({ fault, remaining: fault.times ?? 1 })
  }

  clear(): void {
    this.armed = []
  }

  private find(
    method: string,
    path: string,
    query: Readonly<Record<string, unknown>>,
    stage: "transport" | "taskFailure" | "answerLost"
  ): Armed | undefined {
    return this.armed.find(({ fault, remaining }) => {
      const at = fault.kind._tag === "taskFailure" || fault.kind._tag === "answerLost" ? fault.kind._tag : "transport"
      if (remaining <= 0 || at !== stage) return false
      if (fault.match.method !== undefined && fault.match.method.toUpperCase() !== method) return false
      if (Object.entries(fault.match.query ?? {}).some(([name, value]) => String(query[name]) !== value)) return false
      if (fault.match.vm === "exists") {
        const vmid = vmidIn(path)
        if (vmid === undefined || !this.vmExists(vmid)) return false
      }
      fault.match.path.lastIndex = 0
      return fault.match.path.test(path)
    })
  }

  private consume(armed: Armed): void {
    armed.remaining -= 1
    if (armed.remaining <= 0) this.armed = this.armed.filter((a) => a !== armed)
  }

  /** What a transport fault (status, hang, drop, reset, delay) makes of this request, the fault consumed. */
  takeTransport(method: string, path: string, query: Readonly<Record<string, unknown>>): TransportAction | undefined {
    const armed = this.find(method, path, query, "transport")
    const kind = armed?.fault.kind
    if (armed === undefined || kind === undefined || kind._tag === "taskFailure" || kind._tag === "answerLost") return undefined
    this.consume(armed)
    return transportAction(kind)
  }

  /**
   * The answer a call that has run gives: `answer` itself, or an `answerLost` fault's error in its place (consumed).
   * Decided after the call, so what the call did stays done.
   */
  answerOf(
    method: string,
    path: string,
    query: Readonly<Record<string, unknown>>,
    answer: { readonly status: number; readonly reason: string; readonly body: Record<string, unknown> }
  ): { readonly status: number; readonly reason: string; readonly body: Record<string, unknown> } {
    const armed = this.find(method, path, query, "answerLost")
    if (armed === undefined || armed.fault.kind._tag !== "answerLost") return answer
    this.consume(armed)
    return faultAnswer(armed.fault.kind)
  }

  /** The exit status a `taskFailure` fault imposes on this request's task; consumed only when a task is forked. */
  taskFailure(
    method: string,
    path: string,
    query: Readonly<Record<string, unknown>>
  ): { readonly exitStatus: string; readonly log: ReadonlyArray<string>; consume(): void } | undefined {
    const armed = this.find(method, path, query, "taskFailure")
    if (armed === undefined || armed.fault.kind._tag !== "taskFailure") return undefined
    return { exitStatus: armed.fault.kind.exitStatus, log: armed.fault.kind.log ?? [], consume: () => this.consume(armed) }
  }
}
