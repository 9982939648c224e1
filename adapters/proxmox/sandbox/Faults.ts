// Injected upstream failures (SandboxControl.inject): answer with a status, never answer, drop the socket, or let the
// call succeed and make its task fail. Each fault fires `times` times (default 1) on requests it matches.
export type FaultKind =
  | { readonly _tag: "status"; readonly status: number; readonly message?: string }
  | { readonly _tag: "hang" }
  | { readonly _tag: "taskFailure"; readonly exitStatus: string }
  | { readonly _tag: "dropConnection" }

export interface Fault {
  /** `path` is tested against the URI-unescaped path, `/api2/json/…` included (no query string). */
  readonly match: { readonly method?: string; readonly path: RegExp }
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

export class Faults {
  private armed: Array<Armed> = []

  inject(fault: Fault): void {
    this.armed.push({ fault, remaining: fault.times ?? 1 })
  }

  clear(): void {
    this.armed = []
  }

  private find(method: string, path: string, wantTask: boolean): Armed | undefined {
    return this.armed.find(({ fault, remaining }) => {
      if (remaining <= 0 || (fault.kind._tag === "taskFailure") !== wantTask) return false
      if (fault.match.method !== undefined && fault.match.method.toUpperCase() !== method) return false
      fault.match.path.lastIndex = 0
      return fault.match.path.test(path)
    })
  }

  private consume(armed: Armed): void {
    armed.remaining -= 1
    if (armed.remaining <= 0) this.armed = this.armed.filter((a) => a !== armed)
  }

  /** A status, hang or drop fault for this request, consumed. */
  takeTransport(method: string, path: string): Exclude<FaultKind, { _tag: "taskFailure" }> | undefined {
    const armed = this.find(method, path, false)
    if (armed === undefined || armed.fault.kind._tag === "taskFailure") return undefined
    this.consume(armed)
    return armed.fault.kind
  }

  /** The exit status a `taskFailure` fault imposes on this request's task; consumed only when a task is forked. */
  taskFailure(method: string, path: string): { readonly exitStatus: string; consume(): void } | undefined {
    const armed = this.find(method, path, true)
    if (armed === undefined || armed.fault.kind._tag !== "taskFailure") return undefined
    return { exitStatus: armed.fault.kind.exitStatus, consume: () => this.consume(armed) }
  }
}
