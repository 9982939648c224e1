// The wiring: settings → adapters → the services the HTTP edge and the CLI run on.
import { NodeCrypto, NodeFileSystem, NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { type Context, Cron, Duration, Effect, FileSystem, Layer, Logger, Option, References } from "effect"
import { HttpRouter } from "effect/http"
import { type Migrator, SqlClient, type SqlError } from "effect/sql"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import * as AesGcmSecretBox from "../adapters/crypto/AesGcmSecretBox.ts"
import * as BcryptPasswordHasher from "../adapters/crypto/BcryptPasswordHasher.ts"
import * as JoseSessionTokens from "../adapters/crypto/JoseSessionTokens.ts"
import * as FacturXDocuments from "../adapters/documents/FacturXDocuments.ts"
import { PlatformInfo } from "../adapters/http/CatalogHandlers.ts"
import { createHttpServer, routerConfig } from "../adapters/http/edge.ts"
import { CONSOLE_MAX_FRAME_BYTES, webSocketServerOptions } from "../adapters/http/consoleLimits.ts"
import { ConsoleSlots } from "../domain/consoles/ConsoleAdmission.ts"
import { CustomerBudgets } from "../adapters/http/customerBudget.ts"
import { HttpApp } from "../adapters/http/HttpApp.ts"
import { HttpSettings } from "../adapters/http/HttpSettings.ts"
import * as OutboxMailer from "../adapters/mail/OutboxMailer.ts"
import * as SmtpMailer from "../adapters/mail/SmtpMailer.ts"
import { requireCurrentSchema, runMigrations, type SchemaBehind } from "../adapters/postgres/Migrations.ts"
import * as StripePaymentGateway from "../adapters/stripe/StripePaymentGateway.ts"
import { apiAt } from "../adapters/stripe/StripePaymentGateway.ts"
import * as PgAuditLog from "../adapters/postgres/PgAuditLog.ts"
import * as PgBackOfficeFigures from "../adapters/postgres/PgBackOfficeFigures.ts"
import * as PgCustomerReferences from "../adapters/postgres/PgCustomerReferences.ts"
import { DashboardSettings } from "../domain/backoffice/dashboard.ts"
import * as PgCatalog from "../adapters/postgres/PgCatalog.ts"
import * as PgHealth from "../adapters/postgres/PgHealth.ts"
import * as PgIpAddresses from "../adapters/postgres/PgIpAddresses.ts"
import * as PgBillingProfiles from "../adapters/postgres/PgBillingProfiles.ts"
import * as PgInvoices from "../adapters/postgres/PgInvoices.ts"
import * as PgLedger from "../adapters/postgres/PgLedger.ts"
import * as PgOrders from "../adapters/postgres/PgOrders.ts"
import * as PgPaymentCustomers from "../adapters/postgres/PgPaymentCustomers.ts"
import * as PgPaymentNotifications from "../adapters/postgres/PgPaymentNotifications.ts"
import * as PgPlacement from "../adapters/postgres/PgPlacement.ts"
import * as PgProxmoxVmids from "../adapters/postgres/PgProxmoxVmids.ts"
import * as PgRenewals from "../adapters/postgres/PgRenewals.ts"
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
import * as PgNoticeRecords from "../adapters/postgres/PgNoticeRecords.ts"
import * as PgRefundRequests from "../adapters/postgres/PgRefundRequests.ts"
import * as PgServiceHolds from "../adapters/postgres/PgServiceHolds.ts"
import * as PgOpsRecords from "../adapters/postgres/PgOpsRecords.ts"
import * as PgPasswordResets from "../adapters/postgres/PgPasswordResets.ts"
import * as PgSessionRecords from "../adapters/postgres/PgSessionRecords.ts"
import * as PgUnitOfWork from "../adapters/postgres/PgUnitOfWork.ts"
import * as PgUpstreamSecrets from "../adapters/postgres/PgUpstreamSecrets.ts"
import * as PgUsers from "../adapters/postgres/PgUsers.ts"
import * as InseeRegistry from "../adapters/registry/InseeRegistry.ts"
import * as RechercheEntreprisesRegistry from "../adapters/registry/RechercheEntreprisesRegistry.ts"
import * as ViesVatRegistry from "../adapters/registry/ViesVatRegistry.ts"
import * as SandboxRegistry from "../adapters/registry/sandbox/SandboxRegistry.ts"
import { InvoicingSettings } from "../domain/billing/invoicing/InvoicingSettings.ts"
import { VatRegistry } from "../ports/VatRegistry.ts"
import { AccountSettings } from "../domain/account/AccountSettings.ts"
import { applyCatalogFile, formatSummary } from "../domain/catalog/applyCatalog.ts"
import { StepRetryBaseDelay } from "../domain/billing/provisioning.ts"
import { RenewalSettings } from "../domain/billing/RenewalSettings.ts"
import { UnsoldUpstreams } from "../domain/catalog/listPlansForSale.ts"
import { VpsSettings } from "../domain/vps/VpsSettings.ts"
import * as DeliveredNotices from "../domain/notices/deliverNotices.ts"
import { NoticeSettings } from "../domain/notices/NoticeSettings.ts"
import { BusinessRegistry } from "../ports/BusinessRegistry.ts"
import { Mailer } from "../ports/Mailer.ts"
import type { PaymentGateway } from "../ports/PaymentGateway.ts"
import { OrderSettings } from "../domain/billing/OrderSettings.ts"
import { SandboxStripeApp, SandboxStripePaymentsLive, SandboxStripeWebhookLive } from "./sandbox/SandboxStripeLive.ts"
import type { UpstreamSecrets } from "../ports/UpstreamSecrets.ts"
import { stripeCredentials } from "./StripeCredentials.ts"
import * as CachedSessions from "./CachedSessions.ts"
import * as CachedUsers from "./CachedUsers.ts"
import type { ReadCacheOptions } from "./ReadCache.ts"
import * as ProxmoxClustersLive from "./ProxmoxClustersLive.ts"
import { SANDBOX_CLUSTER, SANDBOX_PANEL, SandboxPanel, SandboxProxmoxLive, SandboxPterodactylLive } from "./sandbox/SandboxUpstreams.ts"
import { WorkflowEngineLive } from "./Engine.ts"
import {
  AlertCronLive,
  everySeconds,
  LifecycleCronLive,
  NoticeRetryCronLive,
  OrderRecoveryCronLive,
  ProductsLive,
  RECONCILE_CRON,
  ReconcileCronLive
} from "./Workflows.ts"
import { AlertSettings, CapacityReadings, liveCapacityReadings } from "../domain/ops/alerting.ts"
import { PANEL_DIST } from "./buildPanel.ts"
import { InvalidSetting, type Settings } from "./Config.ts"
import { restrictDataDir } from "./DataDir.ts"
import { makeListener, type ServeMiddleware } from "./HttpListener.ts"
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
  EmbeddedDatabaseFailed | Migrator.MigrationError | SqlError.SqlError | SchemaBehind | InvalidSetting
> =>
  Option.match(settings.databaseUrl, {
    onNone: () => {
      const database = embeddedDataDir(settings.dataDir, { share: role !== "server" })
      const ready = role === "migrate" ? database : Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(database))
      // PGlite restores its initial files with their archive's modes (0666) and writes a few through its own umask
      // (0644), past the process umask; so once it is open, DATA_DIR (an older release's tree too) is made private.
      return Layer.effectDiscard(restrictDataDir(settings.dataDir)).pipe(Layer.provideMerge(ready))
    },
    onSome: (url) => {
      const database = postgres(url, role === "server" ? settings.databaseMaxConnections : 2, {
        connectTimeout: Duration.millis(settings.databaseConnectTimeoutMs)
      })
      return role === "migrate" ? database : Layer.effectDiscard(requireCurrentSchema).pipe(Layer.provideMerge(database))
    }
  })

