// `npm start`: the HTTP server with every service, on embedded defaults unless settings say otherwise.
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { describeConfigError, resolveSettings, SettingsConfig } from "./Config.ts"
import { devSecrets } from "./DevSecrets.ts"
import { LoggerLive, ServerLive } from "./Layers.ts"

const startupFailure = (e: { readonly _tag: string; readonly message: string }): string => {
  switch (e._tag) {
    case "SqlError":
      return `Cannot use the database: ${e.message}`
    case "MigrationError":
      return `Database migration failed: ${e.message}`
    case "ServeError":
      return `Cannot listen for HTTP: ${e.message}`
    default:
      return e.message
  }
}

const main = Effect.gen(function*() {
  const raw = yield* Effect.mapError(SettingsConfig, describeConfigError)
  const settings = yield* resolveSettings(raw, devSecrets(raw.dataDir))
  return yield* Layer.launch(ServerLive(settings)).pipe(Effect.provide(LoggerLive(settings)))
}).pipe(
  // A bad setting or an unusable database stops the process with one clear line, not a stack trace.
  Effect.catch((e) =>
    Effect.sync(() => {
      process.stderr.write(`${startupFailure(e)}\n`)
      process.exitCode = 1
    }))
)

NodeRuntime.runMain(main)
