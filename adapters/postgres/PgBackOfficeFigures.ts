// The dashboard's figures from our records: seven aggregate statements run side by side, each on an index (migration
// 19 adds the ones they lacked), none reading a row per customer into the process.
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { BackOfficeFigures } from "../../ports/BackOfficeFigures.ts"
import { stored } from "./failures.ts"

/** Sums come back as text (bigint): exact, then read as a number (cents stay far below 2^53). */
const Sum = Schema.NumberFromString.check(Schema.isInt())

const Mrr = Schema.Struct({ active: Schema.Int, excl: Sum, invoiced: Schema.Int, incl: Sum })
const Service = Schema.Struct({ kind: Schema.String, planId: Schema.String, planName: Schema.NullOr(Schema.String), active: Schema.Int, suspended: Schema.Int })
const Orders = Schema.Struct({ placed: Schema.Int, failed: Schema.Int })
const Payments = Schema.Struct({ retrying: Schema.Int, awaitingAuthentication: Schema.Int, amountCents: Sum })
const Refunds = Schema.Struct({ requests: Schema.Int, requestedCents: Sum, orders: Schema.Int, oldestSince: Schema.NullOr(Schema.Date) })
const Held = Schema.Struct({ panel: Schema.String, held: Schema.Int })
const Committed = Schema.Struct({ cluster: Schema.String, node: Schema.String, vcpus: Schema.Int, memoryMiB: Schema.Int, diskGiB: Schema.Int })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const one = <S extends Schema.Top>(Result: S) =>
  <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    SqlSchema.findOne({ Request: Schema.Void, Result, execute: () => statement })(undefined)
  const all = <S extends Schema.Top>(Result: S) =>
  <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    SqlSchema.findAll({ Request: Schema.Void, Result, execute: () => statement })(undefined)
  return BackOfficeFigures.of({
    recorded: (day) =>
      Effect.all({
        mrr: one(Mrr)(sql`SELECT count(*)::int AS active, coalesce(sum(p.price_cents), 0)::text AS excl,
            count(latest.total)::int AS invoiced, coalesce(sum(latest.total), 0)::text AS incl
          FROM subscriptions s JOIN plans p ON p.id = s.plan_id
          LEFT JOIN LATERAL (
            -- The first payment's invoice names the order (the subscription comes with it), renewals the subscription.
            SELECT both_ways.total FROM (
              (SELECT i.total_including_vat_cents AS total, i.issued_at, i.id FROM invoices i
                WHERE i.subscription_id = s.id AND i.kind = 'invoice' ORDER BY i.issued_at DESC, i.id DESC LIMIT 1)
              UNION ALL
              (SELECT i.total_including_vat_cents AS total, i.issued_at, i.id FROM invoices i
                WHERE i.order_id = s.order_id AND i.kind = 'invoice' ORDER BY i.issued_at DESC, i.id DESC LIMIT 1)
            ) both_ways ORDER BY both_ways.issued_at DESC, both_ways.id DESC LIMIT 1
          ) latest ON true
          WHERE s.status = 'active'`),
        services: all(Service)(sql`SELECT s.kind, s.plan_id AS "planId", p.name AS "planName",
            count(*) FILTER (WHERE s.status = 'active')::int AS active, count(*) FILTER (WHERE s.status = 'suspended')::int AS suspended
          FROM subscriptions s LEFT JOIN plans p ON p.id = s.plan_id
          WHERE s.status IN ('active', 'suspended')
          GROUP BY s.kind, s.plan_id, p.name ORDER BY s.kind, s.plan_id COLLATE "C"`),
        orders: one(Orders)(sql`SELECT count(*)::int AS placed, count(*) FILTER (WHERE status = 'failed')::int AS failed
          FROM orders WHERE created_at >= ${day.start} AND created_at < ${day.end}`),
        failedPayments: one(Payments)(sql`SELECT count(*) FILTER (WHERE status = 'retrying')::int AS retrying,
            count(*) FILTER (WHERE status = 'awaiting_authentication')::int AS "awaitingAuthentication",
            coalesce(sum(amount_cents), 0)::text AS "amountCents"
          FROM renewals WHERE status IN ('retrying', 'awaiting_authentication')`),
        openRefunds: one(Refunds)(sql`SELECT r.requests, r.cents AS "requestedCents", o.orders, least(r.oldest, o.oldest) AS "oldestSince"
          FROM (SELECT count(*)::int AS requests, coalesce(sum(amount_cents), 0)::text AS cents, min(requested_at) AS oldest
                FROM refund_requests WHERE refund_entry_id IS NULL) r,
               (SELECT count(*)::int AS orders, min(cleanup_pending_since) AS oldest FROM orders WHERE cleanup_pending_since IS NOT NULL) o`),
        allocationsHeld: all(Held)(sql`SELECT panel, count(*)::int AS held FROM game_allocation_claims GROUP BY panel ORDER BY panel COLLATE "C"`),
        committed: all(Committed)(sql`SELECT v.cluster, v.node, coalesce(sum((p.spec->>'vcpu')::int), 0)::int AS vcpus,
            coalesce(sum((p.spec->>'ramMiB')::int), 0)::int AS "memoryMiB", coalesce(sum((p.spec->>'diskGiB')::int), 0)::int AS "diskGiB"
          FROM vps v JOIN plans p ON p.id = v.plan_id
          WHERE v.status <> 'destroyed'
          GROUP BY v.cluster, v.node ORDER BY v.cluster COLLATE "C", v.node COLLATE "C"`)
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ mrr, ...rest }) => ({
          mrr: { activeSubscriptions: mrr.active, excludingVatCents: mrr.excl, invoicedSubscriptions: mrr.invoiced, lastInvoicedIncludingVatCents: mrr.incl },
          ...rest
        })),
        stored
      )
  })
})

export const layer = Layer.effect(BackOfficeFigures, make)
