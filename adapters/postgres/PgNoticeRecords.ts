// The customer notices in Postgres: recorded with INSERT … ON CONFLICT DO NOTHING (one winner per key), retried
// through a claim that leases each row (FOR UPDATE SKIP LOCKED: two passes never take the same one).
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { NoticeRecords } from "../../ports/NoticeRecords.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const PendingRow = snakeColumns(Schema.Struct({
  key: Schema.String,
  userId: Schema.String,
  payload: Schema.String,
  attempts: Schema.Int
}))

const Record = Schema.Struct({
  key: Schema.String,
  userId: Schema.String,
  tag: Schema.String,
  payload: Schema.String,
  createdAt: Schema.Date,
  leaseUntil: Schema.Date
})
const UnsentRow = snakeColumns(Schema.Struct({
  key: Schema.String,
  tag: Schema.String,
  createdAt: Schema.Date,
  attempts: Schema.Int,
  lastError: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Schema.Date)
}))

const EntryFields = {
  key: Schema.String,
  userId: Schema.String,
  tag: Schema.String,
  createdAt: Schema.Date,
  sentAt: Schema.NullOr(Schema.Date),
  attempts: Schema.Int,
  lastError: Schema.NullOr(Schema.String)
}
const EntryRow = snakeColumns(Schema.Struct(EntryFields))
const EntryWithPayloadRow = snakeColumns(Schema.Struct({ ...EntryFields, payload: Schema.String }))

const Claim = Schema.Struct({ now: Schema.Date, leaseUntil: Schema.Date, limit: Schema.Int })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const record = SqlSchema.findOneOption({
    Request: Record,
    Result: PendingRow,
    execute: (r) =>
      sql`INSERT INTO customer_notices (key, user_id, tag, payload, created_at, attempts, next_attempt_at)
          VALUES (${r.key}, ${r.userId}, ${r.tag}, ${r.payload}::jsonb, ${r.createdAt}, 1, ${r.leaseUntil})
          ON CONFLICT (key) DO NOTHING
          RETURNING key, user_id, payload::text AS payload, attempts`
  })
  const claim = SqlSchema.findAll({
    Request: Claim,
    Result: PendingRow,
    execute: ({ leaseUntil, limit, now }) =>
      sql`UPDATE customer_notices n SET next_attempt_at = ${leaseUntil}, attempts = n.attempts + 1
          FROM (SELECT key FROM customer_notices
                WHERE sent_at IS NULL AND next_attempt_at IS NOT NULL AND next_attempt_at <= ${now}
                ORDER BY next_attempt_at LIMIT ${limit}
                FOR UPDATE SKIP LOCKED) due
          WHERE n.key = due.key
          RETURNING n.key, n.user_id, n.payload::text AS payload, n.attempts`
  })
  const unsent = SqlSchema.findAll({
    Request: Schema.Int,
    Result: UnsentRow,
    execute: (limit) =>
      sql`SELECT key, tag, created_at, attempts, last_error, next_attempt_at FROM customer_notices
          WHERE sent_at IS NULL ORDER BY created_at DESC, key LIMIT ${limit}`
  })
  const find = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: EntryWithPayloadRow,
    execute: (key) =>
      sql`SELECT key, user_id, tag, created_at, sent_at, attempts, last_error, payload::text AS payload
          FROM customer_notices WHERE key = ${key}`
  })
  const ofUser = SqlSchema.findAll({
    Request: Schema.Struct({ userId: Schema.String, limit: Schema.Int }),
    Result: EntryRow,
    execute: ({ limit, userId }) =>
      sql`SELECT key, user_id, tag, created_at, sent_at, attempts, last_error FROM customer_notices
          WHERE user_id = ${userId} ORDER BY created_at DESC, key LIMIT ${limit}`
  })
  return NoticeRecords.of({
    find: (key) => find(key).pipe(stored),
    ofUser: (userId, limit) => ofUser({ userId, limit }).pipe(stored),
    record: (entry) => record(entry).pipe(Effect.map((row) => row._tag === "Some" ? row.value : null), stored),
    claimDue: (now, leaseUntil, limit) => claim({ now, leaseUntil, limit }).pipe(stored),
    afterCommit: (effect) => sql.afterCommit(effect),
    markSent: (key, at) =>
      sql`UPDATE customer_notices SET sent_at = ${at}, next_attempt_at = NULL, last_error = NULL
          WHERE key = ${key} AND sent_at IS NULL`.pipe(Effect.asVoid, stored),
    unsent: (limit) => unsent(limit).pipe(stored),
    markFailed: (key, error, retryAt) =>
      sql`UPDATE customer_notices SET last_error = ${error}, next_attempt_at = ${retryAt}
          WHERE key = ${key} AND sent_at IS NULL`.pipe(Effect.asVoid, stored)
  })
})

export const layer = Layer.effect(NoticeRecords, make)
