// The in-process control surface of a sandbox Pterodactyl (not reachable over HTTP): install outcomes, injected
// failures and throttles, extra nodes and allocations, files, console events, token denylist, and read-only
// snapshots of the servers, the request log and the tokens issued (never their values).
import type { FailSpec, ThrottleSpec } from "./Faults.ts"
import type { FileData } from "./FileTree.ts"
import { materialize } from "./FileTree.ts"
import type { RecordedRequest, Sim } from "./Sim.ts"
import type { IssuedToken } from "./Tokens.ts"
import type { InstallOutcome, Limits, ServerStatus } from "./World.ts"
import type { PowerState } from "./Console.ts"

export type { FailSpec, ThrottleSpec } from "./Faults.ts"
export type { RecordedRequest } from "./Sim.ts"
export type { IssuedToken } from "./Tokens.ts"

export interface SandboxServerState {
  readonly id: number
  readonly uuid: string
  readonly identifier: string
  readonly external_id: string | null
  readonly status: ServerStatus
  readonly suspended: boolean
  readonly node: number
  readonly allocation: number
  readonly power: PowerState
  readonly environment: Readonly<Record<string, string | null>>
  readonly limits: Limits
}

export interface NodeSpec {
  readonly name?: string
  readonly public?: boolean
  readonly location_id?: number
  readonly memory?: number
  readonly memory_overallocate?: number
  readonly disk?: number
  readonly disk_overallocate?: number
  readonly upload_size?: number
}

export interface PterodactylControl {
  /**
   * How installs end: `"default"` for every one started afterwards; `{ externalId }` for the server made for it, the
   * one installing now included (`hang`: its callback never comes).
   */
  setInstallOutcome(match: { readonly externalId?: string } | "default", outcome: InstallOutcome): void
  /** Someone edits the server's external id on the panel (null clears it), outside our control. */
  setExternalId(serverId: number, externalId: string | null): void
  failNext(spec: FailSpec): void
  throttleNext(spec: ThrottleSpec): void
  /** The per-user per-minute limits of either API from now on (`APP_API_*_RATELIMIT` on a real panel). */
  setRateLimits(limits: { readonly application?: number; readonly client?: number }): void
  /** Until cleared (undefined or `clearFaults`), node downloads drop their connection after `bytes` of the body. */
  cutDownloadsAfter(bytes: number | undefined): void
  clearFaults(): void
  addNode(spec?: NodeSpec): number
  addAllocations(node: number, ip: string, ports: ReadonlyArray<number>): ReadonlyArray<number>
  servers(): ReadonlyArray<SandboxServerState>
  putFile(serverUuid: string, path: string, bytes: Uint8Array | { readonly syntheticBytes: number }): void
  readFile(serverUuid: string, path: string): Buffer | undefined
  consoleSockets(serverUuid: string): number
  /** Node downloads still sending their body. */
  downloadsInFlight(): number
  requests(): ReadonlyArray<RecordedRequest>
  tokensIssued(): ReadonlyArray<IssuedToken>
  emitConsole(serverUuid: string, line: string): void
  expireWingsTokens(): void
}

export const makeControl = (sim: Sim): PterodactylControl => {
  const server = (uuid: string) => {
    const s = sim.world.serverByUuid(uuid)
    if (s === undefined) throw new Error(`sandbox: no server ${uuid}`)
    return s
  }
  return {
    setInstallOutcome: (match, outcome) => {
      if (match === "default") sim.installOutcomes.default = outcome
      else if (match.externalId !== undefined) {
        sim.installOutcomes.byExternalId.set(match.externalId, outcome)
        for (const s of sim.world.servers.values()) {
          if (s.external_id !== match.externalId || s.install === null) continue
          s.install = outcome === "hang" ? null : { ...s.install, outcome }
        }
      }
    },
    setExternalId: (serverId, externalId) => {
      const s = sim.world.servers.get(serverId)
      if (s === undefined) throw new Error(`sandbox: no server ${serverId}`)
      s.external_id = externalId
      sim.changed()
    },
    failNext: (spec) => sim.faults.failNext(spec),
    throttleNext: (spec) => sim.faults.throttleNext(spec),
    setRateLimits: (limits) => {
      if (limits.application !== undefined) sim.settings.rateLimits.application = limits.application
      if (limits.client !== undefined) sim.settings.rateLimits.client = limits.client
    },
    cutDownloadsAfter: (bytes) => sim.faults.cutDownloadsAfter(bytes),
    clearFaults: () => sim.faults.clear(),
    addNode: (spec = {}) => {
      const id = sim.world.addNode(spec).id
      sim.changed()
      return id
    },
    addAllocations: (node, ip, ports) => {
      const ids = sim.world.addAllocations(node, ip, ports).map((a) => a.id)
      sim.changed()
      return ids
    },
    servers: () => [...sim.world.servers.values()].map((s) => ({
      id: s.id,
      uuid: s.uuid,
      identifier: s.identifier,
      external_id: s.external_id,
      status: s.status,
      suspended: s.status === "suspended",
      node: s.node,
      allocation: s.allocation,
      power: s.console.state,
      environment: { ...s.environment },
      limits: s.limits
    })),
    putFile: (uuid, path, bytes) => {
      const data: FileData = bytes instanceof Uint8Array ? Buffer.from(bytes) : { syntheticBytes: bytes.syntheticBytes }
      server(uuid).files.write(path, data)
      sim.changed()
    },
    readFile: (uuid, path) => {
      const entry = server(uuid).files.get(path)
      return entry?.kind === "file" ? materialize(entry.data) : undefined
    },
    consoleSockets: (uuid) => server(uuid).console.sessions.size,
    downloadsInFlight: () => sim.transfers.inFlight,
    requests: () => [...sim.requests],
    tokensIssued: () => [...sim.tokens.issued],
    emitConsole: (uuid, line) => server(uuid).console.line(line),
    expireWingsTokens: () => sim.tokens.denyAll()
  }
}
