// Server-side sessions in Postgres: every instance sees a session end as soon as its row is gone.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { SessionId, type SessionRecord } from "../../domain/account/SessionRecord.ts"
import { UserId } from "../../domain/account/User.ts"
import { SessionRecords } from "../../ports/SessionRecords.ts"

const SessionRow = Schema.Struct({
  id: SessionId,
  user_id: UserId,
  remember_me: Schema.Boolean,
  created_at: Schema.Date,
  last_seen_at: Schema.Date,
  expires_at: Schema.Date,
  user_agent: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String)
})

const toRecord = (r: typeof SessionRow.Type): SessionRecord => ({
  id: r.id,
  userId: r.user_id,
  rememberMe: r.remember_me,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  expiresAt: r.expires_at,
  userAgent: r.user_agent,
  address: r.address
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const byId = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: SessionRow,
    execute: (id) => sql`SELECT * FROM sessions WHERE id = ${id}`
  })
  return SessionRecords.of({
    create: (s) =>
      sql`INSERT INTO sessions ${
        sql.insert({
          id: s.id,
          user_id: s.userId,
          remember_me: s.rememberMe,
          created_at: s.createdAt,
          last_seen_at: s.lastSeenAt,
          expires_at: s.expiresAt,
          user_agent: s.userAgent,
          address: s.address
        })
      }`.pipe(Effect.asVoid, Effect.orDie),
    find: (id) => byId(id).pipe(Effect.map(Option.map(toRecord)), Effect.orDie),
    touch: (id, at) =>
      sql`UPDATE sessions SET last_seen_at = ${at} WHERE id = ${id} AND last_seen_at < ${at}`.pipe(Effect.asVoid, Effect.orDie),
    end: (id) => sql`DELETE FROM sessions WHERE id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
    endAllOf: (userId) =>
      sql`DELETE FROM sessions WHERE user_id = ${userId} RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie),
    purgeExpired: (now, limit) =>
      // Bounded, and SKIP LOCKED so that concurrent purges (every sign-in runs one) never wait on each other.
      sql`DELETE FROM sessions WHERE id IN (
            SELECT id FROM sessions WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
          ) RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie)
  })
})

export const layer = Layer.effect(SessionRecords, make)
