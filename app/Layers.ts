// The wiring: settings → adapters → the services the HTTP edge and the CLI run on.
import { NodeCrypto, NodeFileSystem, NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { Duration, Effect, FileSystem, Layer, Logger, Option, References } from "effect"
import { HttpRouter } from "effect/http"
import type { Migrator, SqlClient, SqlError } from "effect/sql"
import { createServer } from "node:http"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import * as AesGcmSecretBox from "../adapters/crypto/AesGcmSecretBox.ts"
import * as BcryptPasswordHasher from "../adapters/crypto/BcryptPasswordHasher.ts"
import * as JoseSessionTokens from "../adapters/crypto/JoseSessionTokens.ts"
import * as FixtureRegistry from "../adapters/fake/FixtureRegistry.ts"
import { HttpApp } from "../adapters/http/HttpApp.ts"
import { HttpSettings } from "../adapters/http/HttpSettings.ts"
import * as OutboxMailer from "../adapters/mail/OutboxMailer.ts"
import * as SmtpMailer from "../adapters/mail/SmtpMailer.ts"
import { requireCurrentSchema, runMigrations, type SchemaBehind } from "../adapters/postgres/Migrations.ts"
import * as SandboxPaymentGateway from "../adapters/payments/SandboxPaymentGateway.ts"
import * as PgCatalog from "../adapters/postgres/PgCatalog.ts"
import * as PgHealth from "../adapters/postgres/PgHealth.ts"
import * as PgIpAddresses from "../adapters/postgres/PgIpAddresses.ts"
import * as PgLedger from "../adapters/postgres/PgLedger.ts"
import * as PgOrders from "../adapters/postgres/PgOrders.ts"
import * as PgPlacement from "../adapters/postgres/PgPlacement.ts"
import * as PgSubscriptions from "../adapters/postgres/PgSubscriptions.ts"
import * as PgVpsRecords from "../adapters/postgres/PgVpsRecords.ts"
import * as PgGameAllocations from "../adapters/postgres/PgGameAllocations.ts"
import * as PgGameServerRecords from "../adapters/postgres/PgGameServerRecords.ts"
import * as JoseConsoleTokens from "../adapters/crypto/JoseConsoleTokens.ts"
import * as PterodactylGamePanel from "../adapters/pterodactyl/PterodactylGamePanel.ts"
import { GameSettings } from "../domain/game/GameSettings.ts"
import * as GamePanelsLive from "./GamePanelsLive.ts"
import * as ProxmoxVirtualization from "../adapters/proxmox/ProxmoxVirtualization.ts"
import * as PgLoginAttempts from "../adapters/postgres/PgLoginAttempts.ts"
import * as PgOutbox from "../adapters/postgres/PgOutbox.ts"
import * as PgPasswordResets from "../adapters/postgres/PgPasswordResets.ts"
import * as PgSessionRecords from "../adapters/postgres/PgSessionRecords.ts"
import * as PgUnitOfWork from "../adapters/postgres/PgUnitOfWork.ts"
import * as PgUpstreamSecrets from "../adapters/postgres/PgUpstreamSecrets.ts"
import * as PgUsers from "../adapters/postgres/PgUsers.ts"
import * as InseeRegistry from "../adapters/registry/InseeRegistry.ts"
import * as RechercheEntreprisesRegistry from "../adapters/registry/RechercheEntreprisesRegistry.ts"
import { AccountSettings } from "../domain/account/AccountSettings.ts"
import { applyCatalogFile, formatSummary } from "../domain/catalog/applyCatalog.ts"
import { VpsSettings } from "../domain/vps/VpsSettings.ts"
import * as CachedSessions from "./CachedSessions.ts"
import * as CachedUsers from "./CachedUsers.ts"
import * as ProxmoxClustersLive from "./ProxmoxClustersLive.ts"
import { SandboxProxmoxLive, SandboxPterodactylLive } from "./sandbox/SandboxUpstreams.ts"
import { LifecycleCronLive, ReconcileOrdersLive, WorkflowEngineLive, WorkflowsLive } from "./Workflows.ts"
import { PANEL_DIST } from "./buildPanel.ts"
import type { Settings } from "./Config.ts"
import { type EmbeddedDatabaseFailed, embeddedDataDir, postgres } from "./Database.ts"

export const LoggerLive = (settings: Pick<Settings, "logFormat" | "logLevel">) =>
  Layer.mergeAll(
    Logger.layer([settings.logFormat === "json" ? Logger.consoleJson : Logger.consolePretty()]),
    Layer.succeed(References.MinimumLogLevel, settings.logLevel)
  )

/**
 * The database, ready for the repositories. Embedded PGlite is migrated on open (nobody else runs
 * `npm run migrate` against it); a real Postgres is migrated only by `migrate`, and the server refuses to
 * start on an older schema rather than fail on its first query. The CLI shares an embedded database that a
 * running server already holds.
 */
export const DatabaseLive = (
  settings: Settings,
  role: "server" | "cli" | "migrate"
): Layer.Layer<
  SqlClient.SqlClient,
  EmbeddedDatabaseFailed | Migrator.MigrationError | SqlError.SqlError | SchemaBehind
> =>
  Option.match(settings.databaseUrl, {
    onNone: () => {
      const database = embeddedDataDir(settings.dataDir, { share: role !== "server" })
      return role === "migrate" ? database : Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(database))
    },
    onSome: (url) => {
      const database = postgres(url, role === "server" ? settings.databaseMaxConnections : 2)
      return role === "migrate" ? database : Layer.effectDiscard(requireCurrentSchema).pipe(Layer.provideMerge(database))
    }
  })

