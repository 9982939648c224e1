// Login throttling counters in Postgres, so every API instance sees the same counts.
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { LoginAttempts } from "../../ports/LoginAttempts.ts"

const Window = Schema.Array(Schema.Struct({ count: Schema.Int, window_end: Schema.Date }))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return LoginAttempts.of({
    hit: (key, now, windowMillis) => {
      const end = new Date(now.getTime() + windowMillis)
      // One statement: concurrent hits serialise on the row, each sees its own count.
      return sql`
        INSERT INTO login_attempts (key, count, window_start, window_end) VALUES (${key}, 1, ${now}, ${end})
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN login_attempts.window_end > ${now} THEN login_attempts.count + 1 ELSE 1 END,
          window_start = CASE WHEN login_attempts.window_end > ${now} THEN login_attempts.window_start ELSE ${now} END,
          window_end = CASE WHEN login_attempts.window_end > ${now} THEN login_attempts.window_end ELSE ${end} END
        RETURNING count, window_end`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Window)),
        Effect.flatMap((rows) =>
          rows[0] === undefined
            ? Effect.die("upsert returned no row")
            : Effect.succeed({ count: rows[0].count, resetsAt: rows[0].window_end })
        ),
        Effect.orDie
      )
    },
    undo: (key) =>
      sql`UPDATE login_attempts SET count = greatest(count - 1, 0) WHERE key = ${key}`.pipe(Effect.asVoid, Effect.orDie),
    clear: (key) => sql`DELETE FROM login_attempts WHERE key = ${key}`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.effect(LoginAttempts, make)
