// Orders in Postgres: every move is one compare-and-set UPDATE on the status it leaves (the domain decides the moves).
import { Cause, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Order, ServiceKind } from "../../domain/billing/Billing.ts"
import { type OrderRecorded, Orders } from "../../ports/Orders.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const FailedCount = Schema.Array(Schema.Struct({ n: Schema.Int }))
const OrderRow = snakeColumns(Order)
const NewOrder = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  planId: Schema.String,
  kind: ServiceKind,
  options: Schema.Record(Schema.String, Schema.Unknown),
  totalSteps: Schema.Int,
  expiresAt: Schema.Date,
  expressStartRequestedAt: Schema.optionalKey(Schema.NullOr(Schema.Date)),
  now: Schema.Date,
  retryOf: Schema.optionalKey(Schema.String)
})
const PendingCleanupRow = snakeColumns(
  Schema.Struct({
    orderId: Schema.String,
    kind: ServiceKind,
    since: Schema.Date,
    attempts: Schema.Int,
    lastError: Schema.NullOr(Schema.String)
  }),
  { orderId: "id", since: "cleanup_pending_since", attempts: "cleanup_attempts", lastError: "cleanup_last_error" }
)

/** The columns a move records (those it leaves alone absent). */
const recordedColumns = (recorded: OrderRecorded) =>
  Object.fromEntries(Object.entries({
    step: recorded.step,
    step_name: recorded.stepName,
    subscription_id: recorded.subscriptionId,
    service_id: recorded.serviceId,
    one_time_secret: recorded.oneTimeSecret,
    failure_reason: recorded.failureReason,
    checkout_session: recorded.checkoutSession,
    checkout_url: recorded.checkoutUrl
  }).filter(([, value]) => value !== undefined))

/**
 * Every column but the one-time secret, which leaves the table only through takeOneTimeSecret; and the order's retry,
 * if it has one (one row of the unique index orders_retry_of, migration 21).
 */
