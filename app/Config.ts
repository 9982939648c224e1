// Every setting of the platform, read once with Config; secrets stay Redacted until the adapter that uses them.
import { Config, Cron, Duration, Effect, Option, Redacted, Result, Schema } from "effect"
import * as Host from "effect/net/Host"
import { parseEncryptionKey } from "../adapters/crypto/AesGcmSecretBox.ts"
import type { Seller } from "../domain/billing/invoicing/Seller.ts"
import type { VatRules } from "../domain/billing/invoicing/vatDecision.ts"
import { InvalidSetting } from "./InvalidSetting.ts"
import { readTextFile, resolveSeller, resolveVatRules } from "./invoicingSettings.ts"
import type { LegalTexts } from "../adapters/http/LegalRoutes.ts"
import { type LegalFile, readLegalFile, resolveLegalTexts } from "./legalSettings.ts"

const withDefault = <A>(config: Config.Config<A>, value: A) => Config.withDefault(config, value)

const between = (min: number, max: number) =>
  Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: min, maximum: max })))

const intSetting = (name: string, min: number, max: number, fallback: number) =>
  withDefault(Config.schema(between(min, max), name), fallback)

/** A host name or an IP address, as another machine would connect to it (no port, no scheme). */
const HostName = Schema.String.pipe(Schema.check(Schema.makeFilter(
  (text: string) => Result.isSuccess(Host.hostFromString(text)),
  { message: "must be a host name or an IP address, without a port" }
)))

/** One address, as a mail server takes it in RCPT TO (no display name). */
const EmailAddress = Schema.String.pipe(Schema.check(Schema.makeFilter(
  (text: string) => /^[^\s@<>,;]+@[^\s@<>,;]+$/.test(text),
  { message: "must be one e-mail address, like ops@example.com" }
)))

const optionalSecret = (name: string) => Config.option(Config.Redacted(name))