/**
 * A per-instance read cache's options on the application's database: a read made inside one of its transactions goes
 * past the cache, on the transaction's connection (ReadCache.ts says why).
 */
const readCache = (options: { readonly ttl: Duration.Input; readonly capacity: number }) =>
  Effect.map(SqlClient.SqlClient, (sql): ReadCacheOptions => ({
    ...options,
    inTransaction: Effect.map(Effect.serviceOption(sql.transactionService), Option.isSome)
  }))

export const RepositoriesLive = Layer.mergeAll(
  PgAuditLog.layer,
  PgBackOfficeFigures.layer,
  PgCustomerReferences.layer,
  PgCatalog.layer,
  PgIpAddresses.layer,
  PgOrders.layer,
  PgSubscriptions.layer,
  PgLedger.layer,
  PgInvoices.layer,
  PgBillingProfiles.layer,
  PgPaymentCustomers.layer,
  PgPaymentNotifications.layer,
  PgRenewals.layer,
  PgVpsRecords.layer,
  PgPlacement.layer,
  PgProxmoxVmids.layer,
  PgGameServerRecords.layer,
  PgGameAllocations.layer,
  // A change of a user on another instance is seen here within a second.
  Layer.unwrap(Effect.map(readCache({ ttl: "1 second", capacity: 10_000 }), CachedUsers.layer)).pipe(Layer.provide(PgUsers.layer)),
  // A session ended through another instance stops working here within a second.
  Layer.unwrap(Effect.map(readCache({ ttl: "1 second", capacity: 10_000 }), CachedSessions.layer)).pipe(
    Layer.provide(PgSessionRecords.layer)
  ),
  PgPasswordResets.layer,
  PgLoginAttempts.layer,
  PgUnitOfWork.layer,
  PgUpstreamSecrets.layer,
  PgOutbox.layer,
  PgNoticeRecords.layer,
  PgServiceHolds.layer,
  PgRefundRequests.layer,
  PgOpsRecords.layer,
  PgHealth.layer
)

