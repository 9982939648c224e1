// The ordered schema migrations (never edited once landed), run by the effect/sql Migrator.
import { Migrator } from "effect/sql"
import accounts from "./migrations/0001_accounts.ts"
import secretsOutbox from "./migrations/0002_secrets_outbox.ts"

export const migrations = Migrator.fromRecord({
  "1_accounts": accounts,
  "2_secrets_outbox": secretsOutbox
})

/** Applies every pending migration; returns the ones applied now as `[id, name]`. */
export const runMigrations = Migrator.make({})({ loader: migrations })