export const RepositoriesLive = Layer.mergeAll(
  PgCatalog.layer,
  PgIpAddresses.layer,
  PgOrders.layer,
  PgSubscriptions.layer,
  PgLedger.layer,
  PgVpsRecords.layer,
  PgPlacement.layer,
  PgGameServerRecords.layer,
  PgGameAllocations.layer,
  // A change of a user on another instance is seen here within a second.
  CachedUsers.layer({ ttl: "1 second", capacity: 10_000 }).pipe(Layer.provide(PgUsers.layer)),
  // A session ended through another instance stops working here within a second.
  CachedSessions.layer({ ttl: "1 second", capacity: 10_000 }).pipe(Layer.provide(PgSessionRecords.layer)),
  PgPasswordResets.layer,
  PgLoginAttempts.layer,
  PgUnitOfWork.layer,
  PgUpstreamSecrets.layer,
  PgOutbox.layer,
  PgHealth.layer
)

const MailerLive = (settings: Settings) =>
  Option.match(settings.smtpUrl, {
    onNone: () => OutboxMailer.layer({ keep: settings.outboxKeep, logBodies: !settings.production }),
    onSome: (url) => SmtpMailer.layer({ url, from: settings.mailFrom })
  })

const RegistryLive = (settings: Settings) => {
  const common = {
    timeout: Duration.millis(settings.registryTimeoutMs),
    retries: settings.registryRetries,
    retryBaseDelay: Duration.millis(250)
  }
  switch (settings.registryProvider) {
    case "insee":
      return InseeRegistry.layer({
        ...common,
        baseUrl: settings.sireneApiUrl.href.replace(/\/$/, ""),
        apiKey: Option.getOrThrow(settings.sireneApiKey)
      }).pipe(Layer.provide(NodeHttpClient.layerUndici))
    case "recherche-entreprises":
      return RechercheEntreprisesRegistry.layer({
        ...common,
        baseUrl: settings.rechercheEntreprisesUrl.href.replace(/\/$/, "")
      }).pipe(Layer.provide(NodeHttpClient.layerUndici))
    case "sandbox":
      return FixtureRegistry.layer
  }
}

