// A server process killed (SIGKILL) between a renewal's charge and its record: Stripe (a sandbox Stripe shared by the
// instances, answering the charge 5 s after taking it) has taken the money, our ledger knows nothing.
// Restarted on the same PostgreSQL, the renewal pass makes the same attempt with the same idempotency key once the
// dead pass's claim lapses: one charge at the gateway, one in the ledger, the period extended once.
import { randomBytes, randomUUID } from "node:crypto"
import { Effect, Exit, Redacted, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { afterEach, describe, expect, it } from "vitest"
import * as PgOrders from "../../adapters/postgres/PgOrders.ts"
import * as PgPaymentCustomers from "../../adapters/postgres/PgPaymentCustomers.ts"
import { type SandboxStripe, sandboxStripe } from "../../adapters/stripe/sandbox/SandboxStripe.ts"
import { savedCard, sdk } from "../adapters/stripe/support.ts"
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

let stripe: SandboxStripe

/** The renewal's PaymentIntents that succeeded at Stripe. */
const stripeCharges = (subscriptionId: string) =>
  Effect.runPromise(stripe.control.events).then((events) =>
    events.filter((e) =>
      e.type === "payment_intent.succeeded" &&
      ((e.data.object as { readonly metadata?: Record<string, string> }).metadata?.["idempotency_key"] ?? "").startsWith(`renew:${subscriptionId}:`)
    ).length)

/** The renewal as Stripe and our records hold it. */
const stateOf = (url: string, subscriptionId: string) =>
  onDatabase(url, Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 0 AS gateway_charges,
               (SELECT count(*)::int FROM ledger_entries l WHERE l.subscription_id = ${subscriptionId} AND l.kind = 'charge') AS ledger_charges,
               s.current_period_end AS period_end, s.status
        FROM subscriptions s WHERE s.id = ${subscriptionId}`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(State))))
  )).then(async (rows) => ({ ...rows[0]!, gateway_charges: await stripeCharges(subscriptionId) }))

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
    // One sandbox Stripe for both processes (each would otherwise run its own, in memory).
    const scope = Effect.runSync(Scope.make())
    drops.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    stripe = await Effect.runPromise(Scope.provide(scope)(sandboxStripe()))
    Object.assign(env, { STRIPE_API_URL: stripe.baseUrl })
    const migrated = await run("app/cli.ts", ["migrate"], { ...env, DATA_DIR: await tempDir("renewal-migrate") })
    expect(migrated.code, migrated.stderr).toBe(0)
    const stored = await run("app/cli.ts", ["secrets", "put", "stripe:secret-key", "--from-env", "KEY"], {
      ...env,
      DATA_DIR: await tempDir("renewal-secret"),
      KEY: stripe.secretKey
    })
    expect(stored.code, stored.stderr).toBe(0)
    // The charge is done at once and answered 5 s later: time to kill the process between the two.
    await Effect.runPromise(stripe.control.slowNextApiCalls({ times: 1, ms: 5_000, path: /^\/v1\/payment_intents$/ }))
    const doomed = await startServer({ ...env, DATA_DIR: await tempDir("renewal-a") })

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
      // Their card, saved at Stripe by a first payment, ready for charges while they are away.
      const { customer } = yield* savedCard(sdk(stripe), "4000003800000446").pipe(Effect.orDie)
      yield* (yield* PgPaymentCustomers.make).remember(userId, customer.id, new Date())
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
