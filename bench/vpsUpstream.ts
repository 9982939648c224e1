// The bench's own Proxmox VE: the sandbox started in this process with its realistic task durations and registered
// in the server's catalog as a real cluster (so the server starts no sandbox of its own), and a watch on its task
// list that times every task from this side, since the sandbox's task records carry no end time.
import { Effect, Exit, Scope } from "effect"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import {
  type SandboxControl,
  type SandboxProxmox,
  sandboxProxmox,
  type SandboxTaskState
} from "../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { defaultTaskDurations } from "../adapters/proxmox/sandbox/Tasks.ts"
import { type Cleanup, progress } from "./system.ts"

export const CLUSTER = "bench"
const USERNAME = "root@pam"
const PASSWORD = "sandbox"
const GiB = 1024 ** 3
const TiB = 1024 ** 4

/** Two nodes with room for every VM the bench orders (105 × VPS S), so capacity never decides an outcome. */
const NODES = ["pve1", "pve2"].map((name) => ({
  name,
  cpus: 32,
  memoryBytes: 128 * GiB,
  storage: [{ id: "local-lvm", totalBytes: 8 * TiB }]
}))

/** Two /24 documentation ranges (RFC 5737): 506 addresses for 105 orders. */
const POOLS = [
  { id: "bench-a", cidr: "198.51.100.0/24", gateway: "198.51.100.1" },
  { id: "bench-b", cidr: "203.0.113.0/24", gateway: "203.0.113.1" }
]

const VPS_S = { vcpu: 1, ramMiB: 1024, diskGiB: 20 }

/** The catalog file (API.md "Catalog file") that registers the sandbox as cluster `bench` with plan vps-s. */
const catalogFile = (url: string) => ({
  proxmox: [{
    name: CLUSTER,
    url,
    username: USERNAME,
    password: PASSWORD,
    tls: { insecure: false, caFile: null, fingerprint: null }
  }],
  templates: [
    { id: "debian-12", name: "Debian 12", cluster: CLUSTER, node: "pve1", vmid: 9000 },
    { id: "debian-12", name: "Debian 12", cluster: CLUSTER, node: "pve2", vmid: 9100 }
  ],
  ipPools: POOLS.map((p) => ({ ...p, cluster: CLUSTER, bridge: "vmbr0", nodes: ["pve1", "pve2"] })),
  plans: [{
    kind: "vps",
    id: "vps-s",
    name: "VPS S",
    priceCents: 500,
    ...VPS_S,
    templates: ["debian-12"],
    snapshotLimit: 2
  }]
})

export interface BenchCluster {
  readonly sandbox: SandboxProxmox
  /** NODE_OPTIONS for the server: preloads the module that sets CATALOG_FILE (see below). */
  readonly serverNodeOptions: string
  readonly username: string
  readonly password: string
  /** Task duration in ms the sandbox uses for a task type. */
  readonly durationOf: (type: string) => number
}

/**
 * Starts the sandbox and writes the catalog file. bench/system.ts builds the server's environment from scratch and
 * takes no extra variables, so CATALOG_FILE reaches the server through a one-line module preloaded with
 * `--import` in its NODE_OPTIONS (the only setting passed through); it runs before app/main.ts reads its Config.
 */
export const startBenchCluster = async (cleanup: Cleanup): Promise<BenchCluster> => {
  const scope = Scope.makeUnsafe()
  cleanup.add("stop the bench's sandbox Proxmox", async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    progress("sandbox Proxmox stopped")
  })
  const sandbox = await Effect.runPromise(Scope.provide(sandboxProxmox({ username: USERNAME, password: PASSWORD, nodes: NODES }), scope))
  const dir = await mkdtemp(join(tmpdir(), "zh-bench-vps-"))
  cleanup.add("remove catalog dir", () => rm(dir, { recursive: true, force: true }))
  const catalogPath = join(dir, "catalog.json")
  await writeFile(catalogPath, JSON.stringify(catalogFile(sandbox.url), null, 2))
  const preload = join(dir, "catalog-env.mjs")
  await writeFile(preload, `process.env["CATALOG_FILE"] = ${JSON.stringify(catalogPath)}\n`)
  return {
    sandbox,
    serverNodeOptions: `--import=${preload}`,
    username: USERNAME,
    password: PASSWORD,
    durationOf: (type) => defaultTaskDurations[type] ?? defaultTaskDurations["default"] ?? 0
  }
}

export interface TimedTask {
  readonly upid: string
  readonly type: string
  /** The VMID the task is about: the new VM for a clone (its task id names the template). */
  vmid: number
  /** performance.now() when the watch first saw the task, and when it first saw it stopped. */
  readonly seenAt: number
  stoppedAt: number | undefined
  exitstatus: string | null
}

const cloneTarget = /creating a clone of VM \d+ with ID (\d+)/

const vmidOf = (task: SandboxTaskState): number => {
  if (task.type !== "qmclone") return Number(task.id)
  for (const line of task.log) {
    const m = cloneTarget.exec(line)
    if (m?.[1] !== undefined) return Number(m[1])
  }
  return Number.NaN
}

export interface SeenRequest {
  /** performance.now() when the watch first saw it (the sandbox records requests without a time). */
  readonly at: number
  readonly method: string
  readonly path: string
}

export interface SandboxWatch {
  readonly tasks: () => ReadonlyArray<TimedTask>
  readonly requests: () => ReadonlyArray<SeenRequest>
  readonly stop: () => void
}

/**
 * Reads the sandbox's state every `intervalMs` (it runs in this process, so a read is a copy of a few hundred
 * objects): each task is timed from when it was first seen to when it was first seen stopped, and each request
 * from when it was first seen, every time late by at most one interval — so a duration is right within ± one
 * interval. Meant for a handful of orders: every read copies the whole request log.
 */
export const watchSandbox = (control: SandboxControl, intervalMs: number): SandboxWatch => {
  const seen = new Map<string, TimedTask>()
  const requests: Array<SeenRequest> = []
  const poll = () => {
    const at = performance.now()
    const state = control.state()
    for (const task of state.tasks) {
      let timed = seen.get(task.upid)
      if (timed === undefined) {
        timed = { upid: task.upid, type: task.type, vmid: vmidOf(task), seenAt: at, stoppedAt: undefined, exitstatus: null }
        seen.set(task.upid, timed)
      }
      // A clone names its target in the log once its worker began (at once unless it waited for a lock).
      if (Number.isNaN(timed.vmid)) timed.vmid = vmidOf(task)
      if (task.status === "stopped" && timed.stoppedAt === undefined) {
        timed.stoppedAt = at
        timed.exitstatus = task.exitstatus
      }
    }
    for (const request of state.requests.slice(requests.length)) {
      requests.push({ at, method: request.method, path: request.path })
    }
  }
  poll()
  const timer = setInterval(poll, intervalMs)
  return {
    tasks: () => {
      poll()
      return [...seen.values()]
    },
    requests: () => {
      poll()
      return [...requests]
    },
    stop: () => clearInterval(timer)
  }
}
