// Two server processes on one PostgreSQL: the subscription sweep is a cluster-wide cron, so each minute it runs in
// exactly one of them (the engine's shard lock decides which), never in both, never in neither.
import { randomBytes } from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import { testDatabaseUrl } from "../support/databases.ts"
import { cleanUp, createDatabase, lines, run, startServer, stop, tempDir } from "./processes.ts"

const drops: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await cleanUp()
  await Promise.all(drops.splice(0).map((drop) => drop()))
})

/** The minutes (`2026-11-22T07:31`) in which a process logged a sweep. */
const sweepMinutes = (stdout: string) =>
  lines(stdout).flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { message?: unknown; timestamp?: unknown }
      const message = Array.isArray(entry.message) ? entry.message.join(" ") : String(entry.message)
      return message.includes("lifecycle sweep") && typeof entry.timestamp === "string" ? [entry.timestamp.slice(0, 16)] : []
    } catch {
      return []
    }
  })

describe.skipIf(testDatabaseUrl === undefined)("the lifecycle cron with two instances", () => {
  it("fires once a minute across both processes", async () => {
    const db = await createDatabase(testDatabaseUrl!)
    drops.push(db.drop)
    const env = {
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      SMTP_URL: "smtp://127.0.0.1:9",
      JWT_SECRET: randomBytes(48).toString("base64url"),
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      BCRYPT_COST: "4",
      LOG_LEVEL: "Debug"
    }
    const migrated = await run("app/cli.ts", ["migrate"], { ...env, DATA_DIR: await tempDir("cron-migrate") })
    expect(migrated.code, migrated.stderr).toBe(0)
    const a = await startServer({ ...env, DATA_DIR: await tempDir("cron-a") })
    const b = await startServer({ ...env, DATA_DIR: await tempDir("cron-b") })
    // Two full minutes of both running: at least two sweeps, each in one process only.
    const deadline = Date.now() + 150_000
    let minutes: Array<string> = []
    while (Date.now() < deadline) {
      minutes = [...sweepMinutes(a.stdout()), ...sweepMinutes(b.stdout())]
      if (new Set(minutes).size >= 2) break
      await new Promise((r) => setTimeout(r, 1_000))
    }
    await Promise.all([stop(a), stop(b)])
    expect(new Set(minutes).size, `${a.stdout().slice(-2000)}\n${b.stdout().slice(-2000)}`).toBeGreaterThanOrEqual(2)
    const perMinute = new Map<string, number>()
    for (const m of minutes) perMinute.set(m, (perMinute.get(m) ?? 0) + 1)
    for (const [minute, count] of perMinute) expect(count, `sweeps at ${minute}`).toBe(1)
  }, 240_000)
})
