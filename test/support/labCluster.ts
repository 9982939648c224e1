// A Proxmox cluster of the test's own beside a test server's sandbox: a sandbox PVE whose control the test holds
// (faults, recorded requests, VM state), registered through the server's own catalog as the real cluster "lab" with
// its template, address pool and plan. VPS ordered on plan `vps-lab` live there.
import { Effect, Redacted, Result } from "effect"
import { type SandboxProxmox, sandboxProxmox } from "../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { type Started, startScoped } from "./startScoped.ts"
import { clusterSecretNames } from "../../domain/catalog/catalogSecrets.ts"
import { hostAddresses, parseAddress, parseCidr } from "../../domain/catalog/ipv4.ts"
import { storeSecret } from "../../domain/secrets/UpstreamCredentials.ts"
import { Catalog } from "../../ports/Catalog.ts"
import type { TestServer } from "./vpsHttp.ts"

/** The lab's sandbox, stopped by `close()`. */
export type LabSandbox = Started<SandboxProxmox>

export const LAB = { cluster: "lab", plan: "vps-lab", template: "lab-debian-12" } as const

const POOL = { id: "lab-public", cluster: LAB.cluster, cidr: "198.51.100.0/24", gateway: "198.51.100.1", bridge: "vmbr0", nodes: ["pve1", "pve2"] }

/**
 * Starts the lab's sandbox and registers it on `server`; close it after the server's tests. Its tasks are instant
 * unless `taskDurations` (ms by task type, as SandboxProxmoxOptions) says otherwise.
 */
export const addLabCluster = async (
  server: TestServer,
  taskDurations: Partial<Record<string, number>> = {}
): Promise<LabSandbox> => {
  const sandbox = await startScoped(sandboxProxmox({ taskDurations: { default: 0, ...taskDurations } }))
  try {
    await server.runtime.runPromise(Effect.gen(function*() {
      const catalog = yield* Catalog
      yield* catalog.upsertCluster({
        name: LAB.cluster,
        url: sandbox.url,
        username: "root@pam",
        tokenId: null,
        tls: { ca: null, fingerprint: null, insecure: false }
      })
      yield* storeSecret(clusterSecretNames(LAB.cluster).password, Redacted.make("sandbox")).pipe(Effect.orDie)
      for (const [node, vmid] of [["pve1", 9000], ["pve2", 9100]] as const) {
        yield* catalog.upsertTemplate({ id: LAB.template, name: "Debian 12 (lab)", cluster: LAB.cluster, node, vmid })
      }
      const cidr = Result.getOrThrow(parseCidr(POOL.cidr))
      yield* catalog.upsertIpPool(POOL, hostAddresses(cidr, parseAddress(POOL.gateway)!).slice(0, 32))
      yield* catalog.upsertPlan({
        kind: "vps",
        id: LAB.plan,
        name: "VPS lab",
        priceCents: 500,
        vcpu: 1,
        ramMiB: 1024,
        diskGiB: 20,
        templates: [LAB.template],
        snapshotLimit: 2
      })
    }))
  } catch (e) {
    await sandbox.close()
    throw e
  }
  return sandbox
}