const columns = "id, user_id, plan_id, kind, options, status, step, total_steps, step_name, failure_reason, " +
  "subscription_id, service_id, checkout_session, checkout_url, expires_at, express_start_requested_at, retry_of, " +
  "(SELECT r.id FROM orders r WHERE r.retry_of = orders.id) AS retried_as, created_at, updated_at"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const unfinishedStatuses = ["awaiting_payment", "provisioning"]
  const insert = SqlSchema.findOne({
    Request: NewOrder,
    Result: OrderRow,
    // jsonb goes in as text cast by the statement: the driver binds strings untyped.
    execute: (o) =>
      sql`INSERT INTO orders (id, user_id, plan_id, kind, options, status, step, total_steps, step_name,
                              expires_at, express_start_requested_at, retry_of, created_at, updated_at)
          VALUES (${o.id}, ${o.userId}, ${o.planId}, ${o.kind}, ${JSON.stringify(o.options)}::jsonb,
                  'awaiting_payment', 0, ${o.totalSteps}, 'Payment', ${o.expiresAt}, ${o.expressStartRequestedAt ?? null},
                  ${o.retryOf ?? null}, ${o.now}, ${o.now})
          ON CONFLICT (retry_of) WHERE retry_of IS NOT NULL DO NOTHING
          RETURNING ${sql.unsafe(columns)}`
  })
  // A concurrent retry of the same order waits for the first one's commit, then inserts nothing: this finds that one.
  const retryOf = SqlSchema.findOne({
    Request: Schema.String,
    Result: OrderRow,
    execute: (id) => sql`SELECT ${sql.unsafe(columns)} FROM orders WHERE retry_of = ${id}`
  })
  const ofCustomer = SqlSchema.findAll({
    Request: Schema.Struct({ userId: Schema.String, after: Schema.NullOr(Schema.Struct({ at: Schema.Date, id: Schema.String })), limit: Schema.Int }),
    Result: OrderRow,
    // One range of orders_user_created (migration 20), whatever the page's depth.
    execute: ({ after, limit, userId }) =>
      sql`SELECT ${sql.unsafe(columns)} FROM orders
          WHERE user_id = ${userId}${after === null ? sql`` : sql` AND (created_at, id) < (${after.at}, ${after.id})`}
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`
  })
  const byId = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: OrderRow,
    execute: (id) => sql`SELECT ${sql.unsafe(columns)} FROM orders WHERE id = ${id}`
  })
  const unfinished = SqlSchema.findAll({
    Request: Schema.Void,
    Result: OrderRow,
    execute: () =>
      sql`SELECT ${sql.unsafe(columns)} FROM orders WHERE status = ANY(${unfinishedStatuses}) ORDER BY created_at, id`
  })
  const failed = SqlSchema.findAll({
    Request: Schema.Int,
    Result: OrderRow,
    execute: (limit) =>
      sql`SELECT ${sql.unsafe(columns)} FROM orders WHERE status = 'failed' ORDER BY updated_at DESC, id DESC LIMIT ${limit}`
  })
  const due = SqlSchema.findAll({
    Request: Schema.Date,
    Result: OrderRow,
    execute: (now) =>
      sql`SELECT ${sql.unsafe(columns)} FROM orders
          WHERE status = 'awaiting_payment' AND expires_at <= ${now} ORDER BY expires_at, id`
  })
  const takeSecret = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ one_time_secret: Schema.String }),
    // The row lock makes concurrent readers queue; each rechecks `IS NOT NULL` after the winner commits.
    execute: (id) =>
      sql`UPDATE orders SET one_time_secret = NULL
          FROM (SELECT id, one_time_secret FROM orders
                WHERE id = ${id} AND one_time_secret IS NOT NULL FOR UPDATE) AS old
          WHERE orders.id = old.id
          RETURNING old.one_time_secret`
  })
  const pendingCleanups = SqlSchema.findAll({
    Request: Schema.Void,
    Result: PendingCleanupRow,
    execute: () =>
      sql`SELECT id, kind, cleanup_pending_since, cleanup_attempts, cleanup_last_error FROM orders
          WHERE cleanup_pending_since IS NOT NULL ORDER BY cleanup_pending_since, id`
  })

  return Orders.of({
    create: (order) => insert(order).pipe(stored),
    createRetry: (order) =>
      insert(order).pipe(
        Effect.map((created) => ({ created: true, order: created })),
        Effect.catchIf(Cause.isNoSuchElementError, () => Effect.map(retryOf(order.retryOf), (found) => ({ created: false, order: found }))),
        stored
      ),
    get: (id) => byId(id).pipe(stored),
    ofCustomer: (userId, after, limit) => ofCustomer({ userId, after, limit }).pipe(stored),
    transition: (id, move) =>
      sql`UPDATE orders SET ${sql.update({ status: move.to, ...recordedColumns(move.recorded), updated_at: move.now })}
          WHERE id = ${id} AND status = ${move.from} RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), stored),
    dueForExpiry: (now) => due(now).pipe(stored),
    failed: (limit) => failed(limit).pipe(stored),
    failedSince: (since) =>
      // One range of orders_failed_at (migration 20).
      sql`SELECT count(*)::int AS n FROM orders WHERE status = 'failed' AND updated_at >= ${since}`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(FailedCount)),
        Effect.map((rows) => rows[0]?.n ?? 0),
        stored
      ),
    takeOneTimeSecret: (id) =>
      takeSecret(id).pipe(Effect.map((row) => row.pipe(Option.map((r) => r.one_time_secret))), stored),
    unfinished: unfinished(undefined).pipe(stored),
    cleanupPending: (id, now) =>
      sql`UPDATE orders SET cleanup_pending_since = coalesce(cleanup_pending_since, ${now}) WHERE id = ${id}`.pipe(
        Effect.asVoid,
        stored
      ),
    cleanupFailed: (id, error) =>
      sql`UPDATE orders SET cleanup_attempts = cleanup_attempts + 1, cleanup_last_error = ${error}
          WHERE id = ${id} AND cleanup_pending_since IS NOT NULL`.pipe(Effect.asVoid, stored),
    cleanupDone: (id) =>
      sql`UPDATE orders SET cleanup_pending_since = NULL, cleanup_attempts = 0, cleanup_last_error = NULL
          WHERE id = ${id}`.pipe(Effect.asVoid, stored),
    pendingCleanups: pendingCleanups(undefined).pipe(stored)
  })
})

export const layer = Layer.effect(Orders, make)
