// Two server processes on one PostgreSQL: a session ended through one instance stops working on the other within a
// second — each instance caches what it read of a session for at most that long, and nothing else.
import { randomBytes } from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { testDatabaseUrl } from "../support/databases.ts"
import { sellerFile } from "../support/invoicing.ts"
import { cleanUp, createDatabase, run, type Server, startServer, tempDir } from "./processes.ts"

const drops: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await cleanUp()
  await Promise.all(drops.splice(0).map((drop) => drop()))
})

const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())))

/** The same session (one token) on two instances: each client holds a copy of the cookie. */
const onBoth = (token: string, a: Server, b: Server) => {
  const [onA, onB] = [new Browser(a.url), new Browser(b.url)]
  onA.cookies.set("zh_token", token)
  onB.cookies.set("zh_token", token)
  return { onA, onB }
}

describe.skipIf(testDatabaseUrl === undefined)("sessions with two instances", () => {
  it("a session ended on B is refused on A one second later at most (logout-all, then logout)", async () => {
    const db = await createDatabase(testDatabaseUrl!)
    drops.push(db.drop)
    const env = {
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      JWT_SECRET: randomBytes(48).toString("base64url"),
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      // Never used here: production wants a real mail server configured.
      SMTP_URL: "smtp://127.0.0.1:9",
      SELLER_FILE: sellerFile,
      BCRYPT_COST: "4",
      LOG_LEVEL: "Warn"
    }
    const migrated = await run("app/cli.ts", ["migrate"], { ...env, DATA_DIR: await tempDir("sessions-migrate") })
    expect(migrated.code, migrated.stderr).toBe(0)
    const [a, b] = await Promise.all([
      startServer({ ...env, DATA_DIR: await tempDir("sessions-a") }),
      startServer({ ...env, DATA_DIR: await tempDir("sessions-b") })
    ])

    const email = `instances.${Date.now()}@example.com`
    const password = "correct horse battery"
    const signUp = new Browser(a.url)
    expect((await signUp.post("/api/auth/register", { email, password, accountType: "personal", firstName: "Ada", lastName: "Lovelace" })).status)
      .toBe(201)
    const signIn = async () => {
      const browser = new Browser(a.url)
      expect((await browser.post("/api/auth/login", { email, password })).status).toBe(200)
      return browser.cookies.get("zh_token")!
    }

    // Log out everywhere, on B, of a session A has just served (and so holds in its cache).
    const first = onBoth(await signIn(), a, b)
    expect((await first.onA.get("/api/auth/me")).status).toBe(200)
    expect((await first.onB.post("/api/auth/logout-all")).status).toBe(204)
    await sleepUntil(Date.now() + 1_000)
    const afterLogoutAll = await first.onA.get("/api/auth/me")
    expect(afterLogoutAll.status, afterLogoutAll.text).toBe(401)

    // Log out of one session, on B, likewise.
    const second = onBoth(await signIn(), a, b)
    expect((await second.onA.get("/api/auth/me")).status).toBe(200)
    expect((await second.onB.post("/api/auth/logout")).status).toBe(204)
    await sleepUntil(Date.now() + 1_000)
    expect((await second.onA.get("/api/auth/me")).status).toBe(401)
  }, 240_000)
})
