// Specification of the settings: defaults, one-line errors naming the setting, secrets that stay redacted.
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Option, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { demoSeller } from "../../domain/billing/invoicing/Seller.ts"
import { sellerFile } from "../support/invoicing.ts"
import { describeConfigError, type InvalidSetting, resolveSettings, SettingsConfig } from "../../app/Config.ts"

const jwt = "a-development-signing-secret-of-48-bytes-for-tests"
const keyHex = "11".repeat(32)
const otherKeyBase64 = Buffer.alloc(32, 7).toString("base64")
const smtp = "smtp://mail.example.com:587"
/** A production environment that starts: both secrets and a real mail server. */
const production = { NODE_ENV: "production", JWT_SECRET: jwt, ENCRYPTION_KEY: keyHex, SMTP_URL: smtp, SELLER_FILE: sellerFile }

type Env = Record<string, string>

const fromEnv = (env: Env) =>
  Effect.mapError(SettingsConfig, describeConfigError).pipe(
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))
  )

const fixedDevSecrets = Effect.succeed({ jwtSecret: Redacted.make(jwt), encryptionKey: Redacted.make(keyHex) })

/** Stands for DevSecrets where a test requires it not to run: running it is a defect, so the test fails. */
const forbiddenDevSecrets = Effect.die(new Error("devSecrets must not run here"))

const load = (env: Env, devSecrets: Parameters<typeof resolveSettings>[1] = fixedDevSecrets) =>
  Effect.flatMap(fromEnv(env), (raw) => resolveSettings(raw, devSecrets))

const failure = (env: Env, devSecrets: Parameters<typeof resolveSettings>[1] = fixedDevSecrets) =>
  Effect.flip(load(env, devSecrets))

const assertOneLineNaming = (error: InvalidSetting, name: string) => {
  assert.strictEqual(error._tag, "InvalidSetting")
  assert.strictEqual(error.name, name)
  assert.notInclude(error.message, "\n")
  assert.include(error.message, name)
  assert.isAbove(error.problem.length, 0)
}

