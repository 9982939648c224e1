// The ordered schema migrations (never edited once landed), run by the effect/sql Migrator.
import { Effect, Schema } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import accounts from "./migrations/0001_accounts.ts"
import secretsOutbox from "./migrations/0002_secrets_outbox.ts"
import catalog from "./migrations/0003_catalog.ts"
import billingVps from "./migrations/0004_billing_vps.ts"
import gameServers from "./migrations/0005_game_servers.ts"
import sessions from "./migrations/0006_sessions.ts"
import recovery from "./migrations/0007_recovery.ts"
import snapshotClaims from "./migrations/0008_snapshot_claims.ts"
import payments from "./migrations/0009_payments.ts"
import orderCheckout from "./migrations/0010_order_checkout.ts"
import renewals from "./migrations/0011_renewals.ts"
import notices from "./migrations/0012_notices.ts"
import invoices from "./migrations/0013_invoices.ts"
import rolesAudit from "./migrations/0014_roles_audit.ts"
import kinds from "./migrations/0015_kinds.ts"
import consumerRights from "./migrations/0017_consumer_rights.ts"
import operatorActions from "./migrations/0018_operator_actions.ts"
import planSale from "./migrations/0019_plan_sale.ts"
import opsAlerts from "./migrations/0020_ops_alerts.ts"
import orderRetries from "./migrations/0021_order_retries.ts"

const all = {
  "1_accounts": accounts,
  "2_secrets_outbox": secretsOutbox,
  "3_catalog": catalog,
  "4_billing_vps": billingVps,
  "5_game_servers": gameServers,
  "6_sessions": sessions,
  "7_recovery": recovery,
  "8_snapshot_claims": snapshotClaims,
  "9_payments": payments,
  "10_order_checkout": orderCheckout,
  "11_renewals": renewals,
  "12_notices": notices,
  "13_invoices": invoices,
  "14_roles_audit": rolesAudit,
  "15_kinds": kinds,
  "17_consumer_rights": consumerRights,
  "18_operator_actions": operatorActions,
  "19_plan_sale": planSale,
  "20_ops_alerts": opsAlerts,
  "21_order_retries": orderRetries
}

export const latestMigrationId = Math.max(...Object.keys(all).map((key) => Number(key.split("_")[0])))

/** Applies every pending migration; returns the ones applied now as `[id, name]`. */
export const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(all) })

export class SchemaBehind extends Schema.TaggedError<SchemaBehind>()("SchemaBehind", {
  current: Schema.Int,
  latest: Schema.Int
}) {
  override get message() {
    return `The database schema is at migration ${this.current}, this release needs ${this.latest}: run \`npm run migrate\` first.`
  }
}

const Version = Schema.Array(Schema.Struct({ version: Schema.NullOr(Schema.Int) }))

/** Fails `SchemaBehind` unless every migration of this release has been applied. */
export const requireCurrentSchema = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const exists = yield* sql`SELECT to_regclass('effect_sql_migrations') IS NOT NULL AS present`
  const current = exists[0]?.["present"] === true
    ? (yield* sql`SELECT max(migration_id) AS version FROM effect_sql_migrations`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Version))
    ))[0]?.version ?? 0
    : 0
  if (current < latestMigrationId) return yield* new SchemaBehind({ current, latest: latestMigrationId })
  // At start-up: a database that cannot be read stops the start, as any other failure to begin.
}).pipe(Effect.catchTag(["SqlError", "SchemaError"], Effect.die))