export const SettingsConfig = Config.all({
  nodeEnv: withDefault(Config.Literals(["production", "development", "test"], "NODE_ENV"), "development"),
  sandbox: Config.option(Config.Boolean("SANDBOX")),
  host: withDefault(Config.String("HOST"), "127.0.0.1"),
  port: withDefault(Config.Port("PORT"), 3000),
  shutdownTimeoutSeconds: intSetting("SHUTDOWN_TIMEOUT_SECONDS", 1, 600, 10),
  publicUrl: Config.option(Config.URL("PUBLIC_URL")),
  dataDir: withDefault(Config.String("DATA_DIR"), "./data"),
  databaseUrl: optionalSecret("DATABASE_URL"),
  databaseMaxConnections: intSetting("DATABASE_MAX_CONNECTIONS", 1, 200, 10),
  databaseConnectTimeoutMs: intSetting("DATABASE_CONNECT_TIMEOUT_MS", 100, 60_000, 2_000),
  // Default by database (resolveSettings): 3 s on DATABASE_URL, 10 s (effect/cluster's) on the embedded one.
  workflowLockRefreshSeconds: Config.option(Config.schema(between(1, 11), "WORKFLOW_LOCK_REFRESH_SECONDS")),
  workflowPollMs: intSetting("WORKFLOW_POLL_MS", 100, 60_000, 10_000),
  runnerHost: Config.option(Config.schema(HostName, "RUNNER_HOST")),
  runnerListenHost: Config.option(Config.schema(HostName, "RUNNER_LISTEN_HOST")),
  runnerPort: intSetting("RUNNER_PORT", 0, 65_535, 0),
  runnerHealthCheckSeconds: intSetting("RUNNER_HEALTH_CHECK_SECONDS", 1, 60, 2),
  jwtSecret: optionalSecret("JWT_SECRET"),
  encryptionKey: optionalSecret("ENCRYPTION_KEY"),
  previousEncryptionKeys: optionalSecret("ENCRYPTION_KEYS_PREVIOUS"),
  bcryptCost: intSetting("BCRYPT_COST", 4, 15, 12),
  smtpUrl: optionalSecret("SMTP_URL"),
  mailFrom: withDefault(Config.String("MAIL_FROM"), "ZH <no-reply@localhost>"),
  outboxKeep: intSetting("OUTBOX_KEEP", 1, 10_000, 50),
  registryProvider: Config.option(Config.Literals(["insee", "recherche-entreprises", "sandbox"], "REGISTRY_PROVIDER")),
  sireneApiUrl: withDefault(Config.URL("SIRENE_API_URL"), new URL("https://api.insee.fr/api-sirene/3.11")),
  sireneApiKey: optionalSecret("SIRENE_API_KEY"),
  rechercheEntreprisesUrl: withDefault(
    Config.URL("RECHERCHE_ENTREPRISES_URL"),
    new URL("https://recherche-entreprises.api.gouv.fr")
  ),
  registryTimeoutMs: intSetting("REGISTRY_TIMEOUT_MS", 100, 60_000, 5_000),
  registryRetries: intSetting("REGISTRY_RETRIES", 0, 10, 2),
  sessionIdleMinutes: intSetting("SESSION_IDLE_MINUTES", 1, 24 * 60, 120),
  sessionRememberHours: intSetting("SESSION_REMEMBER_HOURS", 1, 24 * 30, 12),
  sessionAbsoluteHours: intSetting("SESSION_ABSOLUTE_HOURS", 1, 24 * 90, 24 * 7),
  staffSessionIdleMinutes: intSetting("STAFF_SESSION_IDLE_MINUTES", 1, 24 * 60, 30),
  staffSessionAbsoluteHours: intSetting("STAFF_SESSION_ABSOLUTE_HOURS", 1, 24 * 7, 12),
  metricsToken: optionalSecret("METRICS_TOKEN"),
  loginMaxFailuresPerAccountAddress: intSetting("LOGIN_MAX_FAILURES_PER_ACCOUNT_ADDRESS", 1, 1000, 5),
  loginMaxFailuresPerAddress: intSetting("LOGIN_MAX_FAILURES_PER_ADDRESS", 1, 100_000, 30),
  loginMaxFailuresPerAccount: intSetting("LOGIN_MAX_FAILURES_PER_ACCOUNT", 1, 100_000, 20),
  loginMaxDelaySeconds: intSetting("LOGIN_MAX_DELAY_SECONDS", 1, 3600, 60),
  loginThrottleWindowMinutes: intSetting("LOGIN_THROTTLE_WINDOW_MINUTES", 1, 24 * 60, 15),
  resetMaxAttemptsPerAddress: intSetting("RESET_MAX_ATTEMPTS_PER_ADDRESS", 1, 100_000, 10),
  trustProxy: withDefault(Config.Boolean("TRUST_PROXY"), false),
  maxBodyBytes: intSetting("MAX_BODY_BYTES", 1024, 100 * 1024 * 1024, 1024 * 1024),
  catalogFile: Config.option(Config.String("CATALOG_FILE")),
  proxmoxRequestTimeoutMs: intSetting("PROXMOX_REQUEST_TIMEOUT_MS", 100, 600_000, 35_000),
  proxmoxRetryBaseDelayMs: intSetting("PROXMOX_RETRY_BASE_DELAY_MS", 1, 60_000, 500),
  vmidRangeStart: intSetting("VMID_RANGE_START", 100, 999_999_000, 100_000),
  vmidRangeEnd: intSetting("VMID_RANGE_END", 101, 999_999_999, 200_000),
  cpuOvercommit: withDefault(
    Config.schema(Schema.NumberFromString.pipe(Schema.check(Schema.isBetween({ minimum: 0.1, maximum: 64 }))), "CPU_OVERCOMMIT"),
    4
  ),
  memoryOvercommit: withDefault(
    Config.schema(Schema.NumberFromString.pipe(Schema.check(Schema.isBetween({ minimum: 0.1, maximum: 4 }))), "MEMORY_OVERCOMMIT"),
    1
  ),
  proxmoxStorage: withDefault(Config.String("PROXMOX_STORAGE"), "local-lvm"),
  dashboardPoolFreeMinPercent: intSetting("DASHBOARD_POOL_FREE_MIN_PERCENT", 0, 100, 10),
  dashboardAllocationsFreeMinPercent: intSetting("DASHBOARD_ALLOCATIONS_FREE_MIN_PERCENT", 0, 100, 10),
  dashboardNodeCommitMaxPercent: intSetting("DASHBOARD_NODE_COMMIT_MAX_PERCENT", 1, 1000, 90),
  dashboardFailedOrdersMax: intSetting("DASHBOARD_FAILED_ORDERS_MAX", 0, 1_000_000, 0),
  dashboardFailedPaymentsMax: intSetting("DASHBOARD_FAILED_PAYMENTS_MAX", 0, 1_000_000, 0),
  dashboardOpenRefundsMax: intSetting("DASHBOARD_OPEN_REFUNDS_MAX", 0, 1_000_000, 0),
  storageMarginGiB: intSetting("STORAGE_MARGIN_GIB", 0, 100_000, 10),
  vpsNameservers: withDefault(Config.String("VPS_NAMESERVERS"), "1.1.1.1,9.9.9.9"),
  vpsGraceDays: intSetting("VPS_GRACE_DAYS", 0, 365, 7),
  vpsClonePollMs: intSetting("VPS_CLONE_POLL_MS", 10, 60_000, 2_000),
  gameGraceDays: intSetting("GAME_GRACE_DAYS", 0, 365, 14),
  gameInstallTimeoutMinutes: intSetting("GAME_INSTALL_TIMEOUT_MINUTES", 1, 24 * 60, 30),
  gamePanelUserDomain: withDefault(Config.String("GAME_PANEL_USER_DOMAIN"), "users.zh.invalid"),
  gameConsoleTokenMinutes: intSetting("GAME_CONSOLE_TOKEN_MINUTES", 1, 60, 10),
  maxUploadBytes: intSetting("MAX_UPLOAD_BYTES", 1024, 10 * 1024 * 1024 * 1024, 100 * 1024 * 1024),
  maxConsolesPerUser: intSetting("MAX_CONSOLES_PER_USER", 1, 1000, 10),
  consoleInputRateScale: intSetting("CONSOLE_INPUT_RATE_SCALE", 1, 10_000, 1),
  customerUpstreamRatePerMinute: intSetting("CUSTOMER_UPSTREAM_RATE_PER_MINUTE", 1, 100_000, 60),
  lifecycleCron: withDefault(Config.String("LIFECYCLE_CRON"), "* * * * *"),
  sandboxTaskSpeed: withDefault(Config.Literals(["realistic", "instant"], "SANDBOX_TASK_SPEED"), "realistic"),
  sandboxStripePort: Config.option(Config.Port("SANDBOX_STRIPE_PORT")),
  orderPaymentMinutes: intSetting("ORDER_PAYMENT_MINUTES", 1, 24 * 60, 60),
  stripeApiUrl: Config.option(Config.URL("STRIPE_API_URL")),
  stripeTimeoutMs: intSetting("STRIPE_TIMEOUT_MS", 1_000, 120_000, 20_000),
  stripeRetries: intSetting("STRIPE_RETRIES", 0, 10, 2),
  // When a declined renewal is tried again, in days after the period's end (decimals allowed: short in tests).
  renewalRetryDays: withDefault(Config.String("RENEWAL_RETRY_DAYS"), "1,3,5"),
  renewalReminderDays: intSetting("RENEWAL_REMINDER_DAYS", 0, 30, 7),
  renewalClaimSeconds: intSetting("RENEWAL_CLAIM_SECONDS", 1, 3600, 120),
  orderRecoverySeconds: intSetting("ORDER_RECOVERY_SECONDS", 1, 60, 60),
  provisioningRetryBaseDelayMs: intSetting("PROVISIONING_RETRY_BASE_DELAY_MS", 1, 60_000, 1_000),
  noticeRetrySeconds: intSetting("NOTICE_RETRY_SECONDS", 1, 3600, 30),
  noticeRetryBaseSeconds: intSetting("NOTICE_RETRY_BASE_SECONDS", 1, 86_400, 60),
  noticeMaxAttempts: intSetting("NOTICE_MAX_ATTEMPTS", 1, 1000, 20),
  alertEmail: Config.option(Config.schema(EmailAddress, "ALERT_EMAIL")),
  alertCheckSeconds: intSetting("ALERT_CHECK_SECONDS", 5, 3600, 60),
  alertProvisioningFailures: intSetting("ALERT_PROVISIONING_FAILURES", 1, 100_000, 3),
  alertProvisioningMinutes: intSetting("ALERT_PROVISIONING_MINUTES", 1, 24 * 60, 15),
  alertWebhookSignatureFailures: intSetting("ALERT_WEBHOOK_SIGNATURE_FAILURES", 1, 100_000, 10),
  alertWebhookSignatureMinutes: intSetting("ALERT_WEBHOOK_SIGNATURE_MINUTES", 1, 24 * 60, 10),
  alertIpPoolMinFree: intSetting("ALERT_IP_POOL_MIN_FREE", 0, 1_000_000, 5),
  alertPanelMinFreeAllocations: intSetting("ALERT_PANEL_MIN_FREE_ALLOCATIONS", 0, 1_000_000, 5),
  alertCronLateSeconds: intSetting("ALERT_CRON_LATE_SECONDS", 10, 7 * 86_400, 600),
  sellerFile: Config.option(Config.String("SELLER_FILE")),
  legalDir: Config.option(Config.String("LEGAL_DIR")),
  vatFrenchRate: withDefault(Config.String("VAT_FRENCH_RATE"), "20"),
  vatOssThresholdCents: intSetting("VAT_OSS_THRESHOLD_CENTS", 0, 1_000_000_000, 1_000_000),
  vatRates: withDefault(Config.String("VAT_RATES"), ""),
  vatRegistryProvider: Config.option(Config.Literals(["vies", "sandbox"], "VAT_REGISTRY_PROVIDER")),
  viesUrl: withDefault(Config.URL("VIES_URL"), new URL("https://ec.europa.eu/taxation_customs/vies/rest-api")),
  logLevel: withDefault(Config.LogLevel("LOG_LEVEL"), "Info"),
  logFormat: Config.option(Config.Literals(["pretty", "json"], "LOG_FORMAT"))
})

