// What the reconciler reads, in memory: our records (orders, VPS, game servers), the lab cluster and the sandbox panel
// as simulations reached in memory, registered in the catalog, with no VM or server yet.
import { NodeCrypto } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as MemoryCatalog from "../../adapters/fake/MemoryCatalog.ts"
import * as SimulatedGamePanel from "../../adapters/pterodactyl/SimulatedGamePanel.ts"
import * as MemoryGameServerRecords from "../../adapters/fake/MemoryGameServerRecords.ts"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import { labVirtualization } from "./simulatedCluster.ts"
import * as MemoryVpsRecords from "../../adapters/fake/MemoryVpsRecords.ts"
import { VpsSettings } from "../../domain/vps/VpsSettings.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { labCluster } from "./virtualizationMother.ts"
import { vpsSettings } from "./vpsEnv.ts"

/** Our records and both upstreams, empty but for the lab cluster and the sandbox panel in the catalog. */
export const reconcileEnv = () =>
  Layer.effectDiscard(Effect.gen(function*() {
    const catalog = yield* Catalog
    yield* catalog.upsertCluster({
      name: labCluster, url: "https://pve.lab:8006", username: "root@pam", tokenId: null,
      tls: { ca: null, fingerprint: null, insecure: true }
    })
    yield* catalog.upsertPanel({ name: "sandbox", url: "https://panel.lab" })
  })).pipe(Layer.provideMerge(Layer.mergeAll(
    MemoryCatalog.layer.pipe(Layer.provideMerge(MemoryCatalog.layerState)),
    MemoryOrders.layer,
    MemoryVpsRecords.layer,
    MemoryGameServerRecords.layer,
    labVirtualization(),
    SimulatedGamePanel.layer(),
    Layer.succeed(VpsSettings, vpsSettings),
    NodeCrypto.layerSecureRandom
  )))

