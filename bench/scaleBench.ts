// `npm run bench -- scale` (or BENCH_ONLY=scale): the back-office and the customers' lists at scale, on a real
// PostgreSQL database of its own (created, migrated, seeded by bench/scaleSeed.ts, dropped at the end). First 10,000
// customers with 25,000 subscriptions and 100,000 audit rows: the lifecycle sweep is timed; then the base grows to
// 100,000 customers, 250,000 subscriptions and 1,000,000 audit rows: the sweep again (its cost per subscription at
// both sizes, and their ratio), the admin search of each kind, the customer's page and the customer's own lists, each
// a p99 over many calls with varied inputs through the same adapters and use cases the server runs, and each query's
// plan (EXPLAIN ANALYZE) checked for the index it reads.
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as PgAuditLog from "../adapters/postgres/PgAuditLog.ts"
import * as PgBillingProfiles from "../adapters/postgres/PgBillingProfiles.ts"
import * as PgCustomerReferences from "../adapters/postgres/PgCustomerReferences.ts"
import * as PgInvoices from "../adapters/postgres/PgInvoices.ts"
import * as PgOrders from "../adapters/postgres/PgOrders.ts"
import * as PgLedger from "../adapters/postgres/PgLedger.ts"
import * as PgSessionRecords from "../adapters/postgres/PgSessionRecords.ts"
import * as PgSubscriptions from "../adapters/postgres/PgSubscriptions.ts"
import * as PgUnitOfWork from "../adapters/postgres/PgUnitOfWork.ts"
import * as PgUsers from "../adapters/postgres/PgUsers.ts"
import * as PgVpsRecords from "../adapters/postgres/PgVpsRecords.ts"
import * as PgGameServerRecords from "../adapters/postgres/PgGameServerRecords.ts"
import { runMigrations } from "../adapters/postgres/Migrations.ts"
import { postgres } from "../app/Database.ts"
import { UserId } from "../domain/account/User.ts"
import { customerPage, searchCustomers } from "../domain/backoffice/customers.ts"
import { securityEvents } from "../domain/backoffice/auditTrail.ts"
import { PlanId, type ServiceKind } from "../domain/billing/Billing.ts"
import { HostedServices, type HostedService } from "../domain/billing/HostedService.ts"
import { listPayments } from "../domain/billing/paymentHistory.ts"
import { listSubscriptionsWithServices } from "../domain/billing/subscriptionList.ts"
import { sweepLifecycle } from "../domain/billing/sweepLifecycle.ts"
import { Notices } from "../domain/notices/CustomerNotice.ts"
import { GameServerRecords } from "../ports/GameServerRecords.ts"
import { VpsRecords } from "../ports/VpsRecords.ts"
import { fixed, judge, ms, type Section, times } from "./report.ts"
import { seed } from "./scaleSeed.ts"
import { type Cleanup, createDatabase, progress } from "./system.ts"

export interface ScaleBenchSettings {
  readonly adminUrl: string
  /** Divides every count (1: the issue's sizes; more: a quick run of the same code). */
  readonly divisor: number
  /** Calls per measured kind (the p99 is over these). */
  readonly samples: number
}

const sizes = (divisor: number) => ({
  big: { customers: 100_000 / divisor, subscriptions: 250_000 / divisor, audit: 1_000_000 / divisor },
  small: { customers: 10_000 / divisor, subscriptions: 25_000 / divisor, audit: 100_000 / divisor }
})

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

/** What a suspension or an end would start: counted (the products' durable workflows are measured by their own benches). */
const started = { suspend: 0, terminate: 0, warned: 0 }

/**
 * The two products as the sweep sees them: their real records (when a suspended service's grace window ends, read from
 * the VPS or game server row as the products do), their suspension and end counted instead of started.
 */
