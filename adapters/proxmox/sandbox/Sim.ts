// Everything one sandbox instance holds, shared by the routes, the console and the control surface.
import type { Auth } from "./Auth.ts"
import type { Cluster } from "./Cluster.ts"
import type { Consoles } from "./Consoles.ts"
import type { Faults } from "./Faults.ts"
import type { SimClock } from "./SimClock.ts"
import type { Tasks } from "./Tasks.ts"

export interface RecordedRequest {
  readonly method: string
  /** URI-unescaped, `/api2/json/…` included, without the query string. */
  readonly path: string
  readonly query: Readonly<Record<string, unknown>>
  /** The decoded body parameters (form or JSON). */
  readonly body: Readonly<Record<string, unknown>>
  readonly headers: Readonly<Record<string, string>>
  /** Whether the VM the path names (`/nodes/{node}/qemu/{vmid}…`) existed when the request arrived; null: it names none. */
  readonly vmExists: boolean | null
  /** When it arrived, in ms on the simulated clock (SimClock.now). */
  readonly at: number
}

export interface Sim {
  readonly clock: SimClock
  readonly auth: Auth
  readonly cluster: Cluster
  readonly tasks: Tasks
  readonly consoles: Consoles
  readonly faults: Faults
  readonly requests: Array<RecordedRequest>
  /** How many of the most recent requests `requests` keeps. */
  readonly requestLogLimit: number
  /** Delay before every 401 (PVE waits ~3 s; the sandbox defaults to none). */
  readonly authFailureDelayMs: number
  /** Clustername returned by `POST /access/ticket`. */
  readonly clusterName: string
  /** Called after anything that may have changed durable state (a write call, a task's end); saves the state file. */
  readonly changed: () => void
}