/** A wiring that Config refuses to start with; kept as a refusal here too, so no caller can build it. */
const refused = <I, S>(service: Context.Key<I, S>, name: string, problem: string) =>
  Layer.effect(service, Effect.fail(new InvalidSetting({ name, problem })))

/** Real SMTP when SMTP_URL is set; without it, only in sandbox mode, the outbox (which keeps reset links). */
const MailerLive = (settings: Settings) =>
  Option.match(settings.smtpUrl, {
    onNone: () =>
      settings.sandbox
        ? OutboxMailer.layer({ keep: settings.outboxKeep, logBodies: !settings.production })
        : refused(Mailer, "SMTP_URL", "is required outside sandbox mode"),
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
      return settings.sandbox
        ? SandboxRegistry.businessRegistry(common)
        : refused(BusinessRegistry, "REGISTRY_PROVIDER", "sandbox is only allowed in sandbox mode (SANDBOX=true)")
  }
}

/** VIES, with the registry's timeout and retries; in sandbox mode only, the same adapter over the simulated VIES. */
const VatRegistryLive = (settings: Settings) => {
  const policy = {
    timeout: Duration.millis(settings.registryTimeoutMs),
    retries: settings.registryRetries,
    retryBaseDelay: Duration.millis(250)
  }
  return settings.vatRegistryProvider === "vies"
    ? ViesVatRegistry.layer({ ...policy, baseUrl: settings.viesUrl.href.replace(/\/$/, "") }).pipe(
      Layer.provide(NodeHttpClient.layerUndici)
    )
    : settings.sandbox
    ? SandboxRegistry.vatRegistry(policy)
    : refused(VatRegistry, "VAT_REGISTRY_PROVIDER", "sandbox is only allowed in sandbox mode (SANDBOX=true)")
}