describe("SettingsConfig and resolveSettings", () => {
  describe("defaults", () => {
    it.effect("an empty environment gives a development server on port 3000 with bcrypt cost 12", () =>
      Effect.gen(function*() {
        const s = yield* load({})
        assert.strictEqual(s.nodeEnv, "development")
        assert.isFalse(s.production)
        assert.strictEqual(s.port, 3000)
        assert.strictEqual(s.bcryptCost, 12)
        assert.strictEqual(s.logFormat, "pretty")
        assert.isTrue(Option.isNone(s.databaseUrl))
      }))

    it.effect("a stop waits 10 s for requests under way; Proxmox calls time out after 35 s, retried from 500 ms; the sweep runs each minute", () =>
      Effect.map(load({}), (s) => {
        assert.strictEqual(s.shutdownTimeoutSeconds, 10)
        assert.strictEqual(s.proxmoxRequestTimeoutMs, 35_000)
        assert.strictEqual(s.proxmoxRetryBaseDelayMs, 500)
        assert.strictEqual(s.lifecycleCron, "* * * * *")
      }))

    it.effect("a declined renewal is tried again 1, 3 and 5 days after the period's end; reminders go out 7 days before", () =>
      Effect.gen(function*() {
        const s = yield* load({})
        assert.deepStrictEqual(s.renewalRetryDays, [1, 3, 5])
        assert.strictEqual(s.renewalReminderDays, 7)
        assert.strictEqual(s.renewalClaimSeconds, 120)
        assert.deepStrictEqual((yield* load({ RENEWAL_RETRY_DAYS: "0.5, 2" })).renewalRetryDays, [0.5, 2])
        for (const bad of [",", "3,1", "1,1", "0", "-1", "1,x", "400"]) {
          assertOneLineNaming(yield* failure({ RENEWAL_RETRY_DAYS: bad }), "RENEWAL_RETRY_DAYS")
        }
      }))

    it.effect("sessions last 2 idle hours, 12 remembered hours and at most 7 days", () =>
      Effect.gen(function*() {
        const s = yield* load({})
        assert.strictEqual(Duration.toMillis(s.sessionIdle), Duration.toMillis(Duration.minutes(120)))
        assert.strictEqual(Duration.toMillis(s.sessionRemember), Duration.toMillis(Duration.hours(12)))
        assert.strictEqual(Duration.toMillis(s.sessionAbsolute), Duration.toMillis(Duration.days(7)))
        assert.strictEqual(Duration.toMillis(s.loginThrottleWindow), Duration.toMillis(Duration.minutes(15)))
      }))

    it.effect("the workflow engine confirms its locks every 3 s on DATABASE_URL, every 10 s embedded, or as WORKFLOW_LOCK_REFRESH_SECONDS says", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* load({ DATABASE_URL: "postgres://zh@db.internal/zh" })).workflowLockRefreshSeconds, 3)
        assert.strictEqual((yield* load({})).workflowLockRefreshSeconds, 10)
        assert.strictEqual((yield* load({ WORKFLOW_LOCK_REFRESH_SECONDS: "5" })).workflowLockRefreshSeconds, 5)
        const set = { DATABASE_URL: "postgres://zh@db.internal/zh", WORKFLOW_LOCK_REFRESH_SECONDS: "8" }
        assert.strictEqual((yield* load(set)).workflowLockRefreshSeconds, 8)
      }))

    it.effect("a provisioning step retries transient trouble from 1 s, or as PROVISIONING_RETRY_BASE_DELAY_MS says", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* load({})).provisioningRetryBaseDelayMs, 1_000)
        assert.strictEqual((yield* load({ PROVISIONING_RETRY_BASE_DELAY_MS: "20" })).provisioningRetryBaseDelayMs, 20)
      }))

    it.effect("a clone under way is checked again after 2 s, or as VPS_CLONE_POLL_MS says", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* load({})).vpsClonePollMs, 2_000)
        assert.strictEqual((yield* load({ VPS_CLONE_POLL_MS: "100" })).vpsClonePollMs, 100)
      }))

    it.effect("the workflow engine reads its database for due work every 10 s, or as WORKFLOW_POLL_MS says", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* load({})).workflowPollMs, 10_000)
        assert.strictEqual((yield* load({ WORKFLOW_POLL_MS: "500" })).workflowPollMs, 500)
      }))

    it.effect("the workflow runner: address and port chosen at start, others pinged every 2 s, unless set", () =>
      Effect.gen(function*() {
        const defaults = yield* load({})
        assert.deepStrictEqual(
          [defaults.runnerHost, defaults.runnerListenHost, defaults.runnerPort, defaults.runnerHealthCheckSeconds],
          [Option.none(), Option.none(), 0, 2]
        )
        const set = yield* load({ RUNNER_HOST: "zh-1.internal", RUNNER_LISTEN_HOST: "0.0.0.0", RUNNER_PORT: "34431", RUNNER_HEALTH_CHECK_SECONDS: "5" })
        assert.deepStrictEqual(
          [set.runnerHost, set.runnerListenHost, set.runnerPort, set.runnerHealthCheckSeconds],
          [Option.some("zh-1.internal"), Option.some("0.0.0.0"), 34431, 5]
        )
        assert.deepStrictEqual((yield* load({ RUNNER_HOST: "fd00::5" })).runnerHost, Option.some("fd00::5"))
      }))

    it.effect("the registry is the sandbox in development without SIRENE_API_KEY", () =>
      Effect.map(load({}), (s) => assert.strictEqual(s.registryProvider, "sandbox")))

    it.effect("the registry is INSEE as soon as SIRENE_API_KEY is set", () =>
      Effect.map(load({ SIRENE_API_KEY: "sirene-key" }), (s) => assert.strictEqual(s.registryProvider, "insee")))

    it.effect("the registry is recherche-entreprises in production without SIRENE_API_KEY, logging JSON", () =>
      Effect.gen(function*() {
        const s = yield* load({ NODE_ENV: "production", JWT_SECRET: jwt, ENCRYPTION_KEY: keyHex, SMTP_URL: smtp, SELLER_FILE: sellerFile }, forbiddenDevSecrets)
        assert.isTrue(s.production)
        assert.strictEqual(s.registryProvider, "recherche-entreprises")
        assert.strictEqual(s.logFormat, "json")
      }))

    it.effect("PUBLIC_URL defaults to http://localhost:<PORT>", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* load({})).publicUrl, "http://localhost:3000")
        assert.strictEqual((yield* load({ PORT: "8080" })).publicUrl, "http://localhost:8080")
      }))

    it.effect("PUBLIC_URL is reduced to its origin", () =>
      Effect.map(
        load({ PUBLIC_URL: "https://panel.example.com:8443/some/path/?q=1#x" }),
        (s) => assert.strictEqual(s.publicUrl, "https://panel.example.com:8443")
      ))
  })

  describe("sandbox mode (SANDBOX)", () => {
    it.effect("is on by default in development and test", () =>
      Effect.gen(function*() {
        assert.isTrue((yield* load({})).sandbox)
        assert.isTrue((yield* load({ NODE_ENV: "test" })).sandbox)
      }))

    it.effect("is off by default in production", () =>
      Effect.map(load(production, forbiddenDevSecrets), (s) => assert.isFalse(s.sandbox)))

    it.effect("SANDBOX=true turns it on in production, with the sandbox registry by default", () =>
      Effect.gen(function*() {
        const s = yield* load({ NODE_ENV: "production", JWT_SECRET: jwt, ENCRYPTION_KEY: keyHex, SANDBOX: "true" }, forbiddenDevSecrets)
        assert.isTrue(s.sandbox)
        assert.isTrue(s.production)
        assert.strictEqual(s.registryProvider, "sandbox")
      }))

    it.effect("SANDBOX=false turns it off in development, where the registry becomes recherche-entreprises", () =>
      Effect.gen(function*() {
        const s = yield* load({ SANDBOX: "false", SMTP_URL: smtp, SELLER_FILE: sellerFile })
        assert.isFalse(s.sandbox)
        assert.isFalse(s.production)
        assert.strictEqual(s.registryProvider, "recherche-entreprises")
      }))

    it.effect("SANDBOX=maybe is refused with one line naming SANDBOX", () =>
      Effect.map(failure({ SANDBOX: "maybe" }, forbiddenDevSecrets), (e) => assertOneLineNaming(e, "SANDBOX")))

    it.effect("outside sandbox mode SMTP_URL is required, in production and in development, before any secret is generated", () =>
      Effect.gen(function*() {
        const { SMTP_URL: _, ...withoutSmtp } = production
        for (const env of [withoutSmtp, { SANDBOX: "false" }]) {
          const e = yield* failure(env, forbiddenDevSecrets)
          assertOneLineNaming(e, "SMTP_URL")
          assert.include(e.message, "sandbox mode")
        }
      }))

    it.effect("in sandbox mode SMTP_URL may be left out (the outbox keeps the mail), even in production", () =>
      Effect.map(
        load({ NODE_ENV: "production", JWT_SECRET: jwt, ENCRYPTION_KEY: keyHex, SANDBOX: "true" }, forbiddenDevSecrets),
        (s) => assert.isTrue(Option.isNone(s.smtpUrl))
      ))

    it.effect("REGISTRY_PROVIDER=sandbox is refused outside sandbox mode, allowed in it", () =>
      Effect.gen(function*() {
        assertOneLineNaming(yield* failure({ ...production, REGISTRY_PROVIDER: "sandbox" }, forbiddenDevSecrets), "REGISTRY_PROVIDER")
        assertOneLineNaming(yield* failure({ SANDBOX: "false", SMTP_URL: smtp, REGISTRY_PROVIDER: "sandbox" }), "REGISTRY_PROVIDER")
        assert.strictEqual((yield* load({ REGISTRY_PROVIDER: "sandbox" })).registryProvider, "sandbox")
      }))
  })

  describe("a malformed value stops with one line naming the setting", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["PORT", "abc"],
      ["PORT", "70000"],
      ["BCRYPT_COST", "3"],
      ["BCRYPT_COST", "16"],
      ["NODE_ENV", "staging"],
      ["TRUST_PROXY", "maybe"],
      ["PUBLIC_URL", "not a url"],
      ["SESSION_IDLE_MINUTES", "0"],
      ["MAX_BODY_BYTES", "1"],
      ["SHUTDOWN_TIMEOUT_SECONDS", "0"],
      ["PROXMOX_REQUEST_TIMEOUT_MS", "5"],
      ["PROXMOX_RETRY_BASE_DELAY_MS", "0"],
      // effect/cluster confirms at least every third of the 35 s lock lease: past 11 s the setting would mean nothing.
      ["WORKFLOW_LOCK_REFRESH_SECONDS", "0"],
      ["WORKFLOW_LOCK_REFRESH_SECONDS", "12"],
      ["WORKFLOW_POLL_MS", "99"],
      ["PROVISIONING_RETRY_BASE_DELAY_MS", "0"],
      ["VPS_CLONE_POLL_MS", "9"],
      ["WORKFLOW_POLL_MS", "60001"],
      ["RUNNER_HOST", "10.0.0.5:4000"],
      ["RUNNER_HOST", "http://runner.internal"],
      ["RUNNER_LISTEN_HOST", "every interface"],
      ["RUNNER_PORT", "65536"],
      ["RUNNER_PORT", "-1"],
      ["RUNNER_HEALTH_CHECK_SECONDS", "0"],
      ["RUNNER_HEALTH_CHECK_SECONDS", "61"]
    ]
    for (const [name, value] of cases) {
      it.effect(`${name}=${value}`, () =>
        Effect.map(failure({ [name]: value }, forbiddenDevSecrets), (e) => assertOneLineNaming(e, name)))
    }
  })

  describe("secrets", () => {
    it.effect("a JWT_SECRET shorter than 32 bytes is refused", () =>
      Effect.map(failure({ JWT_SECRET: "x".repeat(31), ENCRYPTION_KEY: keyHex }), (e) => {
        assertOneLineNaming(e, "JWT_SECRET")
        assert.include(e.message, "32 bytes")
        assert.notInclude(e.message, "x".repeat(31))
      }))

    it.effect("a JWT_SECRET of 32 bytes counted in UTF-8 is accepted", () =>
      Effect.map(load({ JWT_SECRET: "é".repeat(16), ENCRYPTION_KEY: keyHex }), (s) =>
        assert.strictEqual(Redacted.value(s.jwtSecret).length, 32)))

    for (const [label, key] of [["31 bytes of hex", "ab".repeat(31)], ["junk", "not-a-key!"]] as const) {
      it.effect(`an ENCRYPTION_KEY of ${label} is refused`, () =>
        Effect.map(failure({ JWT_SECRET: jwt, ENCRYPTION_KEY: key }), (e) => {
          assertOneLineNaming(e, "ENCRYPTION_KEY")
          assert.notInclude(e.message, key)
        }))
    }

    it.effect("ENCRYPTION_KEYS_PREVIOUS with one bad key among good ones is refused", () =>
      Effect.map(
        failure({ JWT_SECRET: jwt, ENCRYPTION_KEY: keyHex, ENCRYPTION_KEYS_PREVIOUS: `${otherKeyBase64}, ${"cd".repeat(16)}` }),
        (e) => {
          assertOneLineNaming(e, "ENCRYPTION_KEYS_PREVIOUS")
          assert.notInclude(e.message, otherKeyBase64)
        }
      ))

    it.effect("ENCRYPTION_KEYS_PREVIOUS lists the previous keys, comma separated", () =>
      Effect.gen(function*() {
        const s = yield* load({ ENCRYPTION_KEY: keyHex, ENCRYPTION_KEYS_PREVIOUS: `${otherKeyBase64} , ${"22".repeat(32)}` })
        assert.deepStrictEqual(
          s.encryptionKeys.previous.map((k) => Buffer.from(Redacted.value(k)).toString("hex")),
          ["07".repeat(32), "22".repeat(32)]
        )
      }))

    for (const [missing, env] of [
      ["JWT_SECRET", { NODE_ENV: "production", ENCRYPTION_KEY: keyHex }],
      ["ENCRYPTION_KEY", { NODE_ENV: "production", JWT_SECRET: jwt }]
    ] as const) {
      it.effect(`production without ${missing} is refused without generating secrets`, () =>
        Effect.map(failure(env, forbiddenDevSecrets), (e) => {
          assertOneLineNaming(e, missing)
          assert.include(e.message, "is required when NODE_ENV=production")
        }))
    }

    it.effect("outside production, missing secrets come from devSecrets", () =>
      Effect.gen(function*() {
        let runs = 0
        const counted = Effect.andThen(Effect.sync(() => runs++), fixedDevSecrets)
        const s = yield* load({}, counted)
        assert.strictEqual(runs, 1)
        assert.strictEqual(new TextDecoder().decode(Redacted.value(s.jwtSecret)), jwt)
        assert.strictEqual(Buffer.from(Redacted.value(s.encryptionKeys.current)).toString("hex"), keyHex)
      }))

    it.effect("when both secrets are set, devSecrets does not run", () =>
      Effect.map(load({ JWT_SECRET: jwt, ENCRYPTION_KEY: keyHex }, forbiddenDevSecrets), (s) =>
        assert.strictEqual(Buffer.from(Redacted.value(s.encryptionKeys.current)).toString("hex"), keyHex)))

    it.effect("a LIFECYCLE_CRON that is not a cron expression is refused; one with seconds is taken", () =>
      Effect.gen(function*() {
        assertOneLineNaming(yield* failure({ LIFECYCLE_CRON: "every minute" }), "LIFECYCLE_CRON")
        assert.strictEqual((yield* load({ LIFECYCLE_CRON: "*/5 * * * * *" })).lifecycleCron, "*/5 * * * * *")
      }))

    it.effect("REGISTRY_PROVIDER=insee without SIRENE_API_KEY names SIRENE_API_KEY", () =>
      Effect.map(failure({ REGISTRY_PROVIDER: "insee" }), (e) => assertOneLineNaming(e, "SIRENE_API_KEY")))

    it.effect("secrets stay redacted when printed", () =>
      Effect.gen(function*() {
        const dbPassword = "db-password-that-must-not-leak"
        const s = yield* load({
          JWT_SECRET: jwt,
          ENCRYPTION_KEY: keyHex,
          DATABASE_URL: `postgres://zh:${dbPassword}@db.internal/zh`,
          SIRENE_API_KEY: "sirene-key-that-must-not-leak"
        })
        assert.notInclude(String(s.jwtSecret), jwt)
        assert.notInclude(String(s.encryptionKeys.current), "17,17")
        const printed = [String(s.jwtSecret), String(s.encryptionKeys.current), String(s.databaseUrl), String(s.sireneApiKey)]
        for (const text of printed) {
          assert.notInclude(text, jwt)
          assert.notInclude(text, dbPassword)
          assert.notInclude(text, "sirene-key-that-must-not-leak")
        }
      }))
  })

  describe("invoicing: the seller and the VAT rules", () => {
    const sellerText = readFileSync(sellerFile, "utf8")
    const withSeller = (text: string) => (env: Env) =>
      Effect.flatMap(fromEnv(env), (raw) => resolveSettings(raw, fixedDevSecrets, () => Effect.succeed(text)))

    it.effect("production without SELLER_FILE is refused with one line naming it", () =>
      Effect.gen(function*() {
        const { SELLER_FILE: _, ...withoutSeller } = production
        assertOneLineNaming(yield* failure(withoutSeller, forbiddenDevSecrets), "SELLER_FILE")
      }))

    it.effect("production reads the seller from SELLER_FILE; sandbox mode without it has the demo seller", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* load(production, forbiddenDevSecrets)).invoicing.seller.companyName, "ZH Hosting Test")
        assert.deepStrictEqual((yield* load({})).invoicing.seller, demoSeller)
      }))

    it.effect("a seller whose VAT number is not its SIREN's, or whose file is not a seller, is refused naming SELLER_FILE", () =>
      Effect.gen(function*() {
        const wrongVat = sellerText.replace("FR03552081317", "FR04552081317")
        const e1 = yield* Effect.flip(withSeller(wrongVat)(production))
        assertOneLineNaming(e1, "SELLER_FILE")
        assert.include(e1.problem, "FR03552081317")
        assertOneLineNaming(yield* Effect.flip(withSeller("{\"companyName\": \"x\"}")(production)), "SELLER_FILE")
        assertOneLineNaming(yield* failure({ ...production, SELLER_FILE: "/nonexistent/seller.json" }, forbiddenDevSecrets), "SELLER_FILE")
      }))

    it.effect("VAT: 20 % in France, €10,000 OSS threshold, the member states' standard rates, each overridable", () =>
      Effect.gen(function*() {
        const defaults = (yield* load({})).invoicing.vatRules
        assert.deepStrictEqual(
          [defaults.frenchRateBasisPoints, defaults.ossThresholdCents, defaults.memberStateRates.get("DE"), defaults.memberStateRates.get("FI"), defaults.memberStateRates.size],
          [2000, 1_000_000, 1900, 2550, 26]
        )
        const custom = (yield* load({ VAT_FRENCH_RATE: "19.6", VAT_OSS_THRESHOLD_CENTS: "500000", VAT_RATES: "DE=16, LU=16" })).invoicing.vatRules
        assert.deepStrictEqual(
          [custom.frenchRateBasisPoints, custom.ossThresholdCents, custom.memberStateRates.get("DE"), custom.memberStateRates.get("LU"), custom.memberStateRates.get("BE")],
          [1960, 500_000, 1600, 1600, 2100]
        )
      }))

    it.effect("a malformed rate, or a rate for France or a country outside the EU in VAT_RATES, is refused", () =>
      Effect.gen(function*() {
        assertOneLineNaming(yield* failure({ VAT_FRENCH_RATE: "twenty" }), "VAT_FRENCH_RATE")
        for (const rates of ["DE=19%", "FR=20", "CH=8.1", "DE"]) assertOneLineNaming(yield* failure({ VAT_RATES: rates }), "VAT_RATES")
      }))

    it.effect("VAT numbers are checked with VIES outside sandbox mode; its fixture is refused there", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* load(production, forbiddenDevSecrets)).vatRegistryProvider, "vies")
        assert.strictEqual((yield* load({})).vatRegistryProvider, "sandbox")
        assertOneLineNaming(yield* failure({ ...production, VAT_REGISTRY_PROVIDER: "sandbox" }, forbiddenDevSecrets), "VAT_REGISTRY_PROVIDER")
      }))
  })
})