export const accountSettings = (settings: Settings): AccountSettings["Service"] => ({
  publicUrl: settings.publicUrl,
  rememberMeLifetime: settings.sessionRemember,
  sessionIdleLifetime: settings.sessionIdle,
  sessionAbsoluteLifetime: settings.sessionAbsolute,
  resetTokenLifetime: AccountSettings.defaults.resetTokenLifetime,
  loginThrottleWindow: settings.loginThrottleWindow,
  maxFailuresPerAccountAddress: settings.loginMaxFailuresPerAccountAddress,
  maxFailuresPerAddress: settings.loginMaxFailuresPerAddress,
  maxFailuresPerAccount: settings.loginMaxFailuresPerAccount,
  maxLoginDelay: Duration.seconds(settings.loginMaxDelaySeconds),
  maxResetAttemptsPerAddress: settings.resetMaxAttemptsPerAddress,
  maxResetRequestsPerAccount: AccountSettings.defaults.maxResetRequestsPerAccount
})

/** Everything but the database: crypto, registry, mail, settings. */
export const ServicesLive = (settings: Settings) =>
  Layer.mergeAll(
    // One more worker than cores: a core never idles between two logins; at nice 19, the extra one costs requests nothing.
    BcryptPasswordHasher.layer(settings.bcryptCost, availableParallelism() + 1),
    JoseSessionTokens.layer(settings.jwtSecret),
    JoseConsoleTokens.layer(settings.jwtSecret),
    AesGcmSecretBox.layer(settings.encryptionKeys),
    NodeCrypto.layerSecureRandom,
    NodeCrypto.layerDigest,
    RegistryLive(settings),
    MailerLive(settings),
    Layer.succeed(AccountSettings, accountSettings(settings)),
    Layer.succeed(HttpSettings, {
      secureCookies: settings.production,
      trustProxy: settings.trustProxy,
      maxBodyBytes: settings.maxBodyBytes
    })
  )

export const vpsSettings = (settings: Settings): VpsSettings["Service"] => ({
  vmidRange: { from: settings.vmidRangeStart, to: settings.vmidRangeEnd },
  cpuOvercommit: settings.cpuOvercommit,
  memoryOvercommit: settings.memoryOvercommit,
  storage: settings.proxmoxStorage,
  storageMarginGiB: settings.storageMarginGiB,
  nameservers: settings.vpsNameservers.split(",").map((s) => s.trim()).filter((s) => s !== ""),
  gracePeriod: Duration.days(settings.vpsGraceDays)
})

export const gameSettings = (settings: Settings): GameSettings["Service"] => ({
  panelUserDomain: settings.gamePanelUserDomain,
  installTimeout: Duration.minutes(settings.gameInstallTimeoutMinutes),
  installPollInitial: Duration.seconds(1),
  installPollMax: Duration.seconds(15),
  gracePeriod: Duration.days(settings.gameGraceDays),
  consoleTokenLifetime: Duration.minutes(settings.gameConsoleTokenMinutes)
})

/** Applies CATALOG_FILE at start (idempotent: every write is an upsert, several instances may do it at once). */
const CatalogFileLive = (settings: Settings) =>
  Option.match(settings.catalogFile, {
    onNone: () => Layer.empty,
    onSome: (path) =>
      Layer.effectDiscard(Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const summary = yield* applyCatalogFile(path, (p) => fs.readFileString(p))
        for (const line of formatSummary(summary)) yield* Effect.logInfo(`catalog: ${line}`)
      })).pipe(Layer.provide(NodeFileSystem.layer))
  })

/** Sandbox task durations: realistic for people clicking through, instant for fast tests. */
const sandboxTaskDurations = (settings: Settings) =>
  settings.sandboxTaskSpeed === "instant"
    ? { default: 0, qmclone: 0, qmconfig: 0, resize: 0, qmstart: 0, qmstop: 0, qmshutdown: 0, qmreset: 0, qmsnapshot: 0, qmdelsnapshot: 0, qmdestroy: 0 }
    : {}

