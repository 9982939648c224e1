// Everything the VPS use cases run on, in memory: fakes of every port, the Proxmox adapter on the PVE simulation, the
// in-memory workflow engine with the real workflows, the Stripe gateway on the sandbox Stripe's simulation, and a
// catalog with one cluster, two templates, a pool and plans.
import { NodeCrypto } from "@effect/platform-node"
import { Duration, Effect, Layer, Redacted } from "effect"
import { WorkflowEngine } from "effect/workflow"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as IdentityUnitOfWork from "../../adapters/fake/IdentityUnitOfWork.ts"
import * as MemoryCatalog from "../../adapters/fake/MemoryCatalog.ts"
import * as MemoryIpAddresses from "../../adapters/fake/MemoryIpAddresses.ts"
import * as MemoryLedger from "../../adapters/fake/MemoryLedger.ts"
import * as MemoryServiceHolds from "../../adapters/fake/MemoryServiceHolds.ts"
import { memoryInvoicing } from "./invoicing.ts"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemoryAuditLog from "../../adapters/fake/MemoryAuditLog.ts"
import * as MemoryPlacement from "../../adapters/fake/MemoryPlacement.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import { labVirtualization } from "./simulatedCluster.ts"
import * as MemoryVpsRecords from "../../adapters/fake/MemoryVpsRecords.ts"
import { simulatedStripeLayer } from "./simulatedStripe.ts"
import { Result } from "effect"
import { hostAddresses, parseAddress, parseCidr } from "../../domain/catalog/ipv4.ts"
import type { VpsPlan } from "../../domain/catalog/Plan.ts"
import { HostedServices } from "../../domain/billing/HostedService.ts"
import { VpsHosting } from "../../domain/vps/VpsHosting.ts"
import { VpsSettings } from "../../domain/vps/VpsSettings.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { promptWebCrypto } from "./promptWebCrypto.ts"
import { labCluster, labStorage } from "./virtualizationMother.ts"
import { recordedNoticesLayer } from "./recordedNotices.ts"
import type { Notices } from "../../domain/notices/CustomerNotice.ts"
import type { InvoiceDocuments } from "../../ports/InvoiceDocuments.ts"
import type { Invoices } from "../../ports/Invoices.ts"
import { renewalEnv } from "./renewalEnv.ts"

export const vpsPlan: VpsPlan = {
  kind: "vps",
  id: "vps-s",
  name: "VPS S",
  priceCents: 500,
  vcpu: 1,
  ramMiB: 1024,
  diskGiB: 20,
  templates: ["debian-12"],
  snapshotLimit: 2
}

export const bigPlan: VpsPlan = { ...vpsPlan, id: "vps-huge", name: "VPS Huge", vcpu: 64, ramMiB: 512 * 1024, diskGiB: 100 }

export const sshKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7uLQ2QJEVpMZ8wYJfEq1v7rJ9l3cQxYwZ0Yt3JmK4N ada@example.com"

export const vpsOptions = (hostname = "web-1") => ({ templateId: "debian-12", hostname, sshPublicKey: sshKey })

/** Seeds the catalog through its port: the lab cluster, its template, a pool of `poolSize` addresses, the plans. */
export const seedCatalog = (poolSize: number) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    yield* catalog.upsertCluster({
      name: labCluster,
      url: "https://pve.lab:8006",
      username: "root@pam",
      tokenId: null,
      tls: { ca: null, fingerprint: null, insecure: true }
    })
    yield* catalog.upsertTemplate({ id: "debian-12", name: "Debian 12", cluster: labCluster, node: "pve1", vmid: 9000 })
    const cidr = Result.getOrThrow(parseCidr("203.0.113.0/24"))
    const addresses = hostAddresses(cidr, parseAddress("203.0.113.1")!).slice(0, poolSize)
    yield* catalog.upsertIpPool(
      { id: "public-1", cluster: labCluster, cidr: "203.0.113.0/24", gateway: "203.0.113.1", bridge: "vmbr0", nodes: ["pve1", "pve2"] },
      addresses
    )
    yield* catalog.upsertPlan(vpsPlan)
    yield* catalog.upsertPlan(bigPlan)
  })

export const vpsSettings = {
  cpuOvercommit: 4,
  memoryOvercommit: 1,
  storage: labStorage,
  storageMarginGiB: 5,
  nameservers: ["1.1.1.1"],
  gracePeriod: Duration.days(7),
  clonePoll: { initial: Duration.seconds(2), max: Duration.seconds(30) }
}

export interface VpsEnvOptions {
  readonly poolSize?: number
}

/** The VPS environment, its customer notices recorded (`noticesOf` reads them). */
export const vpsEnv = (options: VpsEnvOptions = {}) => vpsEnvWith(recordedNoticesLayer, options)

/**
 * The VPS environment on the given Notices (the real one, for a test of the e-mails themselves), which may read the
 * environment's invoices and render their documents (a receipt's attachment).
 */
export const vpsEnvWith = <N, E>(notices: Layer.Layer<N | Notices, E, Invoices | InvoiceDocuments>, options: VpsEnvOptions = {}) => {
  const ports = Layer.mergeAll(
    MemoryIpAddresses.layer,
    MemoryCatalog.layer
  ).pipe(Layer.provideMerge(MemoryCatalog.layerState))
  const base = Layer.mergeAll(
    ports,
    MemoryOrders.layer,
    MemoryAuditLog.layer,
    MemorySubscriptions.layer,
    MemoryLedger.layer,
    MemoryServiceHolds.layer,
    memoryInvoicing,
    MemoryVpsRecords.layer,
    MemoryPlacement.layer,
    labVirtualization({ machineIds: { from: 100_000, to: 100_200 } }),
    AesGcmSecretBox.layer({ current: Redacted.make(new Uint8Array(32).fill(3)), previous: [] }),
    Layer.succeed(VpsSettings, vpsSettings),
    simulatedStripeLayer,
    renewalEnv(),
    NodeCrypto.layerSecureRandom,
    IdentityUnitOfWork.layer,
    // Workflow ids are hashed at once, so a test moving the clock in a loop never outruns a workflow.
    promptWebCrypto
  )
  const services = notices.pipe(Layer.provideMerge(base))
  return Layer.effectDiscard(seedCatalog(options.poolSize ?? 16)).pipe(
    // Billing sells one product here: the VPS.
    Layer.provideMerge(VpsHosting.pipe(Layer.provideMerge(HostedServices.layer))),
    Layer.provideMerge(WorkflowEngine.layerMemory),
    Layer.provideMerge(services)
  )
}
