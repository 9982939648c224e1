// Two server processes on one PostgreSQL, one killed (SIGKILL) while `POST /api/orders` calls are in flight on it:
// some after their charge and before its record, some before their charge. The other process, still running, settles
// every one within a minute (ORDER_RECOVERY_SECONDS and WORKFLOW_POLL_MS are short here): an order is either completed with exactly one
// charge, or failed with no charge (or one charge and its refund), and no failed order keeps an active subscription.
import { randomBytes } from "node:crypto"
import { Effect, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { afterEach, describe, expect, it } from "vitest"
import { postgres } from "../../app/Database.ts"
import { Browser } from "../support/browser.ts"
import { testDatabaseUrl } from "../support/databases.ts"
import { cleanUp, createDatabase, exitOf, run, startServer, stop, tempDir } from "./processes.ts"

const drops: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await cleanUp()
  await Promise.all(drops.splice(0).map((drop) => drop()))
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const OrderRow = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  failure_reason: Schema.NullOr(Schema.String),
  charges: Schema.Int,
  refunds: Schema.Int,
  gateway_charges: Schema.Int,
  gateway_refunds: Schema.Int,
  active_subscriptions: Schema.Int
})
type OrderRow = typeof OrderRow.Type

/** Every order with what the ledger and the gateway (the sandbox_payments table) hold for it. */
const ordersIn = (url: string) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT o.id, o.status, o.failure_reason,
               (SELECT count(*)::int FROM ledger_entries l WHERE l.order_id = o.id AND l.kind = 'charge') AS charges,
               (SELECT count(*)::int FROM ledger_entries l WHERE l.order_id = o.id AND l.kind = 'refund') AS refunds,
               (SELECT count(*)::int FROM sandbox_payments p WHERE p.idempotency_key = 'order:' || o.id) AS gateway_charges,
               (SELECT count(*)::int FROM sandbox_payments p JOIN sandbox_payments c ON p.charge = c.reference
                 WHERE c.idempotency_key = 'order:' || o.id) AS gateway_refunds,
               (SELECT count(*)::int FROM subscriptions s WHERE s.order_id = o.id AND s.status = 'active') AS active_subscriptions
        FROM orders o ORDER BY o.created_at`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(OrderRow))))
  ).pipe(Effect.provide(postgres(Redacted.make(url), 1))))

/** Polls until `until` holds for the orders, or fails after `ms` with what they were. */
const waitFor = async (url: string, until: (rows: ReadonlyArray<OrderRow>) => boolean, ms: number, what: string) => {
  const deadline = Date.now() + ms
  for (;;) {
    const rows = await ordersIn(url)
    if (until(rows)) return rows
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms: ${JSON.stringify(rows, null, 1)}`)
    await sleep(100)
  }
}

describe.skipIf(testDatabaseUrl === undefined)("orders interrupted by a killed process", () => {
  it("are carried on by the other instance within a minute: delivered if charged, failed with nothing kept if not", async () => {
    const db = await createDatabase(testDatabaseUrl!)
    drops.push(db.drop)
    const env = {
      NODE_ENV: "development",
      DATABASE_URL: db.url,
      JWT_SECRET: randomBytes(48).toString("base64url"),
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      BCRYPT_COST: "4",
      SANDBOX_TASK_SPEED: "instant",
      // Longer than the slow gateway's calls below (4 s), as it must be longer than any gateway call in production.
      ORDER_RECOVERY_SECONDS: "5",
      // The recovery's runs, and the shards the killed instance held, are picked up within half a second (10 s by default).
      WORKFLOW_POLL_MS: "500"
    }
    const migrated = await run("app/cli.ts", ["migrate"], { ...env, DATA_DIR: await tempDir("recovery-migrate") })
    expect(migrated.code, migrated.stderr).toBe(0)
    // The instance to kill answers charges slowly (2 s before and 2 s after taking one), so the kill lands between.
    // The survivor starts last: each instance registers its own sandbox cluster at start, and the last one stays.
    const doomed = await startServer({ ...env, DATA_DIR: await tempDir("recovery-a"), SANDBOX_PAYMENT_LATENCY_MS: "2000" })
    const survivor = await startServer({ ...env, DATA_DIR: await tempDir("recovery-b") })

    const browser = new Browser(doomed.url)
    const email = `recovery.${Date.now()}@example.com`
    const account = { email, password: "correct horse battery", accountType: "personal", firstName: "Ada", lastName: "Lovelace" }
    expect((await browser.post("/api/auth/register", account)).status).toBe(201)
    expect((await browser.post("/api/auth/login", { email, password: account.password, rememberMe: true })).status).toBe(200)
    const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7uLQ2QJEVpMZ8wYJfEq1v7rJ9l3cQxYwZ0Yt3JmK4N ada@example.com"
    const order = (n: number) =>
      browser.post("/api/orders", { planId: "vps-s", options: { templateId: "debian-12", hostname: `recovery-${n}`, sshPublicKey: key } })
        .then((reply) => reply.status, () => "killed")

    // Three orders charged but not recorded yet, then two not charged yet.
    const answers = [order(1), order(2), order(3)]
    await waitFor(db.url, (rows) => rows.filter((r) => r.gateway_charges === 1).length === 3, 30_000, "three charges taken")
    answers.push(order(4), order(5))
    await waitFor(db.url, (rows) => rows.length === 5, 10_000, "five orders written")
    doomed.process.kill("SIGKILL")
    const killedAt = Date.now()
    await exitOf(doomed, 10_000)
    // None of them was answered: every one was interrupted.
    expect(await Promise.all(answers)).toEqual(["killed", "killed", "killed", "killed", "killed"])
    const atKill = await ordersIn(db.url)
    expect(atKill.map((r) => [r.status, r.charges, r.gateway_charges])).toEqual([
      ["pending", 0, 1], ["pending", 0, 1], ["pending", 0, 1], ["pending", 0, 0], ["pending", 0, 0]
    ])

    const settled = await waitFor(
      db.url,
      (rows) => rows.every((r) => r.status === "completed" || r.status === "failed"),
      60_000,
      "every order settled by the surviving instance"
    )
    const settledAfter = Date.now() - killedAt
    expect(settledAfter).toBeLessThan(60_000)
    for (const r of settled) {
      if (r.status === "completed") {
        expect([r.charges, r.refunds, r.gateway_charges, r.gateway_refunds, r.active_subscriptions], r.id).toEqual([1, 0, 1, 0, 1])
      } else {
        expect(r.active_subscriptions, r.id).toBe(0)
        expect(r.charges === 0 ? [r.refunds, r.gateway_charges, r.gateway_refunds] : [r.refunds, r.gateway_charges, r.gateway_refunds], r.id)
          .toEqual(r.charges === 0 ? [0, 0, 0] : [1, 1, 1])
      }
    }
    // Charged → delivered; not charged → failed, saying so.
    const atKillById = new Map(atKill.map((r) => [r.id, r]))
    for (const r of settled) {
      const charged = atKillById.get(r.id)?.gateway_charges === 1
      expect(r.status, r.id).toBe(charged ? "completed" : "failed")
      if (!charged) expect(r.failure_reason ?? "", r.id).toContain("interrupted before its payment was confirmed")
    }
    const vps = await new Browser(survivor.url).request("GET", "/api/vps", {
      headers: { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ") }
    })
    expect(vps.status, vps.text).toBe(200)
    expect(Schema.decodeUnknownSync(Schema.Struct({ vps: Schema.Array(Schema.Unknown) }))(vps.body).vps).toHaveLength(3)
    await stop(survivor)
  }, 240_000)
})
