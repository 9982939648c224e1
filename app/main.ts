// `npm start`: the HTTP server with every service, on embedded defaults unless settings say otherwise.
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { PRIVATE_UMASK } from "./DataDir.ts"
import { LoggerLive, ServerLive } from "./Layers.ts"
import { loadSettings, startupFailure } from "./loadSettings.ts"

const main = Effect.gen(function*() {
  const settings = yield* loadSettings
  return yield* Layer.launch(ServerLive(settings)).pipe(Effect.provide(LoggerLive(settings)))
}).pipe(
  // A bad setting, an unusable database or a taken port stops the process with one clear line.
  Effect.catch((e) =>
    Effect.sync(() => {
      process.stderr.write(`${startupFailure(e)}\n`)
      process.exitCode = 1
    })
  )
)

// Everything this process creates (PGlite's files, the sandbox's state, sockets) is its owner's only.
process.umask(PRIVATE_UMASK)
// SIGTERM / SIGINT interrupt the server, whose layers then stop in order (see ServerLive): a stop asked for and
// carried out is a success (exit 0), not the 130 of an interrupted program.
NodeRuntime.runMain(main, {
  teardown: (exit, onExit) =>
    Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
})