export type RawSettings = Config.Success<typeof SettingsConfig>

/** Settings after defaults that depend on other settings, with secrets resolved and validated. */
export interface Settings extends Omit<RawSettings, "sandbox" | "publicUrl" | "jwtSecret" | "encryptionKey" | "previousEncryptionKeys" | "registryProvider" | "logFormat" | "workflowLockRefreshSeconds" | "sellerFile" | "legalDir" | "vatFrenchRate" | "vatOssThresholdCents" | "vatRates" | "vatRegistryProvider" | "renewalRetryDays" | "sandboxStripePort"> {
  /** Days after a period's end when a declined renewal is tried again, increasing. */
  readonly renewalRetryDays: ReadonlyArray<number>
  /** The sandbox Stripe's port in sandbox mode: SANDBOX_STRIPE_PORT, else PORT + 1 (0, any free port, when PORT is 0). */
  readonly sandboxStripePort: number
  readonly production: boolean
  /**
   * Sandbox mode: the simulated Proxmox VE and Pterodactyl with their demo plans, the sandbox Stripe (its hosted
   * checkout page takes the test cards of reference/stripe.md), the simulated business registry and VIES and the mail outbox. On by default outside production, off in production.
   */
  readonly sandbox: boolean
  readonly publicUrl: string
  readonly jwtSecret: Redacted.Redacted<Uint8Array>
  readonly encryptionKeys: { readonly current: Redacted.Redacted<Uint8Array>; readonly previous: ReadonlyArray<Redacted.Redacted<Uint8Array>> }
  readonly registryProvider: "insee" | "recherche-entreprises" | "sandbox"
  /** VIES, or in sandbox mode the VIES adapter over the simulation (adapters/registry/sandbox/RegistrySimulation.ts). */
  readonly vatRegistryProvider: "vies" | "sandbox"
  /** The seller printed on invoices (SELLER_FILE; the demo seller in sandbox mode) and the VAT rules. */
  readonly invoicing: { readonly seller: Seller; readonly vatRules: VatRules }
  /** The legal pages (LEGAL_DIR; placeholders in sandbox mode) with the seller's mediator. */
  readonly legal: LegalTexts
  readonly logFormat: "pretty" | "json"
  /**
   * How often the workflow engine confirms its shard locks (and how long one lock operation may take): a database
   * outage is noticed, and once the database is back every workflow carried on, within about three times this.
   */
  readonly workflowLockRefreshSeconds: number
  readonly sessionIdle: Duration.Duration
  readonly sessionRemember: Duration.Duration
  readonly sessionAbsolute: Duration.Duration
  readonly loginThrottleWindow: Duration.Duration
}

