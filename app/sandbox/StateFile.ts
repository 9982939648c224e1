// A sandbox's `stateFile` option: its durable state read at start and written back after changes, at most once per
// 200 ms (on the Clock) and once more when its scope closes. Writes run one at a time and are atomic (a temp file in
// the same directory, fsynced, then renamed over the old one), mode 0600: the documents hold cloud-init passwords and
// servers' files. What the document says, and how it is checked, belongs to each sandbox (its StateSource).
import { NodeFileSystem } from "@effect/platform-node"
import { randomBytes } from "node:crypto"
import { basename, dirname, join } from "node:path"
import { Clock, Effect, Fiber, FileSystem, Latch, type PlatformError, Result, type Scope } from "effect"

const THROTTLE = "200 millis"

/** What the file keeps: the document for the state as it is now, and how a saved one is put back. */
export interface StateSource {
  /** Equal states must give equal text: an unchanged document is not written again. */
  encode(): string
  /**
   * Applies a saved document, or says what is wrong with it (nothing is applied then). The success is the text taken
   * as on disk from then on: a later `encode()` giving it writes nothing.
   */
  restore(text: string): Result.Result<string, string>
  /** Runs the encoding alone, when the state may be half changed between two steps of an operation. */
  readonly serial?: <A>(effect: Effect.Effect<A>) => Effect.Effect<A>
}

/** The open state file: told when something durable may have changed (from plain code, e.g. a simulator's handler). */
export interface StateKeeper {
  changed(): void
}

export type WriteFile = (path: string, text: string) => Effect.Effect<void, Error>

export interface StateFileOptions {
  /** Starts every message, e.g. "sandbox PVE". */
  readonly sandbox: string
  /** What the sandbox starts with when the file is invalid, e.g. "its seed". */
  readonly seed: string
  readonly warn: (message: string) => void
  /** The atomic file write; tests pass one that observes it. */
  readonly write?: WriteFile
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** Writes `text` to `path` through a fresh temp file beside it (mode 0600, fsynced), renamed over the old file. */
export const writeAtomically = (fs: FileSystem.FileSystem): WriteFile => (path, text) => {
  const directory = dirname(path)
  const temp = join(directory, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`)
  const writeTemp = Effect.scoped(Effect.gen(function*() {
    const file = yield* fs.open(temp, { flag: "wx", mode: 0o600 })
    yield* file.writeAll(new TextEncoder().encode(text))
    // The creation mode is filtered by the umask; the file must not be readable by others whatever it is.
    yield* fs.chmod(temp, 0o600)
    yield* file.sync
  }))
  return fs.makeDirectory(directory, { recursive: true }).pipe(
    Effect.andThen(writeTemp.pipe(
      Effect.andThen(fs.rename(temp, path)),
      Effect.onError(() => Effect.ignore(fs.remove(temp, { force: true })))
    ))
  )
}

const isMissing = (e: PlatformError.PlatformError) => e.reason._tag === "NotFound"

/**
 * Opens the state file at `path` over `source` for the current scope. The file is loaded into the freshly seeded
 * state first: no file, the seed stays; an invalid file is moved aside (so the next save cannot destroy it) and
 * reported, and the sandbox starts from its seed; a file that exists but cannot be read is a defect, as going on would
 * overwrite state that may be fine. Changes are then saved within 200 ms, together with whatever else changes
 * meanwhile; when the scope closes, the pending save is cancelled and the final state written (later changes are not
 * saved).
 */
export const openStateFile = (
  path: string,
  source: StateSource,
  options: StateFileOptions
): Effect.Effect<StateKeeper, never, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { sandbox, warn } = options
    const write = options.write ?? writeAtomically(fs)
    /** The text on disk, so a change that changed nothing durable writes nothing. */
    let written: string | undefined

    const text = yield* fs.readFileString(path, "utf8").pipe(
      Effect.map((text): string | undefined => text),
      Effect.catch((e) =>
        isMissing(e)
          ? Effect.succeed(undefined)
          : Effect.die(new Error(`${sandbox}: cannot read state file ${path}: ${e.message}`))
      )
    )
    if (text !== undefined) {
      const restored = source.restore(text)
      if (Result.isSuccess(restored)) {
        written = restored.success
      } else {
        const now = new Date(yield* Clock.currentTimeMillis)
        const aside = `${path}.invalid-${now.toISOString().replace(/[:.]/g, "-")}`
        const moved = yield* fs.rename(path, aside).pipe(
          Effect.as(`moved to ${aside}`),
          Effect.catch((e) => Effect.succeed(`could not be moved aside (${e.message}) and will be overwritten`))
        )
        warn(`${sandbox}: state file ${path} is invalid (${restored.failure}); it was ${moved}, ` +
          `and the sandbox starts with ${options.seed} only`)
      }
    }

    const encode = Effect.sync(() => {
      try {
        return source.encode()
      } catch (e) {
        warn(`${sandbox}: could not encode state for ${path}: ${messageOf(e)}`)
        return undefined
      }
    })
    /** One save of the state as it is now; never interrupted halfway, so saves cannot overlap. */
    const save = Effect.gen(function*() {
      const text = yield* (source.serial === undefined ? encode : source.serial(encode))
      if (text === undefined || text === written) return
      yield* write(path, text).pipe(
        Effect.tap(() => Effect.sync(() => (written = text))),
        Effect.catch((e) => Effect.sync(() => warn(`${sandbox}: could not save state file ${path}: ${e.message}`))),
        Effect.catchDefect((e) => Effect.sync(() => warn(`${sandbox}: could not save state file ${path}: ${messageOf(e)}`)))
      )
    }).pipe(Effect.uninterruptible)

    // A change opens the latch once per window; the saver then waits out the window and saves what is there by then.
    const wake = yield* Latch.make(false)
    let pending = false
    let closed = false
    const saver = yield* Effect.forkScoped(Effect.forever(
      wake.await.pipe(
        Effect.andThen(wake.close),
        Effect.andThen(Effect.sleep(THROTTLE)),
        Effect.andThen(Effect.sync(() => (pending = false))),
        Effect.andThen(save)
      )
    ))
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => (closed = true)).pipe(
        // Waits for a save under way (it cannot be interrupted), then writes the final state.
        Effect.andThen(Fiber.interrupt(saver)),
        Effect.andThen(save)
      )
    )
    return {
      changed: () => {
        if (closed || pending) return
        pending = true
        wake.openUnsafe()
      }
    }
  })

/**
 * A sandbox's `keepState` option over the file at `path` (its messages start with `sandbox`; `seed` names what it
 * starts with when the file is invalid), on the machine's file system.
 */
export const keepInFile = (path: string, sandbox: string, seed = "its seed") =>
(source: StateSource, warn: (message: string) => void): Effect.Effect<StateKeeper, never, Scope.Scope> =>
  openStateFile(path, source, { sandbox, seed, warn }).pipe(Effect.provide(NodeFileSystem.layer))
