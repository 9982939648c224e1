// Everything the game-server use cases run on, in memory: fakes of every port (the Pterodactyl adapter over the
// simulated panel without sockets, on the TestClock: node 1 with ten allocations, eggs 5 "Paper" and 6), the in-memory workflow engine with the real
// workflows, the Stripe gateway on the sandbox Stripe's simulation, console tokens, and a catalog with the panel and two game plans.
import { NodeCrypto } from "@effect/platform-node"
import { Duration, Effect, Layer, Redacted } from "effect"
import { WorkflowEngine } from "effect/workflow"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as IdentityUnitOfWork from "../../adapters/fake/IdentityUnitOfWork.ts"
import * as JoseConsoleTokens from "../../adapters/crypto/JoseConsoleTokens.ts"
import * as MemorySessionRecords from "../../adapters/fake/MemorySessionRecords.ts"
import * as MemoryCatalog from "../../adapters/fake/MemoryCatalog.ts"
import * as MemoryGameAllocations from "../../adapters/fake/MemoryGameAllocations.ts"
import * as SimulatedGamePanel from "../../adapters/pterodactyl/SimulatedGamePanel.ts"
import * as MemoryGameServerRecords from "../../adapters/fake/MemoryGameServerRecords.ts"
import * as MemoryLedger from "../../adapters/fake/MemoryLedger.ts"
import * as MemoryServiceHolds from "../../adapters/fake/MemoryServiceHolds.ts"
import { memoryInvoicing } from "./invoicing.ts"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemoryAuditLog from "../../adapters/fake/MemoryAuditLog.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import { simulatedStripeLayer } from "./simulatedStripe.ts"
import type { GamePlan } from "../../domain/catalog/Plan.ts"
import { HostedServices } from "../../domain/billing/HostedService.ts"
import { GameHosting } from "../../domain/game/GameHosting.ts"
import { GameSettings } from "../../domain/game/GameSettings.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { promptWebCrypto } from "./promptWebCrypto.ts"
import { renewalEnv } from "./renewalEnv.ts"
import { recordedNoticesLayer } from "../support/recordedNotices.ts"

export const gamePlan: GamePlan = {
  kind: "game",
  id: "mc-2g",
  name: "Minecraft 2 GB",
  priceCents: 600,
  panel: "sandbox",
  eggId: 5,
  dockerImage: "ghcr.io/pterodactyl/yolks:java_17",
  memoryMiB: 1024,
  diskMiB: 4096,
  cpuPercent: 200,
  io: 500,
  databases: 0,
  backups: 2,
  allocations: 1,
  environment: { SERVER_JARFILE: "server.jar" },
  userVariables: ["MINECRAFT_VERSION"]
}

/** A plan whose image the egg does not offer: an operator's mistake, found at provisioning. */
export const brokenPlan: GamePlan = { ...gamePlan, id: "mc-broken", name: "Broken", dockerImage: "ghcr.io/example/none:1" }

export const gameSettings = {
  panelUserDomain: "users.zh.invalid",
  installTimeout: Duration.minutes(30),
  installPollInitial: Duration.seconds(1),
  installPollMax: Duration.seconds(15),
  gracePeriod: Duration.days(14),
  consoleTokenLifetime: Duration.minutes(10)
}

export const seedGameCatalog = Effect.gen(function*() {
  const catalog = yield* Catalog
  yield* catalog.upsertPanel({ name: "sandbox", url: "https://panel.lab" })
  yield* catalog.upsertPlan(gamePlan)
  yield* catalog.upsertPlan(brokenPlan)
})

export const gameEnv = (options: {
  readonly installDuration?: Duration.Input
  readonly settings?: Partial<typeof gameSettings>
  /** The panel adapter's own settings (retries, timeouts). */
  readonly panel?: SimulatedGamePanel.SimulatedGamePanelOptions["adapter"]
} = {}) => {
  const services = Layer.mergeAll(
    MemoryCatalog.layer.pipe(Layer.provideMerge(MemoryCatalog.layerState)),
    MemoryOrders.layer,
    MemoryAuditLog.layer,
    MemorySubscriptions.layer,
    MemoryLedger.layer,
    MemoryServiceHolds.layer,
    memoryInvoicing,
    MemoryGameServerRecords.layer,
    MemoryGameAllocations.layer,
    SimulatedGamePanel.layer({
      installDurationMs: Duration.toMillis(Duration.fromInputUnsafe(options.installDuration ?? "20 seconds")),
      ...(options.panel === undefined ? {} : { adapter: options.panel })
    }),
    AesGcmSecretBox.layer({ current: Redacted.make(new Uint8Array(32).fill(3)), previous: [] }),
    JoseConsoleTokens.layer(Redacted.make(new Uint8Array(32).fill(7))),
    // Console tokens are bound to a live session of their holder.
    MemorySessionRecords.layer,
    Layer.succeed(GameSettings, { ...gameSettings, ...options.settings }),
    simulatedStripeLayer,
    renewalEnv(),
    NodeCrypto.layerSecureRandom,
    IdentityUnitOfWork.layer,
    recordedNoticesLayer,
    // Workflow ids are hashed at once, so a test moving the clock in a loop never outruns a workflow.
    promptWebCrypto
  )
  return Layer.effectDiscard(seedGameCatalog).pipe(
    // Billing sells one product here: the game server.
    Layer.provideMerge(GameHosting.pipe(Layer.provideMerge(HostedServices.layer))),
    Layer.provideMerge(WorkflowEngine.layerMemory),
    Layer.provideMerge(services)
  )
}
