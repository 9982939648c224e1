// The server as an operator runs it (`node app/main.ts`): one-line refusals, development secrets and the
// embedded database that survive restarts, JSON logs without secrets in production, the migration gate.
import { randomBytes } from "node:crypto"
import { readFile, stat } from "node:fs/promises"
import { createServer } from "node:net"
import { join } from "node:path"
import { Schema } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { Browser, parseSetCookie } from "../support/browser.ts"
import { fillBillingProfile, payOrder } from "../support/checkout.ts"
import { testDatabaseUrl } from "../support/databases.ts"
import { legalDir, sellerFile } from "../support/invoicing.ts"
import {
  cleanUp,
  createDatabase,
  type Env,
  exitOf,
  freePort,
  lines,
  migratedDataDir,
  repoRoot,
  run,
  spawnNode,
  startServer,
  stop,
  tempDir
} from "./processes.ts"

afterEach(cleanUp)

const Manifest = Schema.Struct({ scripts: Schema.Record(Schema.String, Schema.String) })

const account = (email: string) => ({
  email,
  password: "correct horse battery",
  accountType: "personal",
  firstName: "Ada",
  lastName: "Lovelace"
})

/** The server's refusal to start: exit 1 within a few seconds, one line on stderr, no stack trace. */
const refusal = async (env: Env, ms = 10_000) => {
  const child = spawnNode("app/main.ts", [], { PORT: String(await freePort()), ...env })
  const exit = await exitOf(child, ms)
  expect(exit.code, child.stderr()).toBe(1)
  const stderr = child.stderr()
  expect(stderr).not.toContain("    at ")
  expect(lines(stderr)).toHaveLength(1)
  return { line: lines(stderr)[0] ?? "", stdout: child.stdout() }
}

describe("refusing to start", () => {
  it("PORT=abc exits 1 with one line naming PORT", async () => {
    const dataDir = await tempDir("port")
    const { line } = await refusal({ NODE_ENV: "development", DATA_DIR: dataDir, PORT: "abc" })
    expect(line).toContain("PORT")
  })

  it("a PORT another process listens on exits 1 with one line saying the address is in use", async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const address = taken.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    try {
      // The port is bound last, once every service is ready: the refusal comes after the database opened.
      const { line } = await refusal({ NODE_ENV: "development", DATA_DIR: await migratedDataDir("taken"), PORT: String(port) }, 60_000)
      expect(line).toMatch(/^Cannot listen for HTTP: .*EADDRINUSE/)
    } finally {
      taken.close()
    }
  }, 90_000)

  it("production without JWT_SECRET exits 1 with one line naming JWT_SECRET, generating nothing", async () => {
    const dataDir = await tempDir("prod")
    const { line } = await refusal({
      NODE_ENV: "production",
      DATA_DIR: dataDir,
      ENCRYPTION_KEY: randomBytes(32).toString("base64")
    })
    expect(line).toContain("JWT_SECRET")
    expect(line).toContain("is required when NODE_ENV=production")
    await expect(stat(join(dataDir, "secrets.json"))).rejects.toThrow()
  })

  it("`npm run migrate`, which the refusal of an unmigrated database names, applies the migrations", async () => {
    const manifest: unknown = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8"))
    const script = Schema.decodeUnknownSync(Manifest)(manifest).scripts["migrate"] ?? ""
    const [command, file, ...args] = script.split(" ")
    expect(command).toBe("node")
    // A first start of the embedded database (initdb, then every migration): seconds of CPU, more on a busy machine.
    const migrated = await run(file ?? "", args, { NODE_ENV: "development", DATA_DIR: await tempDir("npm-migrate") }, { ms: 90_000 })
    expect(migrated.code, migrated.stderr).toBe(0)
    expect(migrated.stdout).toContain("applied migration 1_accounts")
  }, 240_000)
})

