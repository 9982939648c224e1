// `node app/main.ts` as an operator runs it in production: without SANDBOX nothing is simulated (no sandbox listener,
// no plan, orders refused before anything is written), SANDBOX=true warns at every start, SMTP_URL is required
// outside sandbox mode; and DATA_DIR, whatever PGlite writes into it, is its owner's only.
import { randomBytes } from "node:crypto"
import { chmod, mkdir, readdir, readFile, readlink, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterEach, describe, expect, it } from "vitest"
import { postgres } from "../../app/Database.ts"
import { Browser } from "../support/browser.ts"
import { testDatabaseUrl } from "../support/databases.ts"
import { legalDir, sellerFile } from "../support/invoicing.ts"
import { cleanUp, createDatabase, type Env, exitOf, freePort, lines, run, spawnNode, startServer, stop, tempDir } from "./processes.ts"
import { fillBillingProfile } from "../support/checkout.ts"

const drops: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await cleanUp()
  await Promise.all(drops.splice(0).map((drop) => drop()))
})

const secrets = (): Env => ({
  JWT_SECRET: randomBytes(48).toString("base64url"),
  ENCRYPTION_KEY: randomBytes(32).toString("base64")
})

/** The TCP ports process `pid` listens on (Linux: its socket inodes matched against /proc/net/tcp{,6}). */
const listeningPorts = async (pid: number): Promise<ReadonlyArray<number>> => {
  const fds = await readdir(`/proc/${pid}/fd`)
  const inodes = new Set<string>()
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "")
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1]
    if (inode !== undefined) inodes.add(inode)
  }
  const ports = new Set<number>()
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const rows = (await readFile(table, "utf8").catch(() => "")).split("\n").slice(1)
    for (const row of rows) {
      const cols = row.trim().split(/\s+/)
      // local_address is HEXIP:HEXPORT, st 0A is LISTEN, the inode is the tenth column.
      const [, local = "", , state, , , , , , inode = ""] = cols
      if (state === "0A" && inodes.has(inode)) ports.add(parseInt(local.split(":")[1] ?? "0", 16))
    }
  }
  return [...ports].sort((a, b) => a - b)
}

const pidOf = (server: { readonly process: { readonly pid?: number | undefined } }) => {
  const pid = server.process.pid
  if (pid === undefined) throw new Error("the server has no pid")
  return pid
}

describe("LEGAL_DIR outside sandbox mode", () => {
  it("production with every other setting but no LEGAL_DIR exits 1 with one line naming LEGAL_DIR", async () => {
    const child = spawnNode("app/main.ts", [], {
      NODE_ENV: "production",
      PORT: String(await freePort()),
      DATA_DIR: await tempDir("no-legal"),
      SMTP_URL: "smtp://127.0.0.1:9",
      SELLER_FILE: sellerFile,
      ...secrets()
    })
    const exit = await exitOf(child, 15_000)
    expect(exit.code, child.stderr()).toBe(1)
    expect(child.stderr()).not.toContain("    at ")
    expect(lines(child.stderr())).toHaveLength(1)
    expect(lines(child.stderr())[0]).toContain("LEGAL_DIR")
  })
})

describe("SMTP_URL outside sandbox mode", () => {
  it("production without SMTP_URL exits 1 with one line naming SMTP_URL", async () => {
    const child = spawnNode("app/main.ts", [], {
      NODE_ENV: "production",
      PORT: String(await freePort()),
      DATA_DIR: await tempDir("no-smtp"),
      ...secrets()
    })
    const exit = await exitOf(child, 15_000)
    expect(exit.code, child.stderr()).toBe(1)
    expect(child.stderr()).not.toContain("    at ")
    expect(lines(child.stderr())).toHaveLength(1)
    expect(lines(child.stderr())[0]).toContain("SMTP_URL")
  })
})

