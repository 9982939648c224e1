// Reads and completes the settings once per process; a bad one becomes a one-line InvalidSetting.
import { Effect } from "effect"
import { describeConfigError, resolveSettings, SettingsConfig } from "./Config.ts"
import { devSecrets } from "./DevSecrets.ts"

export const loadSettings = Effect.gen(function*() {
  const raw = yield* Effect.mapError(SettingsConfig, describeConfigError)
  return yield* resolveSettings(raw, devSecrets(raw.dataDir))
})

/** One line for an operator, from any failure at start (setting, database, port). */
export const startupFailure = (e: { readonly _tag: string; readonly message: string }): string => {
  switch (e._tag) {
    case "SqlError":
      return `Cannot use the database: ${e.message}`
    case "MigrationError":
      return `Database migration failed: ${e.message}`
    case "ServeError":
      // The listener's error says nothing itself; its cause does (EADDRINUSE, EACCES…).
      return `Cannot listen for HTTP: ${"cause" in e && e.cause instanceof Error ? e.cause.message : e.message}`
    default:
      return e.message
  }
}