/**
 * The payment gateway is Stripe's, through the official SDK. In sandbox mode it talks to the sandbox Stripe this
 * process runs on loopback (its checkout page takes the test cards; its webhooks come to our own route). Otherwise
 * to Stripe, configured once the operator stores `stripe:secret-key` (until then every order is refused before
 * anything is created: 503 PAYMENTS_NOT_CONFIGURED); the keys are read from the sealed secrets at most every 5
 * seconds, so a key stored or rotated while the server runs is used without a restart.
 */
const PaymentsLive = (
  settings: Settings
): Layer.Layer<PaymentGateway | SandboxStripeApp, never, SqlClient.SqlClient | UpstreamSecrets> =>
  // In sandbox mode a Stripe given by STRIPE_API_URL (one sandbox Stripe shared by several instances) replaces the
  // process's own, as every real upstream replaces its sandbox.
  settings.sandbox && Option.isNone(settings.stripeApiUrl)
    ? SandboxStripePaymentsLive({
      port: settings.sandboxStripePort,
      stateFile: Option.isNone(settings.databaseUrl) ? join(settings.dataDir, "sandbox-stripe.json") : undefined,
      timeoutMs: settings.stripeTimeoutMs,
      maxNetworkRetries: settings.stripeRetries
    })
    : Layer.unwrap(Effect.gen(function*() {
      const context = yield* Effect.context<UpstreamSecrets>()
      const credentials = yield* Effect.cachedWithTTL(
        stripeCredentials.pipe(Effect.provide(AesGcmSecretBox.layer(settings.encryptionKeys)), Effect.provideContext(context)),
        "5 seconds"
      )
      return StripePaymentGateway.layer({
        credentials,
        api: Option.getOrUndefined(Option.map(settings.stripeApiUrl, apiAt)),
        timeoutMs: settings.stripeTimeoutMs,
        maxNetworkRetries: settings.stripeRetries
      })
    })).pipe(Layer.provideMerge(SandboxStripeApp.none))

/**
 * What sandbox mode decides beyond mail, registry and payments: the public platform answer, a warning at every
 * production start in sandbox mode, and outside it the sandbox's own cluster and panel (left in the catalog by an
 * earlier sandbox run) selling nothing.
 */
const SandboxModeLive = (settings: Settings) =>
  Layer.mergeAll(
    Layer.succeed(PlatformInfo, { sandbox: settings.sandbox }),
    settings.sandbox
      ? Layer.empty
      : Layer.succeed(UnsoldUpstreams, { clusters: [SANDBOX_CLUSTER], panels: [SANDBOX_PANEL] }),
    settings.sandbox && settings.production
      ? Layer.effectDiscard(Effect.logWarning(
        "SANDBOX=true in production: simulated Proxmox VE and Pterodactyl with demo plans, orders paid on the sandbox " +
          "Stripe with test cards (no real payment), the sandbox registry and mail outbox. Never for real customers; unset SANDBOX to turn it off."
      ))
      : Layer.empty
  )

