// The sandbox upstreams `npm start` runs when no real one is registered: a simulated Proxmox VE and a simulated
// Pterodactyl panel with its Wings, on loopback, registered in the catalog as "sandbox" with demo plans.
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { clusterSecretNames, panelSecretNames } from "../../domain/catalog/catalogSecrets.ts"
import { hostAddresses, parseAddress, parseCidr } from "../../domain/catalog/ipv4.ts"
import { storeSecret } from "../../domain/secrets/UpstreamCredentials.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { Result } from "effect"
import { keepInFile } from "./StateFile.ts"
import { type SandboxProxmoxOptions, sandboxProxmox } from "../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { type SandboxPterodactyl, type SandboxPterodactylOptions, sandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"

export const SANDBOX_CLUSTER = "sandbox"

/** Documentation range (RFC 5737): addresses that can never collide with anything real. */
const SANDBOX_POOL = { id: "sandbox-public", cidr: "192.0.2.0/24", gateway: "192.0.2.1", bridge: "vmbr0" }

const demoPlans = [
  {
    kind: "vps" as const,
    id: "vps-s",
    name: "VPS S",
    priceCents: 500,
    vcpu: 1,
    ramMiB: 1024,
    diskGiB: 20,
    templates: ["debian-12", "ubuntu-24-04"],
    snapshotLimit: 2
  },
  {
    kind: "vps" as const,
    id: "vps-m",
    name: "VPS M",
    priceCents: 1000,
    vcpu: 2,
    ramMiB: 4096,
    diskGiB: 60,
    templates: ["debian-12", "ubuntu-24-04"],
    snapshotLimit: 5
  }
]

/** The requests each simulator of a running server keeps in its log (the control's `requests()`), the newest. */
const REQUEST_LOG_LIMIT = 10_000

/** The sandbox PVE's `keepState` over its state file at `path`. */
export const keepPveState = (path: string) => keepInFile(path, "sandbox PVE", "its default VMs")

/**
 * Starts the sandbox Proxmox unless the catalog already has a real (non-retired, non-sandbox) cluster, and
 * (re)registers it: its loopback URL and password change with every start. With an embedded database, pass
 * `stateFile: join(dataDir, "sandbox-proxmox.json")` so the VMs outlive a restart as the VPS records do; its warnings
 * (an invalid file set aside, a failed save) are logged unless `onWarning` is given.
 */
export const SandboxProxmoxLive = (options: SandboxProxmoxOptions & { readonly stateFile?: string | undefined } = {}) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const catalog = yield* Catalog
    const real = (yield* catalog.clusters).filter((c) => !c.retired && c.name !== SANDBOX_CLUSTER)
    if (real.length > 0) return
    const password = randomBytes(18).toString("base64url")
    const context = yield* Effect.context<never>()
    const { stateFile, ...rest } = options
    const sandbox = yield* sandboxProxmox({
      ...rest,
      requestLogLimit: rest.requestLogLimit ?? REQUEST_LOG_LIMIT,
      keepState: stateFile === undefined ? undefined : keepPveState(stateFile),
      onWarning: options.onWarning ?? ((message) => void Effect.runForkWith(context)(Effect.logWarning(message))),
      username: "root@pam",
      password
    })
    yield* catalog.upsertCluster({
      name: SANDBOX_CLUSTER,
      url: sandbox.url,
      username: "root@pam",
      tokenId: null,
      tls: { ca: null, fingerprint: null, insecure: false }
    })
    yield* storeSecret(clusterSecretNames(SANDBOX_CLUSTER).password, Redacted.make(password)).pipe(Effect.orDie)
    for (const node of ["pve1", "pve2"]) {
      const base = node === "pve1" ? 9000 : 9100
      yield* catalog.upsertTemplate({ id: "debian-12", name: "Debian 12", cluster: SANDBOX_CLUSTER, node, vmid: base })
      yield* catalog.upsertTemplate({ id: "ubuntu-24-04", name: "Ubuntu 24.04", cluster: SANDBOX_CLUSTER, node, vmid: base + 1 })
    }
    const cidr = Result.getOrThrow(parseCidr(SANDBOX_POOL.cidr))
    yield* catalog.upsertIpPool(
      { ...SANDBOX_POOL, cluster: SANDBOX_CLUSTER, nodes: ["pve1", "pve2"] },
      hostAddresses(cidr, parseAddress(SANDBOX_POOL.gateway)!)
    )
    if ((yield* catalog.plans).length === 0) for (const plan of demoPlans) yield* catalog.upsertPlan(plan)
    yield* Effect.logInfo(`sandbox Proxmox VE serving cluster "${SANDBOX_CLUSTER}" on loopback (no real cluster registered)`)
  }))