const benchProduct = (kind: ServiceKind): Effect.Effect<HostedService, never, VpsRecords | GameServerRecords> =>
  Effect.gen(function*() {
    const vps = yield* VpsRecords
    const games = yield* GameServerRecords
    const graceUntil = (subscriptionId: string) =>
      kind === "vps"
        ? Effect.map(vps.bySubscription(subscriptionId), Option.flatMap((v) => Option.fromNullishOr(v.graceUntil)))
        : Effect.map(games.bySubscription(subscriptionId), Option.flatMap((g) => Option.fromNullishOr(g.graceUntil)))
    const product: HostedService = {
      kind,
      steps: [],
      prepareOrder: () => Effect.succeed(Option.none()),
      // As the products describe a service in the customer's list: from its own record.
      summary: (subscriptionId) =>
        kind === "vps"
          ? Effect.map(vps.bySubscription(subscriptionId), Option.map((v) => ({ name: v.hostname, address: v.address, state: v.status })))
          : Effect.map(games.bySubscription(subscriptionId), Option.map((g) => ({ name: g.name, address: g.address, state: g.status }))),
      inspect: () => Effect.succeed(Option.none()),
      plan: (planId) => Effect.succeed(Option.some({ id: PlanId.make(planId), name: planId, priceCents: 0 })),
      provision: () => Effect.void,
      suspend: () => Effect.sync(() => void started.suspend++),
      graceUntil,
      terminate: () => Effect.sync(() => void started.terminate++),
      resume: () => Effect.void,
      hold: () => Effect.void,
      unhold: () => Effect.void,
      end: () => Effect.succeed(true)
    }
    return product
  })

const timed = async <A>(run: () => Promise<A>) => {
  const start = performance.now()
  const value = await run()
  return { value, ms: performance.now() - start }
}