export const accountSettings = (settings: Settings): AccountSettings["Service"] => ({
  publicUrl: settings.publicUrl,
  rememberMeLifetime: settings.sessionRemember,
  sessionIdleLifetime: settings.sessionIdle,
  sessionAbsoluteLifetime: settings.sessionAbsolute,
  staffSessionLifetime: Duration.minutes(settings.staffSessionIdleMinutes),
  staffSessionAbsoluteLifetime: Duration.hours(settings.staffSessionAbsoluteHours),
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
    // Signed on node:crypto's synchronous HMAC: no thread-pool hop per request.
    JoseSessionTokens.layer(settings.jwtSecret).pipe(Layer.provide(NodeCrypto.layerMac)),
    JoseConsoleTokens.layer(settings.jwtSecret),
    AesGcmSecretBox.layer(settings.encryptionKeys),
    NodeCrypto.layerSecureRandom,
    NodeCrypto.layerDigest,
    RegistryLive(settings),
    VatRegistryLive(settings),
    Layer.succeed(InvoicingSettings, settings.invoicing),
    FacturXDocuments.layer,
    MailerLive(settings),
    SandboxModeLive(settings),
    Layer.succeed(AccountSettings, accountSettings(settings)),
    // Counted per process: with several instances behind a balancer a user may hold this many on each.
    ConsoleSlots.layer(settings.maxConsolesPerUser),
    // Likewise each instance counts its own share of the upstreams' budget (README: divide by the instances).
    CustomerBudgets.layerMemory(settings.customerUpstreamRatePerMinute),
    Layer.succeed(HttpSettings, {
      secureCookies: settings.production,
      trustProxy: settings.trustProxy,
      maxBodyBytes: settings.maxBodyBytes
    })
  )

export const vpsSettings = (settings: Settings): VpsSettings["Service"] => ({
  cpuOvercommit: settings.cpuOvercommit,
  memoryOvercommit: settings.memoryOvercommit,
  storage: settings.proxmoxStorage,
  storageMarginGiB: settings.storageMarginGiB,
  nameservers: settings.vpsNameservers.split(",").map((s) => s.trim()).filter((s) => s !== ""),
  gracePeriod: Duration.days(settings.vpsGraceDays),
  clonePoll: { initial: Duration.millis(settings.vpsClonePollMs), max: Duration.seconds(30) }
})

export const dashboardSettings = (settings: Settings): DashboardSettings => ({
  poolFreeMinPercent: settings.dashboardPoolFreeMinPercent,
  allocationsFreeMinPercent: settings.dashboardAllocationsFreeMinPercent,
  nodeCommitMaxPercent: settings.dashboardNodeCommitMaxPercent,
  failedOrdersMax: settings.dashboardFailedOrdersMax,
  failedPaymentsMax: settings.dashboardFailedPaymentsMax,
  openRefundsMax: settings.dashboardOpenRefundsMax,
  cpuOvercommit: settings.cpuOvercommit,
  memoryOvercommit: settings.memoryOvercommit,
  storage: settings.proxmoxStorage,
  upstreamTimeout: Duration.seconds(5)
})

export const gameSettings = (settings: Settings): GameSettings["Service"] => ({
  panelUserDomain: settings.gamePanelUserDomain,
  installTimeout: Duration.minutes(settings.gameInstallTimeoutMinutes),
  installPollInitial: Duration.seconds(1),
  installPollMax: Duration.seconds(15),
  gracePeriod: Duration.days(settings.gameGraceDays),
  consoleTokenLifetime: Duration.minutes(settings.gameConsoleTokenMinutes)
})

export const renewalSettings = (settings: Settings): RenewalSettings["Service"] => ({
  retryAfter: settings.renewalRetryDays.map((days) => Duration.millis(Math.round(days * 86_400_000))),
  reminderLead: Duration.days(settings.renewalReminderDays),
  claimLease: Duration.seconds(settings.renewalClaimSeconds),
  // The products' grace windows (VpsSettings, GameSettings): what a customer is told of a period left unpaid.
  gracePeriod: (kind) => Duration.days(kind === "game" ? settings.gameGraceDays : settings.vpsGraceDays),
  billingPageUrl: `${settings.publicUrl.replace(/\/$/, "")}/billing`
})

export const noticeSettings = (settings: Settings): NoticeSettings["Service"] => ({
  ...NoticeSettings.defaults,
  publicUrl: settings.publicUrl,
  retryBaseDelay: Duration.seconds(settings.noticeRetryBaseSeconds),
  maxAttempts: settings.noticeMaxAttempts
})

/** The operators' alerts (ALERT_* settings, README "Alerts"): the thresholds and the crons they watch. */
export const alertSettings = (settings: Settings): AlertSettings["Service"] => ({
  to: settings.alertEmail,
  provisioningFailures: { count: settings.alertProvisioningFailures, within: Duration.minutes(settings.alertProvisioningMinutes) },
  webhookSignatureFailures: {
    count: settings.alertWebhookSignatureFailures,
    within: Duration.minutes(settings.alertWebhookSignatureMinutes)
  },
  ipPoolMinFree: settings.alertIpPoolMinFree,
  panelMinFreeAllocations: settings.alertPanelMinFreeAllocations,
  cronLate: Duration.seconds(settings.alertCronLateSeconds),
  crons: [
    { name: "subscription-lifecycle", cron: Cron.parseUnsafe(settings.lifecycleCron) },
    { name: "order-recovery", cron: everySeconds(settings.orderRecoverySeconds) },
    { name: "customer-notices", cron: everySeconds(settings.noticeRetrySeconds) },
    { name: "reconcile", cron: RECONCILE_CRON }
  ]
})

/** The customer e-mails (issue 12 §4), through whichever Mailer the settings chose. */
const NoticesLive = (settings: Settings) =>
  DeliveredNotices.layer.pipe(Layer.provide(Layer.succeed(NoticeSettings, noticeSettings(settings))))

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
 * The sandbox Proxmox VE and Pterodactyl (sandbox mode only), each started unless a real upstream of its kind is
 * registered. With the embedded database they keep their VMs, servers, files and backups beside it, so a restart
 * finds them as the database remembers them.
 */
const SandboxUpstreamsLive = (settings: Settings) =>
  SandboxPterodactylLive({
    installDurationMs: settings.sandboxTaskSpeed === "instant" ? 0 : 3_000,
    stateFile: Option.isNone(settings.databaseUrl) ? join(settings.dataDir, "sandbox-pterodactyl.json") : undefined
  }).pipe(Layer.provideMerge(SandboxProxmoxLive({
    taskDurations: sandboxTaskDurations(settings),
    stateFile: Option.isNone(settings.databaseUrl) ? join(settings.dataDir, "sandbox-proxmox.json") : undefined
  })))

/**
 * The application's services on a given database layer: repositories, crypto, registry, mail, payments,
 * the catalog (CATALOG_FILE, or the sandbox Proxmox when no cluster is registered), the Proxmox wrapper and
 * the durable workflow engine with the lifecycle cron.
 */
export const AppServices = <E, R>(settings: Settings, database: Layer.Layer<SqlClient.SqlClient, E, R>) => {
  const base = ServicesLive(settings).pipe(
    Layer.provideMerge(Layer.mergeAll(
      PaymentsLive(settings),
      Layer.succeed(VpsSettings, vpsSettings(settings)),
      Layer.succeed(OrderSettings, {
        paymentWindow: Duration.minutes(settings.orderPaymentMinutes),
        panelUrl: settings.publicUrl
      }),
      Layer.succeed(GameSettings, gameSettings(settings)),
      Layer.succeed(RenewalSettings, renewalSettings(settings)),
      Layer.succeed(DashboardSettings, dashboardSettings(settings))
    )),
    Layer.provideMerge(RepositoriesLive),
    Layer.provideMerge(database)
  )
  const withNotices = Layer.provideMerge(
    Layer.mergeAll(NoticesLive(settings), Layer.succeed(NoticeSettings, noticeSettings(settings))),
    base
  )
  // CATALOG_FILE first: the sandbox upstreams start only when it registers no real one.
  const catalog = CatalogFileLive(settings).pipe(Layer.provideMerge(withNotices))
  const withPanel = Layer.provideMerge(
    settings.sandbox ? SandboxUpstreamsLive(settings) : Layer.succeed(SandboxPanel, Option.none()),
    catalog
  )
  const virtualization = Layer.mergeAll(
    ProxmoxVirtualization.layerWith({
      vmidRange: { from: settings.vmidRangeStart, to: settings.vmidRangeEnd },
      requestTimeout: Duration.millis(settings.proxmoxRequestTimeoutMs),
      retryBaseDelay: Duration.millis(settings.proxmoxRetryBaseDelayMs)
    }).pipe(Layer.provide(ProxmoxClustersLive.layer)),
    // A customer waiting on a relayed call gets our 503 within about a second; provisioning retries on its own.
    PterodactylGamePanel.layerWith({ retries: 2, retryBaseDelay: "250 millis" }).pipe(
      Layer.provide([GamePanelsLive.layer, NodeHttpClient.layerUndici])
    )
  ).pipe(Layer.provideMerge(withPanel))
  const engine = WorkflowEngineLive({
    embedded: Option.isNone(settings.databaseUrl),
    lockRefresh: Duration.seconds(settings.workflowLockRefreshSeconds),
    poll: Duration.millis(settings.workflowPollMs),
    runner: {
      host: settings.runnerHost,
      listenHost: settings.runnerListenHost,
      port: settings.runnerPort,
      healthCheck: Duration.seconds(settings.runnerHealthCheckSeconds)
    }
  })
  return Layer.mergeAll(
    LifecycleCronLive(Cron.parseUnsafe(settings.lifecycleCron)),
    OrderRecoveryCronLive(settings.orderRecoverySeconds),
    NoticeRetryCronLive(settings.noticeRetrySeconds),
    ReconcileCronLive,
    AlertCronLive(settings.alertCheckSeconds).pipe(Layer.provide(Layer.effect(CapacityReadings, liveCapacityReadings)))
  ).pipe(
    Layer.provide(Layer.succeed(AlertSettings, alertSettings(settings))),
    Layer.provideMerge(ProductsLive),
    Layer.provide(Layer.succeed(StepRetryBaseDelay, Duration.millis(settings.provisioningRetryBaseDelayMs))),
    Layer.provideMerge(engine),
    Layer.provideMerge(virtualization)
  )
}

/** The routes, served on whatever `HttpServer` is provided; `middleware` wraps the handling of every request. */
const HttpRoutesLive = (settings: Settings, middleware: ServeMiddleware = (app) => app) =>
  Layer.merge(SandboxStripeWebhookLive, HttpRouter.serve(
    HttpApp({
      allowedOrigin: settings.publicUrl,
      publicUrl: settings.publicUrl,
      maxInputFrameBytes: CONSOLE_MAX_FRAME_BYTES,
      inputRateScale: settings.consoleInputRateScale,
      // The panel's editor opens files up to 4 MiB; a little more for JSON framing.
      maxRelayBodyBytes: Math.max(settings.maxBodyBytes, 4 * 1024 * 1024 + 64 * 1024),
      maxUploadBytes: settings.maxUploadBytes,
      webRoot: PANEL_DIST,
      metricsToken: settings.metricsToken,
      legal: settings.legal
    }),
    { disableLogger: true, routerConfig, middleware }
  ))

/** The HTTP application on a database, for any `HttpServer` (the real listener, or a test one). */
export const HttpAppLive = <E, R>(settings: Settings, database: Layer.Layer<SqlClient.SqlClient, E, R>) =>
  HttpRoutesLive(settings).pipe(Layer.provideMerge(AppServices(settings, database)))

/**
 * The server process. Every service is built before the port is bound: opening a fresh embedded database blocks
 * the event loop for seconds (PGlite's initdb), so a port bound earlier would leave requests unanswered; until the
 * routes are attached, the listener itself answers 503 STARTING. At a stop (SIGTERM) the listener drains first,
 * then the workflow engine hands its shards off and the database closes.
 */
export const ServerLive = (settings: Settings) =>
  Layer.unwrap(Effect.map(
    makeListener({
      host: settings.host,
      port: settings.port,
      shutdownTimeout: Duration.seconds(settings.shutdownTimeoutSeconds),
      createServer: createHttpServer,
      websocket: webSocketServerOptions
    }),
    (listener) =>
      listener.ready.pipe(
        Layer.provideMerge(HttpRoutesLive(settings, listener.endsAtStop)),
        Layer.provide(listener.layer),
        Layer.provideMerge(AppServices(settings, DatabaseLive(settings, "server"))),
        Layer.tap(() => Effect.logInfo(`ZH ready on ${settings.host}:${settings.port} (public URL ${settings.publicUrl})`))
      )
  ))
