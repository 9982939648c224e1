// A server process killed (SIGKILL) between a renewal's charge and its record: the gateway (the sandbox's, its charges in
// the sandbox_payments table, slow here: 2 s before and after taking one) has taken the money, our ledger knows nothing.
// Restarted on the same PostgreSQL, the renewal pass makes the same attempt with the same idempotency key once the
// dead pass's claim lapses: one charge at the gateway, one in the ledger, the period extended once.
import { randomBytes, randomUUID } from "node:crypto"
import { Effect, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { afterEach, describe, expect, it } from "vitest"
import * as PgOrders from "../../adapters/postgres/PgOrders.ts"
import * as PgSubscriptions from "../../adapters/postgres/PgSubscriptions.ts"
import { postgres } from "../../app/Database.ts"
import { OrderId, PlanId, SubscriptionId } from "../../domain/billing/Billing.ts"
import { Browser } from "../support/browser.ts"
import { testDatabaseUrl } from "../support/databases.ts"
import { cleanUp, createDatabase, exitOf, pollUntil, run, startServer, stop, tempDir } from "./processes.ts"

const drops: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await cleanUp()
  await Promise.all(drops.splice(0).map((drop) => drop()))
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const State = Schema.Struct({
  gateway_charges: Schema.Int,
  ledger_charges: Schema.Int,
  period_end: Schema.Date,
  status: Schema.String
})
type State = typeof State.Type

const onDatabase = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromise(effect.pipe(Effect.provide(postgres(Redacted.make(url), 1))))

/** The renewal as the gateway and our records hold it. */
const stateOf = (url: string, subscriptionId: string) =>
  onDatabase(url, Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT (SELECT count(*)::int FROM sandbox_payments p WHERE p.idempotency_key LIKE ${`renew:${subscriptionId}:%`}) AS gateway_charges,
               (SELECT count(*)::int FROM ledger_entries l WHERE l.subscription_id = ${subscriptionId} AND l.kind = 'charge') AS ledger_charges,
               s.current_period_end AS period_end, s.status
        FROM subscriptions s WHERE s.id = ${subscriptionId}`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(State))))
  )).then((rows) => rows[0]!)

const waitFor = (url: string, subscriptionId: string, until: (state: State) => boolean, ms: number, what: string) =>
  pollUntil(() => stateOf(url, subscriptionId), until, ms, what)

describe.skipIf(testDatabaseUrl === undefined)("a renewal interrupted by a killed process", () => {
  it("is charged once: after the restart the same attempt finds the charge the gateway took and records it", async () => {
    const db = await createDatabase(testDatabaseUrl!)
    drops.push(db.drop)
    const env = {
      NODE_ENV: "development",
      DATABASE_URL: db.url,
      JWT_SECRET: randomBytes(48).toString("base64url"),
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      BCRYPT_COST: "4",
      SANDBOX_TASK_SPEED: "instant",
      // The lifecycle cron every second, picked up within half a second; a dead pass's claim lapses after 3 s.
      LIFECYCLE_CRON: "* * * * * *",
      WORKFLOW_POLL_MS: "500",
      RENEWAL_CLAIM_SECONDS: "3"
    }
    const migrated = await run("app/cli.ts", ["migrate"], { ...env, DATA_DIR: await tempDir("renewal-migrate") })
    expect(migrated.code, migrated.stderr).toBe(0)
    const doomed = await startServer({ ...env, DATA_DIR: await tempDir("renewal-a"), SANDBOX_PAYMENT_LATENCY_MS: "2000" })

    const browser = new Browser(doomed.url)
    const email = `renewal.${Date.now()}@example.com`
    const registered = await browser.post("/api/auth/register", { email, password: "correct horse battery", accountType: "personal", firstName: "Ada", lastName: "Lovelace" })
    expect(registered.status, registered.text).toBe(201)
    const userId = (registered.body as { user: { id: string } }).user.id
    // A subscription whose period ended a minute ago (as the order flow leaves one, a month later).
    const subscriptionId = SubscriptionId.make(randomUUID())
    const periodEnd = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000)
    await onDatabase(db.url, Effect.gen(function*() {
      const orders = yield* PgOrders.make
      const subscriptions = yield* PgSubscriptions.make
      const order = yield* orders.create({ id: OrderId.make(randomUUID()), userId, planId: "vps-s", kind: "vps", options: {}, totalSteps: 6, expiresAt: new Date(Date.now() + 3_600_000), now: new Date() })
      yield* subscriptions.create({ id: subscriptionId, userId, planId: PlanId.make("vps-s"), kind: "vps", orderId: order.id, currentPeriodEnd: periodEnd, now: new Date() })
    }))

    // The charge is taken (the slow gateway now waits 2 s before answering): the process dies before its record.
    await waitFor(db.url, subscriptionId, (s) => s.gateway_charges === 1, 30_000, "the renewal charged at the gateway")
    doomed.process.kill("SIGKILL")
    await exitOf(doomed, 10_000)
    const atKill = await stateOf(db.url, subscriptionId)
    expect([atKill.gateway_charges, atKill.ledger_charges, atKill.period_end.getTime()]).toEqual([1, 0, periodEnd.getTime()])

    const restarted = await startServer({ ...env, DATA_DIR: await tempDir("renewal-b") })
    const renewed = await waitFor(db.url, subscriptionId, (s) => s.ledger_charges === 1 && s.status === "active" && s.period_end > periodEnd, 60_000,
      "the renewal recorded after the restart")
    expect(renewed.gateway_charges).toBe(1)
    // Later passes change nothing.
    await sleep(3_000)
    const later = await stateOf(db.url, subscriptionId)
    expect([later.gateway_charges, later.ledger_charges, later.period_end.getTime()]).toEqual([1, 1, renewed.period_end.getTime()])
    await stop(restarted)
  }, 240_000)
})