/**
 * The application's services on a given database layer: repositories, crypto, registry, mail, payments,
 * the catalog (CATALOG_FILE, or the sandbox Proxmox when no cluster is registered), the Proxmox wrapper and
 * the durable workflow engine with the lifecycle cron.
 */
export const AppServices = <E, R>(settings: Settings, database: Layer.Layer<SqlClient.SqlClient, E, R>) => {
  const base = ServicesLive(settings).pipe(
    Layer.provideMerge(Layer.mergeAll(
      SandboxPaymentGateway.layer().pipe(Layer.provide(NodeCrypto.layerSecureRandom)),
      Layer.succeed(VpsSettings, vpsSettings(settings)),
      Layer.succeed(GameSettings, gameSettings(settings))
    )),
    Layer.provideMerge(RepositoriesLive),
    Layer.provideMerge(database)
  )
  // With the embedded database the sandbox keeps its VMs beside it, so a restart finds both as they were.
  const catalog = SandboxProxmoxLive({
    taskDurations: sandboxTaskDurations(settings),
    stateFile: Option.isNone(settings.databaseUrl) ? join(settings.dataDir, "sandbox-proxmox.json") : undefined
  }).pipe(
    Layer.provideMerge(CatalogFileLive(settings)),
    Layer.provideMerge(base)
  )
  // Likewise the sandbox panel keeps its servers, files and backups beside the embedded database.
  const withPanel = SandboxPterodactylLive({
    installDurationMs: settings.sandboxTaskSpeed === "instant" ? 0 : 3_000,
    stateFile: Option.isNone(settings.databaseUrl) ? join(settings.dataDir, "sandbox-pterodactyl.json") : undefined
  }).pipe(Layer.provideMerge(catalog))
  const virtualization = Layer.mergeAll(
    ProxmoxVirtualization.layer.pipe(Layer.provide(ProxmoxClustersLive.layer)),
    // A customer waiting on a relayed call gets our 503 within about a second; provisioning retries on its own.
    PterodactylGamePanel.layerWith({ retries: 2, retryBaseDelay: "250 millis" }).pipe(
      Layer.provide([GamePanelsLive.layer, NodeHttpClient.layerUndici])
    )
  ).pipe(Layer.provideMerge(withPanel))
  const engine = WorkflowEngineLive({ embedded: Option.isNone(settings.databaseUrl) })
  return ReconcileOrdersLive.pipe(
    Layer.provideMerge(Layer.mergeAll(WorkflowsLive, LifecycleCronLive)),
    Layer.provideMerge(engine),
    Layer.provideMerge(virtualization)
  )
}

/** The HTTP application on a database, for any `HttpServer` (the real listener, or a test one). */
export const HttpAppLive = <E, R>(settings: Settings, database: Layer.Layer<SqlClient.SqlClient, E, R>) =>
  HttpRouter.serve(
    HttpApp({
      allowedOrigin: settings.publicUrl,
      publicUrl: settings.publicUrl,
      maxInputFrameBytes: 64 * 1024,
      // The panel's editor opens files up to 4 MiB; a little more for JSON framing.
      maxRelayBodyBytes: Math.max(settings.maxBodyBytes, 4 * 1024 * 1024 + 64 * 1024),
      maxUploadBytes: settings.maxUploadBytes,
      webRoot: PANEL_DIST
    }),
    { disableLogger: true }
  )
    .pipe(Layer.provideMerge(AppServices(settings, database)))

export const ServerLive = (settings: Settings) =>
  HttpAppLive(settings, DatabaseLive(settings, "server")).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, {
      port: settings.port,
      host: settings.host,
      gracefulShutdownTimeout: "10 seconds"
    })),
    Layer.tap(() => Effect.logInfo(`ZH listening on ${settings.host}:${settings.port} (public URL ${settings.publicUrl})`))
  )
