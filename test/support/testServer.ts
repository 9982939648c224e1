// A real server on a loopback ephemeral port, on a real database, for HTTP and end-to-end tests.
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Duration, Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { HttpServer } from "effect/http"
import type { SqlClient } from "effect/sql"
import { mkdtempSync } from "node:fs"
import { createServer as createNetServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inspect } from "node:util"
import { webSocketServerOptions } from "../../adapters/http/consoleLimits.ts"
import type { Settings } from "../../app/Config.ts"
import { createHttpServer } from "../../adapters/http/edge.ts"
import { HttpAppLive } from "../../app/Layers.ts"
import { SandboxStripeApp } from "../../app/sandbox/SandboxStripeLive.ts"
import { Outbox } from "../../ports/Outbox.ts"
import { sqlBackends } from "./databases.ts"
import { testVatRules } from "./invoicing.ts"
import { demoSeller } from "../../domain/billing/invoicing/Seller.ts"
import { placeholderLegalTexts } from "../../app/legalSettings.ts"

export const testSettings = (overrides: Partial<Settings> = {}): Settings => ({
  nodeEnv: "test",
  production: false,
  // The e2e suites run everything simulated; tests of the wiring outside sandbox mode override it.
  sandbox: true,
  host: "127.0.0.1",
  port: 0,
  shutdownTimeoutSeconds: 10,
  publicUrl: "http://panel.test",
  // Its own directory: the sandbox Proxmox keeps its state file there.
  dataDir: mkdtempSync(join(tmpdir(), "zh-test-data-")),
  databaseUrl: Option.none(),
  databaseMaxConnections: 5,
  databaseConnectTimeoutMs: 1000,
  workflowLockRefreshSeconds: 10,
  // The engine's own poll of its database (production: 10 s): a cron run or durable timer is picked up this late.
  workflowPollMs: 500,
  // Used with a databaseUrl only (the engine's socket runner): on loopback, on a port chosen at start.
  runnerHost: Option.some("127.0.0.1"),
  runnerListenHost: Option.none(),
  runnerPort: 0,
  runnerHealthCheckSeconds: 2,
  jwtSecret: Redacted.make(new TextEncoder().encode("test-signing-key-of-at-least-32-bytes!!")),
  encryptionKeys: { current: Redacted.make(new Uint8Array(32).fill(7)), previous: [] },
  bcryptCost: 4,
  smtpUrl: Option.none(),
  mailFrom: "ZH <no-reply@panel.test>",
  outboxKeep: 50,
  registryProvider: "sandbox",
  sireneApiUrl: new URL("https://api.insee.fr/api-sirene/3.11"),
  sireneApiKey: Option.none(),
  rechercheEntreprisesUrl: new URL("https://recherche-entreprises.api.gouv.fr"),
  registryTimeoutMs: 1000,
  registryRetries: 0,
  sessionIdleMinutes: 120,
  sessionRememberHours: 12,
  sessionAbsoluteHours: 168,
  staffSessionIdleMinutes: 30,
  staffSessionAbsoluteHours: 12,
  metricsToken: Option.none(),
  loginMaxFailuresPerAccountAddress: 5,
  loginMaxFailuresPerAddress: 30,
  loginMaxFailuresPerAccount: 20,
  loginMaxDelaySeconds: 60,
  loginThrottleWindowMinutes: 15,
  resetMaxAttemptsPerAddress: 10,
  trustProxy: false,
  maxBodyBytes: 64 * 1024,
  catalogFile: Option.none(),
  // Upstream waits shortened (the production defaults are 35 s and 500 ms): the same calls, retries and timeouts.
  proxmoxRequestTimeoutMs: 5_000,
  proxmoxRetryBaseDelayMs: 20,
  vmidRangeStart: 100_000,
  vmidRangeEnd: 200_000,
  cpuOvercommit: 4,
  memoryOvercommit: 1,
  proxmoxStorage: "local-lvm",
  dashboardPoolFreeMinPercent: 10,
  dashboardAllocationsFreeMinPercent: 10,
  dashboardNodeCommitMaxPercent: 90,
  dashboardFailedOrdersMax: 0,
  dashboardFailedPaymentsMax: 0,
  dashboardOpenRefundsMax: 0,
  storageMarginGiB: 10,
  vpsNameservers: "1.1.1.1",
  vpsGraceDays: 7,
  // A clone under way is checked again after 100 ms, doubling (production: from 2 s): the same checks, sooner.
  vpsClonePollMs: 100,
  gameGraceDays: 14,
  renewalRetryDays: [1, 3, 5],
  renewalReminderDays: 7,
  renewalClaimSeconds: 120,
  gameInstallTimeoutMinutes: 30,
  gamePanelUserDomain: "users.zh.invalid",
  gameConsoleTokenMinutes: 10,
  maxUploadBytes: 100 * 1024 * 1024,
  maxConsolesPerUser: 10,
  consoleInputRateScale: 1,
  customerUpstreamRatePerMinute: 60,
  lifecycleCron: "* * * * *",
  sandboxTaskSpeed: "instant",
  sandboxStripePort: 0,
  orderPaymentMinutes: 60,
  stripeApiUrl: Option.none(),
  stripeTimeoutMs: 20_000,
  stripeRetries: 2,
  orderRecoverySeconds: 60,
  // A provisioning step's own retries of transient upstream trouble (production: from 1 s): the same retries, sooner.
  provisioningRetryBaseDelayMs: 20,
  // Customer e-mails a mail server refused are tried again each second, from 1 s (production: every 30 s, from 1 min).
  noticeRetrySeconds: 1,
  noticeRetryBaseSeconds: 1,
  noticeMaxAttempts: 20,
  alertEmail: Option.none(),
  alertCheckSeconds: 60,
  alertProvisioningFailures: 3,
  alertProvisioningMinutes: 15,
  alertWebhookSignatureFailures: 10,
  alertWebhookSignatureMinutes: 10,
  alertIpPoolMinFree: 5,
  alertPanelMinFreeAllocations: 5,
  alertCronLateSeconds: 600,
  vatRegistryProvider: "sandbox",
  viesUrl: new URL("https://ec.europa.eu/taxation_customs/vies/rest-api"),
  invoicing: { seller: demoSeller, vatRules: testVatRules },
  legal: placeholderLegalTexts(demoSeller),
  logLevel: "Warn",
  logFormat: "pretty",
  sessionIdle: Duration.minutes(120),
  sessionRemember: Duration.hours(12),
  sessionAbsolute: Duration.hours(168),
  loginThrottleWindow: Duration.minutes(15),
  ...overrides
})

