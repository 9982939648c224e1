// Subscriptions in Postgres: renewals and status moves are conditional UPDATEs, so concurrent ones apply once.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { ServiceKind, Subscription, SubscriptionStatus } from "../../domain/billing/Billing.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"

const SubscriptionRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  plan_id: Schema.String,
  kind: ServiceKind,
  order_id: Schema.String,
  status: SubscriptionStatus,
  current_period_end: Schema.Date,
  cancel_at_period_end: Schema.Boolean,
  service_id: Schema.NullOr(Schema.String),
  created_at: Schema.Date
})
const SubscriptionRows = Schema.Array(SubscriptionRow)

const toSubscription = (r: typeof SubscriptionRow.Type): Subscription =>
  new Subscription({
    id: r.id,
    userId: r.user_id,
    planId: r.plan_id,
    kind: r.kind,
    orderId: r.order_id,
    status: r.status,
    currentPeriodEnd: r.current_period_end,
    cancelAtPeriodEnd: r.cancel_at_period_end,
    serviceId: r.service_id,
    createdAt: r.created_at
  })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const many = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(SubscriptionRows)),
      Effect.map((rows) => rows.map(toSubscription)),
      Effect.orDie
    )
  /** Whether the conditional statement (with `RETURNING id`) changed a row. */
  const changed = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie)

  /**
   * The stored period end is the one the caller read: compared at the precision the caller holds it (a JavaScript
   * Date: milliseconds), since timestamptz keeps microseconds a row written by other means may carry.
   */
  const samePeriodEnd = (expected: Date) => sql`date_trunc('milliseconds', current_period_end) = ${expected}`

  return Subscriptions.of({
    create: (s) =>
      many(sql`INSERT INTO subscriptions ${
        sql.insert({
          id: s.id,
          user_id: s.userId,
          plan_id: s.planId,
          kind: s.kind,
          order_id: s.orderId,
          status: "active",
          current_period_end: s.currentPeriodEnd,
          cancel_at_period_end: false,
          created_at: s.now
        })
      } RETURNING *`).pipe(
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.die("INSERT returned no row") : Effect.succeed(rows[0]))
      ),
    get: (id) =>
      many(sql`SELECT * FROM subscriptions WHERE id = ${id}`).pipe(Effect.map((rows) => Option.fromNullishOr(rows[0]))),
    forUser: (userId) => many(sql`SELECT * FROM subscriptions WHERE user_id = ${userId} ORDER BY created_at, id`),
    attachService: (id, serviceId) =>
      sql`UPDATE subscriptions SET service_id = ${serviceId} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
    extend: (id, expected, next) =>
      changed(sql`UPDATE subscriptions SET current_period_end = ${next}, status = 'active'
                  WHERE id = ${id} AND ${samePeriodEnd(expected)} AND status IN ('active', 'suspended')
                  RETURNING id`),
    setStatus: (id, status, from) =>
      changed(sql`UPDATE subscriptions SET status = ${status}
                  WHERE id = ${id} AND status = ANY(${[...from]}::text[]) RETURNING id`),
    suspendLapsed: (id, periodEnd) =>
      changed(sql`UPDATE subscriptions SET status = 'suspended'
                  WHERE id = ${id} AND status = 'active' AND ${samePeriodEnd(periodEnd)} RETURNING id`),
    setCancelAtPeriodEnd: (id, cancel) =>
      sql`UPDATE subscriptions SET cancel_at_period_end = ${cancel} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
    due: (now) =>
      many(sql`SELECT * FROM subscriptions WHERE status = 'active' AND current_period_end <= ${now}
               ORDER BY current_period_end, id`),
    suspended: many(sql`SELECT * FROM subscriptions WHERE status = 'suspended' ORDER BY current_period_end, id`)
  })
})

export const layer = Layer.effect(Subscriptions, make)
