// The simulated Proxmox VE (adapters/proxmox/sandbox) as the adapter's specifications use it: in memory through
// ProxmoxSimulation (no socket; timers on the Effect Clock), or on loopback (SandboxProxmox) where a test is about real
// sockets and TLS; the adapter under test pointed at it with fast test settings; the request log read as PVE paths.
import { readFileSync } from "node:fs"
import { Effect, Layer, Logger, Redacted } from "effect"
import * as MemoryProxmoxVmids from "../../../adapters/fake/MemoryProxmoxVmids.ts"
import { layerWith, type ProxmoxOptions } from "../../../adapters/proxmox/ProxmoxVirtualization.ts"
import {
  proxmoxSimulation,
  type ProxmoxSimulationOptions,
  type RecordedRequest,
  type SandboxControl
} from "../../../adapters/proxmox/sandbox/ProxmoxSimulation.ts"
import { sandboxProxmox } from "../../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { type ProxmoxCluster, ProxmoxClusters, type ProxmoxTls } from "../../../ports/ProxmoxClusters.ts"
import { ClusterUnknown, Virtualization } from "../../../ports/Virtualization.ts"
import { cloudInit as aCloudInit } from "../../support/virtualizationMother.ts"

export const fixtureCert = readFileSync(new URL("../../fixtures/tls/sandbox-cert.pem", import.meta.url), "utf8")
const fixtureKey = readFileSync(new URL("../../fixtures/tls/sandbox-key.pem", import.meta.url), "utf8")

/** The simulation's one user (the console login of token clusters), and its API token. */
export const user = { username: "console@pve", password: "console-password-51ab" }
export const token = { id: "svc@pve!prov", secret: "6f1d2c3b-token-secret-8a7e" }

export const passwordAuth = { kind: "password", username: user.username, password: Redacted.make(user.password) } as const

export const tokenAuth = (consoleLogin: boolean) =>
  ({
    kind: "token",
    tokenId: token.id,
    secret: Redacted.make(token.secret),
    consoleLogin: consoleLogin ? { username: user.username, password: Redacted.make(user.password) } : null
  }) as const

export const noTls: ProxmoxTls = { ca: null, fingerprint: null, insecure: false }

export const clusterAt = (url: string, overrides: Partial<ProxmoxCluster> = {}): ProxmoxCluster => ({
  name: "c1",
  url,
  auth: passwordAuth,
  tls: noTls,
  ...overrides
})

/** Fast enough for a suite: 2 retries, short back-off and polling, and short deadlines. */
export const testOptions: Partial<ProxmoxOptions> = {
  // New machines take VMIDs 101, 102… in that order.
  vmidRange: { from: 101, to: 120 },
  requestTimeout: "2 seconds",
  retries: 2,
  retryBaseDelay: "10 millis",
  taskPollInitial: "20 millis",
  taskPollMax: "80 millis",
  taskTimeout: "3 seconds",
  cloneTimeout: "3 seconds",
  guestExecTimeout: "3 seconds",
  consoleOpenTimeout: "3 seconds"
}

const clustersLayer = (cluster: ProxmoxCluster) =>
  Layer.succeed(ProxmoxClusters, {
    get: (name) => name === cluster.name ? Effect.succeed(cluster) : Effect.fail(new ClusterUnknown({ cluster: name }))
  })

/** The adapter for `cluster`, silent (a test that specifies a log line provides its own logger). */
export const adapterLayer = (cluster: ProxmoxCluster, options: Partial<ProxmoxOptions> = {}) =>
  Layer.mergeAll(
    layerWith({ ...testOptions, ...options }).pipe(Layer.provide([clustersLayer(cluster), MemoryProxmoxVmids.layer])),
    Logger.layer([])
  )

/** What a test reads of the simulated PVE: its control and its request log. */
export interface Pve {
  readonly url: string
  readonly control: SandboxControl
  /** Every request, oldest first; `filter` is `METHOD /path` (without `/api2/json`), matched from its start. */
  readonly requests: (filter?: string) => ReadonlyArray<RecordedRequest>
  /** Requests other than sign-in and task reads. */
  readonly calls: (filter?: string) => ReadonlyArray<RecordedRequest>
  /** The sign-ins, oldest first: who, and whether it renewed a ticket (a ticket posted as the password). */
  readonly logins: () => ReadonlyArray<{ readonly username: string; readonly renewal: boolean; readonly password: string }>
}

