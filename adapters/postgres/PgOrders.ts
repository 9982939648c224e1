// Orders in Postgres: every state change is one conditional UPDATE, so a finished order stays finished.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Order, ServiceKind } from "../../domain/billing/Billing.ts"
import { Orders } from "../../ports/Orders.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

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
  now: Schema.Date
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

/** Every column but the one-time secret, which leaves the table only through takeOneTimeSecret. */
const columns = "id, user_id, plan_id, kind, options, status, step, total_steps, step_name, failure_reason, " +
  "subscription_id, service_id, checkout_session, checkout_url, expires_at, express_start_requested_at, created_at, updated_at"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const unfinishedStatuses = ["awaiting_payment", "provisioning"]
  const insert = SqlSchema.findOne({
    Request: NewOrder,
    Result: OrderRow,
    // jsonb goes in as text cast by the statement: the driver binds strings untyped.
    execute: (o) =>
      sql`INSERT INTO orders (id, user_id, plan_id, kind, options, status, step, total_steps, step_name,
                              expires_at, express_start_requested_at, created_at, updated_at)
          VALUES (${o.id}, ${o.userId}, ${o.planId}, ${o.kind}, ${JSON.stringify(o.options)}::jsonb,
                  'awaiting_payment', 0, ${o.totalSteps}, 'Payment', ${o.expiresAt}, ${o.expressStartRequestedAt ?? null},
                  ${o.now}, ${o.now})
          RETURNING ${sql.unsafe(columns)}`
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
    get: (id) => byId(id).pipe(stored),
    checkoutOpened: (id, checkout, now) =>
      sql`UPDATE orders SET checkout_session = ${checkout.session}, checkout_url = ${checkout.url}, updated_at = ${now}
          WHERE id = ${id} AND status = 'awaiting_payment'`.pipe(Effect.asVoid, stored),
    progress: (id, update) =>
      sql`UPDATE orders SET status = ${update.status}, step = ${update.step}, step_name = ${update.stepName},
            subscription_id = coalesce(${update.subscriptionId ?? null}::uuid, subscription_id),
            updated_at = ${update.now}
          WHERE id = ${id} AND status = 'provisioning'`.pipe(Effect.asVoid, stored),
    startProvisioning: (id, now) =>
      sql`UPDATE orders SET status = 'provisioning', step = 0, step_name = 'Queued', updated_at = ${now}
          WHERE id = ${id} AND status = 'awaiting_payment' RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), stored),
    expire: (id, now) =>
      sql`UPDATE orders SET status = 'expired', step_name = 'Expired', updated_at = ${now}
          WHERE id = ${id} AND status = 'awaiting_payment' RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), stored),
    dueForExpiry: (now) => due(now).pipe(stored),
    complete: (id, serviceId, oneTimeSecret, now) =>
      sql`UPDATE orders SET status = 'completed', service_id = ${serviceId}, one_time_secret = ${oneTimeSecret},
            updated_at = ${now}
          WHERE id = ${id} AND status = ANY(${unfinishedStatuses})`.pipe(Effect.asVoid, stored),
    fail: (id, reason, now) =>
      sql`UPDATE orders SET status = 'failed', failure_reason = ${reason}, updated_at = ${now}
          WHERE id = ${id} AND status = ANY(${unfinishedStatuses})`.pipe(Effect.asVoid, stored),
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
