// The audit log in Postgres: one insert per event (in the caller's transaction when there is one); reads are keyset
// pages on the identity id, through the index of whichever filter is given (subject, actor or action).
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { UserId } from "../../domain/account/User.ts"
import { AUDIT_ACTIONS, type AuditEvent, storableEntry } from "../../domain/audit/AuditEvent.ts"
import { AuditLog } from "../../ports/AuditLog.ts"
import { stored } from "./failures.ts"

const EventRow = Schema.Struct({
  id: Schema.Union([Schema.String, Schema.Number, Schema.BigInt]),
  at: Schema.Date,
  actor_id: Schema.NullOr(UserId),
  actor_role: Schema.Literals(["customer", "support", "admin", "system", "anonymous"]),
  action: Schema.Literals(AUDIT_ACTIONS),
  subject_user_id: Schema.NullOr(UserId),
  target_type: Schema.NullOr(Schema.String),
  target_id: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String),
  before: Schema.Unknown,
  after: Schema.Unknown,
  details: Schema.Unknown
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(EventRow))

/** JSON for a jsonb column; null stays SQL NULL. */
const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value))

/** A JSON value as the driver hands it: parsed by node-postgres, text by some others. */
const parsed = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value ?? null)

const toEvent = (row: typeof EventRow.Type): AuditEvent => ({
  id: String(row.id),
  at: row.at,
  actorId: row.actor_id,
  actorRole: row.actor_role,
  action: row.action,
  subjectUserId: row.subject_user_id,
  target: row.target_type === null || row.target_id === null ? null : { type: row.target_type, id: row.target_id },
  address: row.address,
  before: parsed(row.before),
  after: parsed(row.after),
  details: parsed(row.details)
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return AuditLog.of({
    append: (entry) => {
      const e = storableEntry(entry)
      return sql`INSERT INTO audit_events (at, actor_id, actor_role, action, subject_user_id, target_type, target_id, address,
                                    before, after, details)
          VALUES (${e.at}, ${e.actorId}, ${e.actorRole}, ${e.action}, ${e.subjectUserId}, ${e.target?.type ?? null},
                  ${e.target?.id ?? null}, ${e.address}, ${json(e.before)}::jsonb, ${json(e.after)}::jsonb,
                  ${json(e.details)}::jsonb)`.pipe(Effect.asVoid, stored)
    },
    list: (q) => {
      const conditions = [
        ...(q.subjectUserId === undefined ? [] : [sql`subject_user_id = ${q.subjectUserId}`]),
        ...(q.actorId === undefined ? [] : [sql`actor_id = ${q.actorId}`]),
        ...(q.actions === undefined ? [] : [sql`action IN ${sql.in(q.actions.length === 0 ? [""] : q.actions)}`]),
        ...(q.before === undefined ? [] : [sql`id < ${q.before}`])
      ]
      return sql`SELECT * FROM audit_events WHERE ${sql.and(conditions)} ORDER BY id DESC LIMIT ${q.limit}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((rows) => rows.map(toEvent)),
        stored
      )
    }
  })
})

export const layer = Layer.effect(AuditLog, make)