/** The path of a logged request as PVE's API documentation names it. */
export const apiPath = (request: RecordedRequest) => request.path.replace(/^\/api2\/json/, "")

const readerOf = (url: string, control: SandboxControl): Pve => {
  const requests = (filter?: string) =>
    control.requests().filter((r) => filter === undefined || `${r.method} ${apiPath(r)}`.startsWith(filter))
  return {
    url,
    control,
    requests,
    calls: (filter) => requests(filter).filter((r) => apiPath(r) !== "/access/ticket" && !apiPath(r).includes("/tasks/")),
    logins: () =>
      requests("POST /access/ticket").map((r) => {
        const password = String(r.body["password"] ?? "")
        return { username: String(r.body["username"] ?? ""), renewal: password.startsWith("PVE:"), password }
      })
  }
}

/** The simulation's users and tasks as the specifications want them: a user and a token, tasks of 20 ms. */
export const simulationOptions: ProxmoxSimulationOptions = {
  username: user.username,
  password: user.password,
  tokens: [token],
  taskDurations: { default: 20 }
}

/** A simulation in memory (timers on the current Effect Clock), closed with the scope. */
export const inMemory = (options: ProxmoxSimulationOptions = {}) =>
  Effect.map(proxmoxSimulation({ ...simulationOptions, ...options }), (sim) => ({ ...readerOf(sim.url, sim.control), agents: sim.agents }))

/** The same simulation on a loopback port (HTTPS with the test fixture when `tls`), timers on the process clock. */
export const onLoopback = (options: ProxmoxSimulationOptions & { readonly tls?: boolean } = {}) => {
  const { tls, ...simulation } = options
  return Effect.map(
    sandboxProxmox({ ...simulationOptions, ...simulation, ...(tls === true ? { tls: { cert: fixtureCert, key: fixtureKey } } : {}) }),
    (pve) => readerOf(pve.url, pve.control)
  )
}

// --- scenarios ---------------------------------------------------------------------------------------------------

export const vm = { cluster: "c1", node: "pve1", vmid: 101 }
/** Where `vm` lives, as PVE paths name it. */
export const base = "/nodes/pve1/qemu/101"
export const template = { cluster: "c1", node: "pve1", vmid: 9000 }

/** A VPS's cloud-init, as the provisioning workflow passes it. */
export const cloudInit = aCloudInit("web-1", {
  password: Redacted.make("Root-pass-1"),
  sshPublicKeys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKk+/x+y= ann@laptop", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 bob"]
})

/** A VM of someone else's at `vm`'s VMID (or `vmid`), as an operator would have made it: `config` beside the basics. */
export const placeAt = (pve: Pve, options: {
  readonly vmid?: number
  readonly node?: string
  readonly name?: string
  readonly status?: "running" | "stopped"
  readonly config?: Readonly<Record<string, string>>
} = {}) =>
  pve.control.place({
    vmid: options.vmid ?? vm.vmid,
    node: options.node ?? vm.node,
    name: options.name ?? "web-1",
    status: options.status ?? "stopped",
    cores: 2,
    memoryMiB: 2048,
    diskBytes: 10 * 1024 ** 3,
    ...(options.config === undefined ? {} : { config: options.config })
  })

/**
 * A fresh simulation in memory, prepared by `setup`, and the adapter under test pointed at it (on the current Effect
 * Clock: `it.live` for real time).
 */
export const scenario = <A, E>(
  setup: (pve: Pve) => void,
  f: (v: Virtualization["Service"], pve: Pve) => Effect.Effect<A, E>,
  options: Partial<ProxmoxOptions> = {},
  simulation: ProxmoxSimulationOptions = {}
) =>
  Effect.gen(function*() {
    const pve = yield* inMemory(simulation)
    setup(pve)
    const agents = pve.agents
    return yield* Effect.flatMap(Virtualization, (v) => f(v, pve)).pipe(
      Effect.provide(adapterLayer(clusterAt(pve.url), { ...options, connect: () => agents }))
    )
  }).pipe(Effect.scoped)
