// Server-side sessions in Postgres: every instance sees a session end as soon as its row is gone.
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { SessionId } from "../../domain/account/SessionRecord.ts"
import { UserId } from "../../domain/account/User.ts"
import { SessionRecords } from "../../ports/SessionRecords.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const SessionRow = snakeColumns(Schema.Struct({
  id: SessionId,
  userId: UserId,
  rememberMe: Schema.Boolean,
  createdAt: Schema.Date,
  lastSeenAt: Schema.Date,
  expiresAt: Schema.Date,
  userAgent: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String)
}))

const decodeSessions = Schema.decodeUnknownEffect(Schema.Array(SessionRow))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const insert = SqlSchema.void({
    Request: SessionRow,
    execute: (row) => sql`INSERT INTO sessions ${sql.insert(row)}`
  })
  const byId = SqlSchema.findOneOption({
    Request: SessionId,
    Result: SessionRow,
    execute: (id) => sql`SELECT * FROM sessions WHERE id = ${id}`
  })
  return SessionRecords.of({
    create: (session) => insert(session).pipe(stored),
    find: (id) => byId(id).pipe(stored),
    touch: (id, at) =>
      sql`UPDATE sessions SET last_seen_at = ${at} WHERE id = ${id} AND last_seen_at < ${at}`.pipe(Effect.asVoid, stored),
    end: (id) => sql`DELETE FROM sessions WHERE id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), stored),
    endAllOf: (userId) =>
      sql`DELETE FROM sessions WHERE user_id = ${userId} RETURNING id`.pipe(Effect.map((rows) => rows.length), stored),
    listOf: (userId, now) =>
      sql`SELECT * FROM sessions WHERE user_id = ${userId} AND expires_at > ${now} ORDER BY created_at DESC`.pipe(
        Effect.flatMap(decodeSessions),
        stored
      ),
    purgeExpired: (now, limit) =>
      // Bounded, and SKIP LOCKED so that concurrent purges (every sign-in runs one) never wait on each other.
      sql`DELETE FROM sessions WHERE id IN (
            SELECT id FROM sessions WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
          ) RETURNING id`.pipe(Effect.map((rows) => rows.length), stored)
  })
})

export const layer = Layer.effect(SessionRecords, make)