/**
 * The sandbox Stripe a test server runs in sandbox mode (its control counts PaymentIntents, arms faults). Only sandbox
 * mode starts one; a test outside sandbox mode that reaches for it fails.
 */
export const sandboxStripe = Effect.flatMap(SandboxStripeApp, (found) =>
  Option.match(found, {
    onNone: () => Effect.die(new Error("this test server is not in sandbox mode: no sandbox Stripe")),
    onSome: (app) => Effect.succeed(app.sandbox)
  }))

/** The payments the server's sandbox Stripe took (PaymentIntents that succeeded), oldest first. */
export const stripePayments = Effect.flatMap(sandboxStripe, (stripe) =>
  Effect.map(stripe.control.events, (events) =>
    events.filter((e) => e.type === "payment_intent.succeeded").map((e) =>
      e.data.object as { readonly id: string; readonly amount: number; readonly description: string | null }
    )))

export class TestServer extends Context.Service<TestServer, { readonly url: string }>()("zh/test/TestServer") {}

/** How the listener stops: `gracefulShutdown` bounds the wait for open connections (NodeHttpServer's default 20 s). */
export interface ListenerOptions {
  readonly gracefulShutdown?: Duration.Input
}

/** The whole application on `database`, listening on 127.0.0.1 at `settings.port` (0 by default: an ephemeral port). */
export const testServerLayer = <E>(settings: Settings, database: Layer.Layer<SqlClient.SqlClient, E>, listener: ListenerOptions = {}) =>
  Layer.effect(TestServer, HttpServer.addressFormattedWith((url) => Effect.succeed({ url }))).pipe(
    // HttpAppLive provides (and keeps visible) the repositories and the SqlClient of this one database.
    Layer.provideMerge(HttpAppLive(settings, database)),
    // The WebSocket server's options are the real server's (the consoles' frame limit).
    Layer.provideMerge(NodeHttpServer.layer(createHttpServer, {
      port: settings.port,
      host: "127.0.0.1",
      websocket: webSocketServerOptions,
      ...(listener.gracefulShutdown === undefined ? {} : { gracefulShutdownTimeout: listener.gracefulShutdown })
    }))
  )

/** The database a test server runs on: real Postgres in CI (TEST_DATABASE_URL), embedded PGlite otherwise. */
export const testDatabase = () => {
  const backends = sqlBackends()
  return (backends.find(([name]) => name === "postgres") ?? backends[0]!)[1]
}

/** The embedded PGlite a test server runs on even when TEST_DATABASE_URL is set (a test of the embedded database). */
export const embeddedTestDatabase = () => sqlBackends().find(([name]) => name === "pglite")![1]

/** Starts a server for a test file (on `database`, `testDatabase()` unless told); `stop` in afterAll. */
export const startTestServer = async (
  overrides: Partial<Settings> = {},
  listener: ListenerOptions = {},
  database: Layer.Layer<SqlClient.SqlClient, unknown> = testDatabase()
) => {
  const runtime = ManagedRuntime.make(testServerLayer(testSettings(overrides), database, listener))
  let url: string
  try {
    url = (await runtime.runPromise(TestServer)).url
  } catch (e) {
    await runtime.dispose()
    throw e
  }
  return {
    url,
    runtime,
    /** The newest messages of the sandbox outbox (no SMTP_URL in these settings). */
    outbox: (limit = 10) => runtime.runPromise(Effect.flatMap(Outbox, (o) => o.latest(limit))),
    stop: () => runtime.dispose()
  }
}

/** A loopback port free right now (the OS picks it; the listener is closed before it is returned). */
const freeLoopbackPort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createNetServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => resolve(port))
    })
  })

/**
 * A server whose PUBLIC_URL is its own address, for a real browser: the console WebSockets require
 * Origin === PUBLIC_URL, signed download and upload links point at PUBLIC_URL, and a page's origin is the URL it
 * loaded. The port must be known before the server starts, so one is picked free and retried if taken meanwhile.
 */
export const startSelfAddressedTestServer = async (overrides: Partial<Settings> = {}) => {
  for (let attempt = 1; ; attempt++) {
    const port = await freeLoopbackPort()
    try {
      return await startTestServer({ ...overrides, port, publicUrl: `http://127.0.0.1:${port}` })
    } catch (e) {
      if (attempt >= 3 || !inspect(e, { depth: 8 }).includes("EADDRINUSE")) throw e
    }
  }
}