export const SANDBOX_PANEL = "sandbox"

/** The running sandbox panel (none when a real panel is registered): its control, for tests and benchmarks. */
export class SandboxPanel extends Context.Service<SandboxPanel, Option.Option<SandboxPterodactyl>>()("zh/app/SandboxPanel") {}

/** Plans on the sandbox panel's seeded eggs (5 "Paper", 6 "Vanilla Bedrock"). */
const demoGamePlans = [
  {
    kind: "game" as const,
    id: "mc-2g",
    name: "Minecraft 2 GB",
    priceCents: 600,
    panel: SANDBOX_PANEL,
    eggId: 5,
    dockerImage: "ghcr.io/pterodactyl/yolks:java_17",
    memoryMiB: 2048,
    diskMiB: 10240,
    cpuPercent: 200,
    io: 500,
    databases: 0,
    backups: 2,
    allocations: 1,
    environment: { SERVER_JARFILE: "server.jar" },
    userVariables: ["MINECRAFT_VERSION"]
  },
  {
    kind: "game" as const,
    id: "bedrock-1g",
    name: "Bedrock 1 GB",
    priceCents: 400,
    panel: SANDBOX_PANEL,
    eggId: 6,
    dockerImage: "ghcr.io/pterodactyl/yolks:debian",
    memoryMiB: 1024,
    diskMiB: 5120,
    cpuPercent: 100,
    io: 500,
    databases: 0,
    backups: 1,
    allocations: 1,
    environment: {},
    userVariables: ["BEDROCK_VERSION"]
  }
]

/**
 * Starts the sandbox Pterodactyl (panel + Wings on loopback) unless the catalog has a real panel, registers it as
 * panel "sandbox" with its fresh keys (they change with every start), and adds demo game plans when the catalog
 * sells none.
 */
export const SandboxPterodactylLive = (options: SandboxPterodactylOptions & { readonly stateFile?: string | undefined } = {}) =>
  Layer.effect(SandboxPanel, Effect.gen(function*() {
    const catalog = yield* Catalog
    const real = (yield* catalog.panels).filter((p) => !p.retired && p.name !== SANDBOX_PANEL)
    if (real.length > 0) return Option.none<SandboxPterodactyl>()
    const context = yield* Effect.context<never>()
    const { stateFile, ...rest } = options
    const sandbox = yield* sandboxPterodactyl({
      ...rest,
      requestLogLimit: rest.requestLogLimit ?? REQUEST_LOG_LIMIT,
      keepState: stateFile === undefined ? undefined : keepInFile(stateFile, "sandbox Pterodactyl"),
      onWarning: options.onWarning ?? ((message) => void Effect.runForkWith(context)(Effect.logWarning(message)))
    })
    yield* catalog.upsertPanel({ name: SANDBOX_PANEL, url: sandbox.url })
    const names = panelSecretNames(SANDBOX_PANEL)
    yield* storeSecret(names.applicationKey, Redacted.make(sandbox.applicationKey)).pipe(Effect.orDie)
    yield* storeSecret(names.clientKey, Redacted.make(sandbox.clientKey)).pipe(Effect.orDie)
    if (!(yield* catalog.plans).some((p) => p.kind === "game")) for (const plan of demoGamePlans) yield* catalog.upsertPlan(plan)
    yield* Effect.logInfo(`sandbox Pterodactyl serving panel "${SANDBOX_PANEL}" on loopback (no real panel registered)`)
    return Option.some(sandbox)
  }))