describe("development without secrets", () => {
  it("generates private secrets and keeps sessions and data across a restart", async () => {
    const dataDir = await migratedDataDir("dev")
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4" }
    const first = await startServer(env)
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200)
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200)
    expect((await stat(join(dataDir, "secrets.json"))).mode & 0o777).toBe(0o600)
    expect(first.stdout() + first.stderr()).toMatch(/generated development secrets/)

    const browser = new Browser(first.url)
    const email = `restart.${Date.now()}@example.com`
    expect((await browser.post("/api/auth/register", account(email))).status).toBe(201)
    expect((await browser.post("/api/auth/login", { email, password: "correct horse battery" })).status).toBe(200)
    expect(browser.cookies.get("zh_token")).toBeDefined()
    const stopped = await stop(first)
    expect(stopped.code !== null || stopped.signal !== null).toBe(true)

    const second = await startServer(env)
    expect(second.stdout() + second.stderr()).not.toMatch(/generated development secrets/)
    const me = await new Browser(second.url).request("GET", "/api/auth/me", {
      headers: { cookie: `zh_token=${browser.cookies.get("zh_token") ?? ""}` }
    })
    expect(me.status, me.text).toBe(200)
    expect(me.body).toMatchObject({ user: { email } })
    await stop(second)
  }, 300_000)

  it("sandbox mode runs the sandbox Stripe: an order paid on its page moves on by its webhook; its state survives a restart", async () => {
    const dataDir = await migratedDataDir("stripe")
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4", SANDBOX_TASK_SPEED: "instant" }
    const first = await startServer(env)
    const browser = new Browser(first.url)
    const email = `stripe.${Date.now()}@example.com`
    expect((await browser.post("/api/auth/register", account(email))).status).toBe(201)
    expect((await browser.post("/api/auth/login", { email, password: "correct horse battery" })).status).toBe(200)
    await fillBillingProfile(browser)
    const placed = await browser.post("/api/orders", { planId: "mc-2g", expressStartConsent: true, options: {} })
    expect(placed.status, placed.text).toBe(201)
    const order = (placed.body as { order: { id: string; status: string; checkoutUrl?: string } }).order
    // The sandbox Stripe listens on PORT + 1, on loopback.
    expect(new URL(order.checkoutUrl ?? "").port).toBe(String(Number(new URL(first.url).port) + 1))
    const paid = await payOrder(browser, order)
    expect(["provisioning", "completed"]).toContain(paid.status)
    expect((await stat(join(dataDir, "sandbox-stripe.json"))).mode & 0o777).toBe(0o600)
    await stop(first)

    // The customer's card, saved by the first payment, is still there at the sandbox Stripe after a restart.
    const second = await startServer(env)
    const again = new Browser(second.url)
    expect((await again.post("/api/auth/login", { email, password: "correct horse battery" })).status).toBe(200)
    const card = await again.get("/api/payment-method")
    expect(card.status, card.text).toBe(200)
    expect(card.body).toMatchObject({ brand: "visa", last4: "4242" })
    await stop(second)
  }, 300_000)

  it("a second server on the same DATA_DIR exits 1 with one line saying another process serves it", async () => {
    const dataDir = await migratedDataDir("twice")
    const env = { NODE_ENV: "development", DATA_DIR: dataDir }
    const first = await startServer(env)
    const { line } = await refusal(env)
    expect(line).toMatch(/another process is serving this data directory/)
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200)
    await stop(first)
  }, 240_000)
})

/** Real Postgres suites exist only when TEST_DATABASE_URL is set (like `sqlBackends()`). */
const postgresSuites: ReadonlyArray<string> = testDatabaseUrl === undefined ? [] : [testDatabaseUrl]

for (const adminUrl of postgresSuites) {
  describe("production on PostgreSQL", () => {
    const jwtSecret = randomBytes(48).toString("base64url")
    const key = randomBytes(32)
    const production = (databaseUrl: string, dataDir: string): Env => ({
      NODE_ENV: "production",
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      // Required outside sandbox mode; nothing here sends mail.
      SMTP_URL: "smtp://127.0.0.1:9",
      SELLER_FILE: sellerFile, LEGAL_DIR: legalDir,
      JWT_SECRET: jwtSecret,
      ENCRYPTION_KEY: key.toString("base64"),
      BCRYPT_COST: "4"
    })
    const drops: Array<() => Promise<unknown>> = []
    afterEach(async () => {
      await cleanUp()
      await Promise.all(drops.splice(0).map((drop) => drop()))
    })
    const freshDatabase = async () => {
      const db = await createDatabase(adminUrl)
      drops.push(db.drop)
      return db.url
    }

    it("logs only JSON lines, never a secret, and sets Secure session cookies", async () => {
      const env = production(await freshDatabase(), await tempDir("prod-pg"))
      const migrated = await run("app/cli.ts", ["migrate"], env)
      expect(migrated.code, migrated.stderr).toBe(0)
      const server = await startServer(env)
      const browser = new Browser(server.url)
      const email = `prod.${Date.now()}@example.com`
      expect((await browser.post("/api/auth/register", account(email))).status).toBe(201)
      const login = await browser.post("/api/auth/login", { email, password: "wrong password" })
      expect(login.status).toBe(401)
      const ok = await browser.post("/api/auth/login", { email, password: "correct horse battery" })
      expect(ok.status).toBe(200)
      const cookie = parseSetCookie(ok.setCookies.find((c) => c.startsWith("zh_token=")) ?? "")
      expect(cookie.attributes.has("secure")).toBe(true)
      await stop(server)

      const logged = lines(server.stdout())
      expect(logged.length).toBeGreaterThan(0)
      for (const line of logged) expect(() => JSON.parse(line), line).not.toThrow()
      const output = server.stdout() + server.stderr()
      for (const secret of [jwtSecret, key.toString("base64"), key.toString("hex"), key.toString("base64url")]) {
        expect(output).not.toContain(secret)
      }
    }, 240_000)

    it("refuses an unmigrated database with one line, and starts after `migrate`", async () => {
      const env = production(await freshDatabase(), await tempDir("unmigrated"))
      const { line } = await refusal(env)
      expect(line).toContain("npm run migrate")

      const migrated = await run("app/cli.ts", ["migrate"], env)
      expect(migrated.code, migrated.stderr).toBe(0)
      expect.soft(migrated.stdout).toContain("applied migration 1_accounts")
      expect.soft(migrated.stdout).toContain("applied migration 2_secrets_outbox")

      const server = await startServer(env)
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
      await stop(server)
      const again = await run("app/cli.ts", ["migrate"], env)
      expect(again.stdout.trim()).toBe("The database schema is up to date.")
    }, 240_000)
  })
}
