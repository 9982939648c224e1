// The platform's own health records in Postgres: an incident opens with INSERT … ON CONFLICT DO NOTHING on the
// partial unique index of open keys (one winner however many instances try), and is told through a claim
// (UPDATE … RETURNING: each untold incident is taken by one pass).
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { OpsRecords } from "../../ports/OpsRecords.ts"
import { snakeColumns } from "./columns.ts"
import { stored } from "./failures.ts"

const IncidentRows = Schema.Array(snakeColumns(Schema.Struct({
  id: Schema.NumberFromString,
  key: Schema.String,
  summaryEn: Schema.String,
  summaryFr: Schema.String,
  openedAt: Schema.Date
})))
const Count = Schema.Array(Schema.Struct({ n: Schema.Int }))
const CronRows = Schema.Array(snakeColumns(Schema.Struct({ name: Schema.String, lastStartedAt: Schema.Date })))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return OpsRecords.of({
    open: (key, summary, at) =>
      sql`INSERT INTO ops_incidents (key, summary_en, summary_fr, opened_at) VALUES (${key}, ${summary.en}, ${summary.fr}, ${at})
          ON CONFLICT (key) WHERE resolved_at IS NULL DO NOTHING RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1),
        stored
      ),
    resolve: (key, at) =>
      sql`UPDATE ops_incidents SET resolved_at = ${at} WHERE key = ${key} AND resolved_at IS NULL RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        stored
      ),
    claimUntold: (at) =>
      sql`UPDATE ops_incidents SET told_at = ${at}
          WHERE id IN (SELECT id FROM ops_incidents WHERE told_at IS NULL AND resolved_at IS NULL ORDER BY id FOR UPDATE SKIP LOCKED)
          RETURNING id::text AS id, key, summary_en, summary_fr, opened_at`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(IncidentRows)),
        Effect.map((rows) =>
          rows.map((r) => ({ id: r.id, key: r.key, summary: { en: r.summaryEn, fr: r.summaryFr }, openedAt: r.openedAt }))
            .sort((a, b) => a.id - b.id)),
        stored
      ),
    untold: (id) => sql`UPDATE ops_incidents SET told_at = NULL WHERE id = ${id}`.pipe(Effect.asVoid, stored),
    signal: (kind, at) => sql`INSERT INTO ops_signals (kind, at) VALUES (${kind}, ${at})`.pipe(Effect.asVoid, stored),
    signalsSince: (kind, since) =>
      sql`SELECT count(*)::int AS n FROM ops_signals WHERE kind = ${kind} AND at >= ${since}`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Count)),
        Effect.map((rows) => rows[0]?.n ?? 0),
        stored
      ),
    pruneSignals: (before) => sql`DELETE FROM ops_signals WHERE at < ${before}`.pipe(Effect.asVoid, stored),
    cronStarted: (name, at) =>
      sql`INSERT INTO cron_runs (name, last_started_at) VALUES (${name}, ${at})
          ON CONFLICT (name) DO UPDATE SET last_started_at = greatest(cron_runs.last_started_at, excluded.last_started_at)`.pipe(
        Effect.asVoid,
        stored
      ),
    cronRuns: sql`SELECT name, last_started_at FROM cron_runs ORDER BY name`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(CronRows)),
      stored
    )
  })
})

export const layer = Layer.effect(OpsRecords, make)
