// Orders in Postgres: every state change is one conditional UPDATE, so a finished order stays finished.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Order, OrderStatus, type PendingCleanup, ServiceKind } from "../../domain/billing/Billing.ts"
import { Orders } from "../../ports/Orders.ts"

const OrderRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  plan_id: Schema.String,
  kind: ServiceKind,
  options: Schema.Record(Schema.String, Schema.Unknown),
  status: OrderStatus,
  step: Schema.Int,
  total_steps: Schema.Int,
  step_name: Schema.String,
  failure_reason: Schema.NullOr(Schema.String),
  subscription_id: Schema.NullOr(Schema.String),
  service_id: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date
})
const OrderRows = Schema.Array(OrderRow)
const SecretRows = Schema.Array(Schema.Struct({ one_time_secret: Schema.String }))
const CleanupRows = Schema.Array(Schema.Struct({
  id: Schema.String,
  kind: ServiceKind,
  cleanup_pending_since: Schema.Date,
  cleanup_attempts: Schema.Int,
  cleanup_last_error: Schema.NullOr(Schema.String)
}))

const toOrder = (r: typeof OrderRow.Type): Order =>
  new Order({
    id: r.id,
    userId: r.user_id,
    planId: r.plan_id,
    kind: r.kind,
    options: r.options,
    status: r.status,
    step: r.step,
    totalSteps: r.total_steps,
    stepName: r.step_name,
    failureReason: r.failure_reason,
    subscriptionId: r.subscription_id,
    serviceId: r.service_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at
  })

/** Every column but the one-time secret, which leaves the table only through takeOneTimeSecret. */
const columns = "id, user_id, plan_id, kind, options, status, step, total_steps, step_name, failure_reason, " +
  "subscription_id, service_id, created_at, updated_at"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const decodeOrders = Schema.decodeUnknownEffect(OrderRows)
  const unfinished = ["pending", "provisioning"]
  return Orders.of({
    create: (order) =>
      // jsonb goes in as text cast by the statement: the driver binds strings untyped.
      sql`INSERT INTO orders (id, user_id, plan_id, kind, options, status, step, total_steps, step_name,
                              created_at, updated_at)
          VALUES (${order.id}, ${order.userId}, ${order.planId}, ${order.kind}, ${JSON.stringify(order.options)}::jsonb,
                  'pending', 0, ${order.totalSteps}, 'Payment', ${order.now}, ${order.now})
          RETURNING ${sql.unsafe(columns)}`.pipe(
        Effect.flatMap(decodeOrders),
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.die("INSERT returned no row") : Effect.succeed(toOrder(rows[0]))),
        Effect.orDie
      ),
    get: (id) =>
      sql`SELECT ${sql.unsafe(columns)} FROM orders WHERE id = ${id}`.pipe(
        Effect.flatMap(decodeOrders),
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toOrder)),
        Effect.orDie
      ),
    progress: (id, update) =>
      sql`UPDATE orders SET status = ${update.status}, step = ${update.step}, step_name = ${update.stepName},
            subscription_id = coalesce(${update.subscriptionId ?? null}::uuid, subscription_id),
            updated_at = ${update.now}
          WHERE id = ${id} AND status = ANY(${unfinished})`.pipe(Effect.asVoid, Effect.orDie),
    startProvisioning: (id, now) =>
      sql`UPDATE orders SET status = 'provisioning', step = 0, step_name = 'Queued', updated_at = ${now}
          WHERE id = ${id} AND status = 'pending' RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie),
    complete: (id, serviceId, oneTimeSecret, now) =>
      sql`UPDATE orders SET status = 'completed', service_id = ${serviceId}, one_time_secret = ${oneTimeSecret},
            updated_at = ${now}
          WHERE id = ${id} AND status = ANY(${unfinished})`.pipe(Effect.asVoid, Effect.orDie),
    fail: (id, reason, now) =>
      sql`UPDATE orders SET status = 'failed', failure_reason = ${reason}, updated_at = ${now}
          WHERE id = ${id} AND status = ANY(${unfinished})`.pipe(Effect.asVoid, Effect.orDie),
    takeOneTimeSecret: (id) =>
      // The row lock makes concurrent readers queue; each rechecks `IS NOT NULL` after the winner commits.
      sql`UPDATE orders SET one_time_secret = NULL
          FROM (SELECT id, one_time_secret FROM orders
                WHERE id = ${id} AND one_time_secret IS NOT NULL FOR UPDATE) AS old
          WHERE orders.id = old.id
          RETURNING old.one_time_secret`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(SecretRows)),
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => r.one_time_secret)),
        Effect.orDie
      ),
    unfinished: sql`SELECT ${sql.unsafe(columns)} FROM orders WHERE status = ANY(${unfinished})
                    ORDER BY created_at, id`.pipe(
      Effect.flatMap(decodeOrders),
      Effect.map((rows) => rows.map(toOrder)),
      Effect.orDie
    ),
    cleanupPending: (id, now) =>
      sql`UPDATE orders SET cleanup_pending_since = coalesce(cleanup_pending_since, ${now}) WHERE id = ${id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    cleanupFailed: (id, error) =>
      sql`UPDATE orders SET cleanup_attempts = cleanup_attempts + 1, cleanup_last_error = ${error}
          WHERE id = ${id} AND cleanup_pending_since IS NOT NULL`.pipe(Effect.asVoid, Effect.orDie),
    cleanupDone: (id) =>
      sql`UPDATE orders SET cleanup_pending_since = NULL, cleanup_attempts = 0, cleanup_last_error = NULL
          WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
    pendingCleanups: sql`SELECT id, kind, cleanup_pending_since, cleanup_attempts, cleanup_last_error FROM orders
                         WHERE cleanup_pending_since IS NOT NULL ORDER BY cleanup_pending_since, id`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(CleanupRows)),
      Effect.map((rows) =>
        rows.map((r): PendingCleanup => ({
          orderId: r.id,
          kind: r.kind,
          since: r.cleanup_pending_since,
          attempts: r.cleanup_attempts,
          lastError: r.cleanup_last_error
        }))
      ),
      Effect.orDie
    )
  })
})

export const layer = Layer.effect(Orders, make)
