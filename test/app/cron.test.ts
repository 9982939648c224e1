// Two server processes on one PostgreSQL: the subscription sweep is a cluster-wide cron, so each scheduled time it runs
// in exactly one of them (the engine's shard lock decides which), never in both, never in neither. LIFECYCLE_CRON is
// every 2 seconds here (every minute by default), and the engine reads its due runs every half second (WORKFLOW_POLL_MS,
// 10 s by default): the same cron, less waiting.
import { randomBytes } from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import { testDatabaseUrl } from "../support/databases.ts"
import { sellerFile } from "../support/invoicing.ts"
import { cleanUp, createDatabase, lines, run, startServer, stop, tempDir } from "./processes.ts"

const drops: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await cleanUp()
  await Promise.all(drops.splice(0).map((drop) => drop()))
})

/** The scheduled times (`2026-11-22T07:31:05.000Z`) a process logged a sweep for. */
const sweepTimes = (stdout: string) =>
  lines(stdout).flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { message?: unknown }
      const message = Array.isArray(entry.message) ? entry.message.join(" ") : String(entry.message)
      const at = /lifecycle sweep for (\S+)/.exec(message)?.[1]
      return at === undefined ? [] : [at]
    } catch {
      return []
    }
  })

describe.skipIf(testDatabaseUrl === undefined)("the lifecycle cron with two instances", () => {
  it("fires once per scheduled time across both processes", async () => {
    const db = await createDatabase(testDatabaseUrl!)
    drops.push(db.drop)
    const env = {
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      SMTP_URL: "smtp://127.0.0.1:9",
      SELLER_FILE: sellerFile,
      JWT_SECRET: randomBytes(48).toString("base64url"),
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      BCRYPT_COST: "4",
      LOG_LEVEL: "Debug",
      LIFECYCLE_CRON: "*/2 * * * * *",
      WORKFLOW_POLL_MS: "500"
    }
    const migrated = await run("app/cli.ts", ["migrate"], { ...env, DATA_DIR: await tempDir("cron-migrate") })
    expect(migrated.code, migrated.stderr).toBe(0)
    const [a, b] = await Promise.all([
      startServer({ ...env, DATA_DIR: await tempDir("cron-a") }),
      startServer({ ...env, DATA_DIR: await tempDir("cron-b") })
    ])
    // Three scheduled times once both run and have settled who holds which shard (the engine reassigns every 3 s; a
    // sweep cut by a reassignment is run again, by design): a sweep for each, in one process only.
    const steady = Date.now() + 5_000
    const sweptSince = () => [...sweepTimes(a.stdout()), ...sweepTimes(b.stdout())].filter((t) => Date.parse(t) > steady)
    const deadline = Date.now() + 120_000
    while (new Set(sweptSince()).size < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500))
    await Promise.all([stop(a), stop(b)])
    const times = sweptSince()
    expect(new Set(times).size, `${a.stdout().slice(-2000)}\n${b.stdout().slice(-2000)}`).toBeGreaterThanOrEqual(3)
    const perTime = new Map<string, number>()
    for (const t of times) perTime.set(t, (perTime.get(t) ?? 0) + 1)
    for (const [time, count] of perTime) expect(count, `sweeps for ${time}`).toBe(1)
  }, 240_000)
})
