// Login throttling counters in Postgres, so every API instance sees the same counts.
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { LoginAttempts } from "../../ports/LoginAttempts.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const Hit = Schema.Struct({ key: Schema.String, now: Schema.Date, end: Schema.Date })
const WindowRow = snakeColumns(Schema.Struct({ count: Schema.Int, resetsAt: Schema.Date }), { resetsAt: "window_end" })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One statement: concurrent hits serialise on the row, each sees its own count.
  const hit = SqlSchema.findOne({
    Request: Hit,
    Result: WindowRow,
    execute: ({ end, key, now }) =>
      sql`
        INSERT INTO login_attempts (key, count, window_start, window_end) VALUES (${key}, 1, ${now}, ${end})
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN login_attempts.window_end > ${now} THEN login_attempts.count + 1 ELSE 1 END,
          window_start = CASE WHEN login_attempts.window_end > ${now} THEN login_attempts.window_start ELSE ${now} END,
          window_end = CASE WHEN login_attempts.window_end > ${now} THEN login_attempts.window_end ELSE ${end} END
        RETURNING count, window_end`
  })
  return LoginAttempts.of({
    hit: (key, now, windowMillis) => hit({ key, now, end: new Date(now.getTime() + windowMillis) }).pipe(stored),
    undo: (key) =>
      sql`UPDATE login_attempts SET count = greatest(count - 1, 0) WHERE key = ${key}`.pipe(Effect.asVoid, stored),
    clear: (key) => sql`DELETE FROM login_attempts WHERE key = ${key}`.pipe(Effect.asVoid, stored)
  })
})

export const layer = Layer.effect(LoginAttempts, make)