describe("DATA_DIR permissions", () => {
  it("a fresh embedded database, the secrets and the sandbox's state, and an older tree, are all owner-only", async () => {
    const dataDir = join(await tempDir("perms"), "data")
    // What an older release left: a readable directory with world-writable files.
    await mkdir(join(dataDir, "older"), { recursive: true, mode: 0o755 })
    await writeFile(join(dataDir, "older", "file"), "x")
    await chmod(join(dataDir, "older", "file"), 0o666)
    await chmod(dataDir, 0o755)
    const server = await startServer({ NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4" })
    // Whatever it creates from now on is private from its first instant (Linux reports the umask in status).
    expect(await readFile(`/proc/${pidOf(server)}/status`, "utf8")).toMatch(/^Umask:\s+0077$/m)
    const browser = new Browser(server.url)
    const email = `perms.${Date.now()}@example.com`
    const account = { email, password: "correct horse battery", accountType: "personal", firstName: "Ada", lastName: "Lovelace" }
    expect((await browser.post("/api/auth/register", account)).status).toBe(201)

    const exposed = async () => {
      const found: Array<string> = []
      const walk = async (path: string): Promise<void> => {
        const info = await stat(path)
        if ((info.mode & 0o077) !== 0) found.push(`${(info.mode & 0o777).toString(8)} ${path}`)
        if (info.isDirectory()) for (const entry of await readdir(path)) await walk(join(path, entry))
      }
      await walk(dataDir)
      return found
    }
    const files = (await readdir(join(dataDir, "pglite"), { recursive: true })).length
    expect(files).toBeGreaterThan(500)
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700)
    expect(await exposed()).toEqual([])
    await stop(server)
    // What PGlite wrote while running and stopping is private too.
    expect(await exposed()).toEqual([])
  }, 240_000)
})

/** Production on a fresh real PostgreSQL (migrated, as the README says), like the other process suites. */
describe.skipIf(testDatabaseUrl === undefined)("production on PostgreSQL", () => {
  const production = async (label: string, extra: Env = {}) => {
    const db = await createDatabase(testDatabaseUrl!)
    drops.push(db.drop)
    const env: Env = {
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      DATA_DIR: await tempDir(label),
      // Nothing here sends mail: a mail server that cannot be reached is enough to start.
      SMTP_URL: "smtp://127.0.0.1:9",
      SELLER_FILE: sellerFile, LEGAL_DIR: legalDir,
      BCRYPT_COST: "4",
      ...secrets(),
      ...extra
    }
    const migrated = await run("app/cli.ts", ["migrate"], env)
    expect(migrated.code, migrated.stderr).toBe(0)
    const count = (table: string) =>
      Effect.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).pipe(
          Effect.provide(postgres(Redacted.make(db.url), 1))
        )
      ).then((rows) => rows[0]?.n)
    return { env, count }
  }

  const signIn = async (url: string) => {
    const browser = new Browser(url)
    const email = `prod.${Date.now()}@example.com`
    const account = { email, password: "correct horse battery", accountType: "personal", firstName: "Ada", lastName: "Lovelace" }
    expect((await browser.post("/api/auth/register", account)).status).toBe(201)
    expect((await browser.post("/api/auth/login", { email, password: account.password })).status).toBe(200)
    await fillBillingProfile(browser)
    return browser
  }

  const order = {
    planId: "vps-s",
    expressStartConsent: true,
    options: { templateId: "debian-12", hostname: "web-1", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG9vb28= a@b" }
  }

  it("without SANDBOX: no sandbox listener, nothing for sale, the operator's legal texts, an order refused with nothing written", async () => {
    const { count, env } = await production("prod-plain")
    // The workflow runner's port (chosen at start by default) set here, so that every listener is known.
    const runnerPort = await freePort()
    const server = await startServer({ ...env, RUNNER_PORT: String(runnerPort) })
    expect(await listeningPorts(pidOf(server))).toEqual([Number(new URL(server.url).port), runnerPort].sort((a, b) => a - b))
    expect(await (await fetch(`${server.url}/api/platform`)).json()).toEqual({ sandbox: false })
    expect(await (await fetch(`${server.url}/api/plans`)).json()).toEqual({ audience: "anonymous", plans: [] })
    // The legal pages are the operator's texts from LEGAL_DIR, not placeholders.
    expect(await (await fetch(`${server.url}/api/legal/terms?lang=en`)).json()).toMatchObject({ title: "Terms of sale", placeholder: false })

    const browser = await signIn(server.url)
    const reply = await browser.post("/api/orders", order)
    expect(reply.status, reply.text).toBe(503)
    expect(reply.body).toMatchObject({ error: { code: "PAYMENTS_NOT_CONFIGURED" } })
    expect(await Promise.all(["orders", "subscriptions", "ledger_entries", "proxmox_clusters", "plans"].map(count))).toEqual([0, 0, 0, 0, 0])
    await stop(server)
    expect(server.stdout() + server.stderr()).not.toMatch(/sandbox/i)
  }, 240_000)

  it("with SANDBOX=true: one warning line at every start, the platform says sandbox, the simulation serves", async () => {
    const { count, env } = await production("prod-sandbox", { SANDBOX: "true" })
    for (const start of [1, 2]) {
      const server = await startServer(env)
      expect((await listeningPorts(pidOf(server))).length, `start ${start}`).toBeGreaterThan(1)
      expect(await (await fetch(`${server.url}/api/platform`)).json()).toEqual({ sandbox: true })
      const plans = (await (await fetch(`${server.url}/api/plans`)).json()) as { plans: ReadonlyArray<{ id: string }> }
      expect(plans.plans.map((p) => p.id)).toContain("vps-s")
      if (start === 1) {
        const reply = await (await signIn(server.url)).post("/api/orders", order)
        expect(reply.status, reply.text).toBe(201)
      }
      await stop(server)
      const warnings = lines(server.stdout()).filter((line) => line.includes("SANDBOX=true in production"))
      expect(warnings, server.stdout()).toHaveLength(1)
      expect(JSON.parse(warnings[0] ?? "{}")).toMatchObject({ level: "WARN" })
    }
    expect(await count("orders")).toBe(1)
  }, 300_000)
})