export const runScaleBench = async (settings: ScaleBenchSettings, cleanup: Cleanup) => {
  const { big: BIG, small: SMALL } = sizes(settings.divisor)
  const database = await createDatabase(settings.adminUrl, cleanup)
  const sqlLayer = postgres(Redacted.make(database.url), 4)
  const repositories = Layer.mergeAll(
    PgUsers.layer,
    PgSessionRecords.layer,
    PgSubscriptions.layer,
    PgAuditLog.layer,
    PgLedger.layer,
    PgUnitOfWork.layer,
    PgVpsRecords.layer,
    PgGameServerRecords.layer,
    PgCustomerReferences.layer,
    PgBillingProfiles.layer,
    PgInvoices.layer,
    PgOrders.layer
  ).pipe(Layer.provideMerge(sqlLayer))
  const products = Layer.effectDiscard(Effect.gen(function*() {
    const registry = yield* HostedServices
    yield* registry.register(yield* benchProduct("vps"))
    yield* registry.register(yield* benchProduct("game"))
  })).pipe(Layer.provideMerge(HostedServices.layer))
  const notices = Layer.succeed(Notices, Notices.of({ send: () => Effect.sync(() => void started.warned++) }))
  const runtime = ManagedRuntime.make(Layer.mergeAll(products, notices).pipe(Layer.provideMerge(repositories)))
  cleanup.add("close the scale bench's connections", () => runtime.dispose())
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof repositories> | HostedServices | Notices>) => runtime.runPromise(effect)
  const sql = <A extends object>(text: string, params: ReadonlyArray<unknown> = []) =>
    run(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<A>(text, params)))

  await run(runMigrations)
  const now = new Date()
  const seedTimes: Array<{ readonly step: string; readonly seconds: number }> = []
  const grow = async (step: string, range: Parameters<typeof seed>[0]) => {
    progress(`scale: seeding ${step}`)
    const t = await timed(() => run(seed(range)))
    seedTimes.push({ step, seconds: t.ms / 1000 })
    progress(`scale: seeded ${step} in ${fixed(t.ms / 1000)} s`)
  }

  /** The sweep, five times (the median): what it read and what it would start, and its time. */
  const sweep = async (subscriptions: number) => {
    const runs: Array<number> = []
    for (let i = 0; i < 5; i++) {
      started.suspend = 0
      started.terminate = 0
      started.warned = 0
      runs.push((await timed(() => run(sweepLifecycle))).ms)
    }
    const median = percentile(runs, 50)
    return { subscriptions, ms: median, perSubscriptionUs: (median * 1000) / subscriptions, ...started }
  }

  await grow(`${SMALL.customers} customers, ${SMALL.subscriptions} subscriptions, ${SMALL.audit} audit rows`, {
    customersFrom: 1, customersTo: SMALL.customers, subscriptionsFrom: 1, subscriptionsTo: SMALL.subscriptions,
    auditFrom: 1, auditTo: SMALL.audit, customerCount: SMALL.customers, now
  })
  const small = await sweep(SMALL.subscriptions)
  await grow(`up to ${BIG.customers} customers, ${BIG.subscriptions} subscriptions, ${BIG.audit} audit rows`, {
    customersFrom: SMALL.customers + 1, customersTo: BIG.customers, subscriptionsFrom: SMALL.subscriptions + 1,
    subscriptionsTo: BIG.subscriptions, auditFrom: SMALL.audit + 1, auditTo: BIG.audit, customerCount: BIG.customers, now
  })
  const counts = (await sql<{ users: number; subscriptions: number; audit: number }>(
    `SELECT (SELECT count(*)::int FROM users) AS users, (SELECT count(*)::int FROM subscriptions) AS subscriptions,
            (SELECT count(*)::int FROM audit_events) AS audit`))[0]!
  const big = await sweep(BIG.subscriptions)

  // Inputs drawn from the seeded base (a fixed walk over it, so every run asks the same).
  const picks = Array.from({ length: settings.samples }, (_, i) => 1 + ((i * 48_271 + 11) % BIG.customers))
  const users = await sql<{ id: string; email: string; last_name: string; company_name: string | null; siret: string | null }>(
    `SELECT id, email, last_name, company_name, siret FROM users WHERE id = ANY($1::uuid[])`,
    [picks.map((n) => `00000001-0000-4000-8000-${n.toString(16).padStart(12, "0")}`)]
  )
  const pros = users.filter((u) => u.company_name !== null)
  const at = (i: number) => users[i % users.length]!
  const pro = (i: number) => pros[i % pros.length]!
  const sub = (i: number) => 1 + ((i * 69_621 + 5) % BIG.subscriptions)

  /** The admin search, as the route runs it (prefixes of e-mail, names, company, SIRET; a reference's holders). */
  const adminSearch = (q: string) => run(searchCustomers(q))
  const address = (j: number) =>
    j % 5 < 3 ? `10.${(j >> 16) & 255}.${(j >> 8) & 255}.${j & 255}` : `198.51.${(j >> 8) & 255}.${j & 255}:${25565 + (j % 50)}`
  /** The statement the search runs for a reference (an invoice number, a service address): exact, on indexes. */
  const referencePlan = (reference: string): [string, ReadonlyArray<unknown>] => [
    `SELECT user_id FROM (
       SELECT user_id, issued_at AS at FROM invoices WHERE number = $1
       UNION ALL SELECT user_id, created_at AS at FROM vps WHERE address = $2
       UNION ALL SELECT user_id, created_at AS at FROM game_servers WHERE address = $3
     ) held GROUP BY user_id ORDER BY max(at) DESC LIMIT 50`,
    [reference.toUpperCase(), reference, reference.toLowerCase()]
  ]
  const kinds: ReadonlyArray<{ readonly kind: string; readonly call: (i: number) => Promise<unknown>; readonly explain: [string, ReadonlyArray<unknown>] }> = [
    { kind: "e-mail", call: (i) => adminSearch(at(i).email.slice(0, 14)), explain: searchPlan(at(0).email.slice(0, 14)) },
    { kind: "name", call: (i) => adminSearch(at(i).last_name.toLowerCase()), explain: searchPlan(at(0).last_name.toLowerCase()) },
    { kind: "company", call: (i) => adminSearch(pro(i).company_name!.toLowerCase()), explain: searchPlan(pro(0).company_name!.toLowerCase()) },
    { kind: "SIRET", call: (i) => adminSearch(pro(i).siret!.slice(0, 9)), explain: searchPlan(pro(0).siret!.slice(0, 9)) },
    {
      kind: "invoice number",
      call: (i) => adminSearch(`F-${String(sub(i)).padStart(7, "0")}`),
      explain: referencePlan(`F-${String(sub(0)).padStart(7, "0")}`)
    },
    { kind: "service address", call: (i) => adminSearch(address(sub(i))), explain: referencePlan(address(sub(0))) }
  ]

  const measure = async (call: (i: number) => Promise<unknown>) => {
    // The base was just written: one pass over the same inputs first, so no figure pays for reading it from disk.
    for (let i = 0; i < settings.samples; i++) await call(i)
    const times: Array<number> = []
    for (let i = 0; i < settings.samples; i++) times.push((await timed(() => call(i))).ms)
    return { p50: percentile(times, 50), p99: percentile(times, 99), max: Math.max(...times) }
  }
  const plan = async ([text, params]: [string, ReadonlyArray<unknown>]) => {
    const rows = await sql<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${text}`, params)
    const lines = rows.map((r) => r["QUERY PLAN"])
    const indexes = [...new Set(lines.flatMap((l) => [...l.matchAll(/(?:Index(?: Only)? Scan(?: Backward)?|Bitmap Index Scan) (?:using|on) (\w+)/g)].map((m) => m[1]!)))]
    const seqScans = [...new Set(lines.flatMap((l) => [...l.matchAll(/Seq Scan on (\w+)/g)].map((m) => m[1]!)))]
    return { indexes, seqScans }
  }

  progress("scale: the admin search")
  const search: Array<{ kind: string; p50: number; p99: number; max: number; indexes: ReadonlyArray<string>; seqScans: ReadonlyArray<string> }> = []
  for (const k of kinds) search.push({ kind: k.kind, ...(await measure(k.call)), ...(await plan(k.explain)) })

  progress("scale: the customer's page")
  const operator = { id: UserId.make("00000001-0000-4000-8000-000000000001"), role: "admin" as const, address: "127.0.0.1" }
  const page = await measure((i) => run(customerPage(operator, UserId.make(at(i).id))))
  const pagePlans = await plan([`SELECT * FROM audit_events WHERE subject_user_id = $1 ORDER BY id DESC LIMIT 21`, [at(0).id]])

  progress("scale: the customer's own lists")
  const lists = [
    { list: "subscriptions with their services (a page)", call: (i: number) => run(listSubscriptionsWithServices(at(i).id, undefined, 20)), explain: [`SELECT * FROM subscriptions WHERE user_id = $1 ORDER BY created_at, id LIMIT 21`, [at(0).id]] as [string, ReadonlyArray<unknown>] },
    { list: "payments (a page)", call: (i: number) => run(listPayments(at(i).id, undefined, 20)), explain: [`SELECT * FROM ledger_entries WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT 20`, [at(0).id]] as [string, ReadonlyArray<unknown>] },
    { list: "invoices (a page)", call: (i: number) => sql(`SELECT * FROM invoices WHERE user_id = $1 ORDER BY issued_at DESC, id DESC LIMIT 20`, [at(i).id]), explain: [`SELECT * FROM invoices WHERE user_id = $1 ORDER BY issued_at DESC, id DESC LIMIT 20`, [at(0).id]] as [string, ReadonlyArray<unknown>] },
    { list: "security events (a page)", call: (i: number) => run(securityEvents(UserId.make(at(i).id), { limit: 20 })), explain: [`SELECT * FROM audit_events WHERE subject_user_id = $1 AND action = ANY($2) ORDER BY id DESC LIMIT 21`, [at(0).id, ["auth.sign_in", "auth.sign_in_failed"]]] as [string, ReadonlyArray<unknown>] },
    { list: "orders (a page)", call: (i: number) => sql(`SELECT * FROM orders WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT 20`, [at(i).id]), explain: [`SELECT * FROM orders WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT 20`, [at(0).id]] as [string, ReadonlyArray<unknown>] }
  ]
  const listFigures: Array<{ list: string; p50: number; p99: number; max: number; indexes: ReadonlyArray<string>; seqScans: ReadonlyArray<string> }> = []
  for (const l of lists) listFigures.push({ list: l.list, ...(await measure(l.call)), ...(await plan(l.explain)) })

  const ratio = big.perSubscriptionUs / small.perSubscriptionUs
  const sections: Array<Section> = [
    {
      title: `Scale — seeded on PostgreSQL (${counts.users} customers, ${counts.subscriptions} subscriptions, ${counts.audit} audit rows)`,
      lines: seedTimes.map((s) => ({ label: `seed: ${s.step}`, value: `${fixed(s.seconds)} s` }))
    },
    {
      title: "Scale — the lifecycle sweep (median of 5)",
      lines: [
        { label: `sweep, ${SMALL.subscriptions} subscriptions`, value: ms(small.ms) },
        { label: `sweep, ${BIG.subscriptions} subscriptions`, value: ms(big.ms), target: "< 10 s", verdict: judge(big.ms < 10_000, true) },
        { label: "cost per subscription, small → big", value: `${fixed(small.perSubscriptionUs, 2)} → ${fixed(big.perSubscriptionUs, 2)} µs` },
        { label: "ratio (big / small), per subscription", value: times(ratio), target: "≈ 1", verdict: judge(ratio < 1.5, true) }
      ],
      notes: [
        `at ${BIG.subscriptions}: ${big.suspend} lapsed to suspend, ${big.terminate} to end, ${big.warned} final warnings (1 in 100 lapsed, 1 in 50 suspended)`,
        "the products' suspensions and ends are counted, not started (their durable workflows are the vps and game benches' part)"
      ]
    },
    {
      title: `Scale — admin search (p99 of ${settings.samples} varied queries)`,
      lines: search.map((s) => ({ label: `by ${s.kind}`, value: `${ms(s.p99)} (p50 ${ms(s.p50)})`, target: "< 50 ms", verdict: judge(s.p99 < 50, true) })),
      notes: search.map((s) => `${s.kind}: index ${s.indexes.join(", ") || "none"}${s.seqScans.length > 0 ? `; seq scan on ${s.seqScans.join(", ")}` : ""}`)
    },
    {
      title: `Scale — the customer's page (p99 of ${settings.samples})`,
      lines: [{ label: "customer page (account, sessions, subscriptions, trail)", value: `${ms(page.p99)} (p50 ${ms(page.p50)})`, target: "< 100 ms", verdict: judge(page.p99 < 100, true) }],
      notes: [`its trail: index ${pagePlans.indexes.join(", ")}`]
    },
    {
      title: `Scale — the customer's own lists (p99 of ${settings.samples})`,
      lines: listFigures.map((l) => ({ label: l.list, value: `${ms(l.p99)} (p50 ${ms(l.p50)})`, target: "< 20 ms", verdict: judge(l.p99 < 20, true) })),
      notes: listFigures.map((l) => `${l.list}: index ${l.indexes.join(", ") || "none"}${l.seqScans.length > 0 ? `; seq scan on ${l.seqScans.join(", ")}` : ""}`)
    }
  ]
  return { json: { counts, seedTimes, sweep: { small, big, ratio }, search, page, lists: listFigures }, sections }
}

/** The admin search's own statement, for its plan. */
const searchPlan = (q: string): [string, ReadonlyArray<unknown>] => [
  `SELECT * FROM users WHERE id IN (
     (SELECT id FROM users WHERE lower(email) LIKE $1 LIMIT 50)
     UNION ALL (SELECT id FROM users WHERE lower(last_name) LIKE $1 LIMIT 50)
     UNION ALL (SELECT id FROM users WHERE lower(first_name) LIKE $1 LIMIT 50)
     UNION ALL (SELECT id FROM users WHERE lower(company_name) LIKE $1 LIMIT 50)
     UNION ALL (SELECT id FROM users WHERE siret LIKE $1 LIMIT 50))
   ORDER BY lower(email) LIMIT 50`,
  [`${q}%`]
]
