// Injected upstream failures (SandboxControl.inject): answer with a status, never answer, drop the socket, or let the
// call succeed and make its task fail. Each fault fires `times` times (default 1; `Infinity` until cleared) on requests it matches.
export type FaultKind =
  | { readonly _tag: "status"; readonly status: number; readonly message?: string }
  | { readonly _tag: "hang" }
  | { readonly _tag: "taskFailure"; readonly exitStatus: string }
  | { readonly _tag: "dropConnection" }

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

/**
 * What the front does with a request a transport fault caught: answer with a PVE error body, never answer, or drop
 * the connection. A fault kind is mapped to one of these here, so a new kind needs no change in the front.
 */
export type TransportAction =
  | { readonly _tag: "respond"; readonly status: number; readonly message: string }
  | { readonly _tag: "hang" }
  | { readonly _tag: "drop" }

const transportAction = (kind: Exclude<FaultKind, { _tag: "taskFailure" }>): TransportAction => {
  switch (kind._tag) {
    case "status":
      return { _tag: "respond", status: kind.status, message: `${kind.message ?? defaultFaultMessage(kind.status)}\n` }
    case "hang":
      return { _tag: "hang" }
    case "dropConnection":
      return { _tag: "drop" }
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

  private find(method: string, path: string, query: Readonly<Record<string, unknown>>, wantTask: boolean): Armed | undefined {
    return this.armed.find(({ fault, remaining }) => {
      if (remaining <= 0 || (fault.kind._tag === "taskFailure") !== wantTask) return false
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

  /** What a transport fault (status, hang, drop) makes of this request, the fault consumed. */
  takeTransport(method: string, path: string, query: Readonly<Record<string, unknown>>): TransportAction | undefined {
    const armed = this.find(method, path, query, false)
    if (armed === undefined || armed.fault.kind._tag === "taskFailure") return undefined
    this.consume(armed)
    return transportAction(armed.fault.kind)
  }

  /** The exit status a `taskFailure` fault imposes on this request's task; consumed only when a task is forked. */
  taskFailure(method: string, path: string, query: Readonly<Record<string, unknown>>): { readonly exitStatus: string; consume(): void } | undefined {
    const armed = this.find(method, path, query, true)
    if (armed === undefined || armed.fault.kind._tag !== "taskFailure") return undefined
    return { exitStatus: armed.fault.kind.exitStatus, consume: () => this.consume(armed) }
  }
}