export { InvalidSetting }

/** One line naming the setting, from Config's multi-line schema error. */
export const describeConfigError = (error: Config.ConfigError): InvalidSetting => {
  const text = error.message
  const name = /at \["([^"]+)"\]/.exec(text)?.[1] ?? "?"
  const problem = text.replace(/^SchemaError\(|\)$/g, "").split("\n")[0]?.trim() ?? text
  return new InvalidSetting({ name, problem })
}

const decodeJwtSecret = (secret: Redacted.Redacted<string>) => {
  const bytes = new TextEncoder().encode(Redacted.value(secret))
  return bytes.length >= 32
    ? Effect.succeed(Redacted.make(bytes))
    : Effect.fail(new InvalidSetting({ name: "JWT_SECRET", problem: "must be at least 32 bytes" }))
}

const decodeKey = (name: string, text: string) => {
  const parsed = parseEncryptionKey(text)
  return Result.isSuccess(parsed)
    ? Effect.succeed(Redacted.make(parsed.success))
    : Effect.fail(new InvalidSetting({ name, problem: parsed.failure }))
}

/**
 * Completes raw settings. `devSecrets` supplies JWT_SECRET / ENCRYPTION_KEY when they are missing outside
 * production; in production a missing secret is fatal.
 */
export const resolveSettings = Effect.fn("resolveSettings")(function*(
  raw: RawSettings,
  devSecrets: Effect.Effect<{ readonly jwtSecret: Redacted.Redacted<string>; readonly encryptionKey: Redacted.Redacted<string> }, InvalidSetting>,
  readSellerFile: (path: string) => Effect.Effect<string, InvalidSetting> = readTextFile,
  readLegal: (path: string) => Effect.Effect<LegalFile, InvalidSetting> = readLegalFile
) {
  const production = raw.nodeEnv === "production"
  const missing = Option.isNone(raw.jwtSecret) || Option.isNone(raw.encryptionKey)
  if (production && missing) {
    const name = Option.isNone(raw.jwtSecret) ? "JWT_SECRET" : "ENCRYPTION_KEY"
    return yield* new InvalidSetting({ name, problem: "is required when NODE_ENV=production" })
  }
  const sandbox = Option.getOrElse(raw.sandbox, () => !production)
  // Outside sandbox mode nothing is simulated: mail goes out for real (reset links are never kept), and the
  // registry is a real one.
  if (!sandbox && Option.isNone(raw.smtpUrl)) {
    return yield* new InvalidSetting({ name: "SMTP_URL", problem: "is required outside sandbox mode (SANDBOX=false, the default when NODE_ENV=production)" })
  }
  if (!sandbox && Option.contains(raw.registryProvider, "sandbox")) {
    return yield* new InvalidSetting({ name: "REGISTRY_PROVIDER", problem: "sandbox is only allowed in sandbox mode (SANDBOX=true)" })
  }
  const generated = missing ? yield* devSecrets : undefined
  const jwtSecret = yield* decodeJwtSecret(Option.getOrElse(raw.jwtSecret, () => generated!.jwtSecret))
  const current = yield* decodeKey(
    "ENCRYPTION_KEY",
    Redacted.value(Option.getOrElse(raw.encryptionKey, () => generated!.encryptionKey))
  )
  const previousText = Option.match(raw.previousEncryptionKeys, { onNone: () => "", onSome: Redacted.value })
  const previous = yield* Effect.forEach(
    previousText.split(",").map((s) => s.trim()).filter((s) => s !== ""),
    (text) => decodeKey("ENCRYPTION_KEYS_PREVIOUS", text)
  )
  const registryProvider = Option.getOrElse(raw.registryProvider, () =>
    Option.isSome(raw.sireneApiKey) ? "insee" as const : sandbox ? "sandbox" as const : "recherche-entreprises" as const)
  if (raw.vmidRangeEnd <= raw.vmidRangeStart) {
    return yield* new InvalidSetting({ name: "VMID_RANGE_END", problem: "must be greater than VMID_RANGE_START" })
  }
  const nameservers = raw.vpsNameservers.split(",").map((s) => s.trim()).filter((s) => s !== "")
  if (nameservers.length === 0 || !nameservers.every((n) => /^[0-9a-f.:]+$/i.test(n))) {
    return yield* new InvalidSetting({ name: "VPS_NAMESERVERS", problem: "must be a comma-separated list of IP addresses" })
  }
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i.test(raw.gamePanelUserDomain)) {
    return yield* new InvalidSetting({ name: "GAME_PANEL_USER_DOMAIN", problem: "must be a domain name such as users.example.com" })
  }
  const renewalRetryDays = raw.renewalRetryDays.split(",").map((part) => part.trim()).filter((part) => part !== "").map(Number)
  if (renewalRetryDays.length === 0 || !renewalRetryDays.every((d, i) => Number.isFinite(d) && d > 0 && d <= 365 && (i === 0 || d > renewalRetryDays[i - 1]!))) {
    return yield* new InvalidSetting({ name: "RENEWAL_RETRY_DAYS", problem: "must be increasing numbers of days above 0, comma-separated (such as 1,3,5)" })
  }
  if (Result.isFailure(Cron.parse(raw.lifecycleCron))) {
    return yield* new InvalidSetting({ name: "LIFECYCLE_CRON", problem: "must be a cron expression such as * * * * * (5 fields, or 6 with seconds first)" })
  }
  if (registryProvider === "insee" && Option.isNone(raw.sireneApiKey)) {
    return yield* new InvalidSetting({ name: "SIRENE_API_KEY", problem: "is required when REGISTRY_PROVIDER=insee" })
  }
  if (!sandbox && Option.contains(raw.vatRegistryProvider, "sandbox")) {
    return yield* new InvalidSetting({ name: "VAT_REGISTRY_PROVIDER", problem: "sandbox is only allowed in sandbox mode (SANDBOX=true)" })
  }
  const vatRegistryProvider = Option.getOrElse(raw.vatRegistryProvider, () => sandbox ? "sandbox" as const : "vies" as const)
  const invoicing = {
    seller: yield* resolveSeller(Option.getOrUndefined(raw.sellerFile), sandbox, readSellerFile),
    vatRules: yield* resolveVatRules(raw.vatFrenchRate, raw.vatOssThresholdCents, raw.vatRates)
  }
  const legal = yield* resolveLegalTexts(Option.getOrUndefined(raw.legalDir), sandbox, invoicing.seller, readLegal)
  const publicUrl = Option.match(raw.publicUrl, {
    onNone: () => `http://localhost:${raw.port}`,
    onSome: (url) => url.origin
  })
  return {
    ...raw,
    production,
    sandbox,
    publicUrl,
    jwtSecret,
    encryptionKeys: { current, previous },
    registryProvider,
    sandboxStripePort: Option.getOrElse(raw.sandboxStripePort, () => raw.port === 0 ? 0 : (raw.port % 65535) + 1),
    renewalRetryDays,
    vatRegistryProvider,
    invoicing,
    legal,
    logFormat: Option.getOrElse(raw.logFormat, () => production ? "json" as const : "pretty" as const),
    // The embedded database lives in this process: no outage to recover from, and its lock leases are 300 row updates.
    workflowLockRefreshSeconds: Option.getOrElse(raw.workflowLockRefreshSeconds, () => Option.isSome(raw.databaseUrl) ? 3 : 10),
    sessionIdle: Duration.minutes(raw.sessionIdleMinutes),
    sessionRemember: Duration.hours(raw.sessionRememberHours),
    sessionAbsolute: Duration.hours(raw.sessionAbsoluteHours),
    loginThrottleWindow: Duration.minutes(raw.loginThrottleWindowMinutes)
  } satisfies Settings
})
