// Specification of the state file both sandboxes share (app/sandbox/StateFile.ts): changes coalesce into one write
// 200 ms (on the Clock) after the first, writes never overlap, the last write holds the last state, nothing unchanged
// is written, and problems are reported in the sandbox's own words. The writer is observed, not the disk, except where
// loading reads a real file; what each sandbox keeps is specified by test/sandbox/proxmox/persistence.test.ts and
// test/sandbox/pterodactyl/stateFile.test.ts.
import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Deferred, Effect, Exit, Fiber, FileSystem, Result, Scope } from "effect"
import { TestClock } from "effect/testing"
import { afterAll, beforeAll } from "vitest"
import { openStateFile, type StateSource, type WriteFile, writeAtomically } from "../../app/sandbox/StateFile.ts"

/** A source whose document is `encode()`; every saved text restores. */
const sourceOf = (encode: () => string): StateSource => ({ encode, restore: (text) => Result.succeed(text) })

/** A writer that records what it is asked to write. */
const recording = (writes: Array<string>): WriteFile => (_, text) => Effect.sync(() => void writes.push(text))

/** Opens a state file in a scope of its own; `close` closes that scope (the sandbox stopping). */
const open = (source: StateSource, options: { warn?: (m: string) => void; write?: WriteFile; path?: string } = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const keeper = yield* openStateFile(options.path ?? "/unused", source, {
      sandbox: "sandbox Test",
      seed: "its seed",
      warn: options.warn ?? (() => undefined),
      ...(options.write === undefined ? {} : { write: options.write })
    }).pipe(Scope.provide(scope), Effect.provide(NodeFileSystem.layer))
    return { changed: () => keeper.changed(), close: Scope.close(scope, Exit.void) }
  })

/** Lets the saver fiber run what it can without time passing. */
const settle = Effect.gen(function*() {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

let root: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sandbox-state-file-"))
})
afterAll(() => rm(root, { recursive: true, force: true }))

describe("state file writes", () => {
  it.effect("many changes at once are saved in one write at the close, with the last state", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      let state = 0
      const file = yield* open(sourceOf(() => `state ${state}`), { write: recording(writes) })
      for (let i = 1; i <= 50; i++) {
        state = i
        file.changed()
      }
      yield* file.close
      assert.deepStrictEqual(writes, ["state 50"])
    }))

  it.effect("a change is saved 200 ms after it, once, with whatever else changed in the window", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      let state = "a"
      const file = yield* open(sourceOf(() => state), { write: recording(writes) })
      file.changed()
      yield* TestClock.adjust("150 millis")
      state = "b"
      file.changed()
      yield* TestClock.adjust("49 millis")
      yield* settle
      assert.deepStrictEqual(writes, [])
      yield* TestClock.adjust("1 millis")
      yield* settle
      assert.deepStrictEqual(writes, ["b"])
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.deepStrictEqual(writes, ["b"])
      state = "c"
      file.changed()
      yield* TestClock.adjust("200 millis")
      yield* settle
      assert.deepStrictEqual(writes, ["b", "c"])
      yield* file.close
      assert.deepStrictEqual(writes, ["b", "c"])
    }))

  it.effect("writes never overlap: a change during a write is saved by the next one, at the latest at the close", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      let active = 0
      let overlapped = false
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      let state = "a"
      const file = yield* open(sourceOf(() => state), {
        write: (_, text) =>
          Effect.gen(function*() {
            active++
            overlapped ||= active > 1
            writes.push(text)
            if (text === "a") {
              yield* Deferred.succeed(started, undefined)
              yield* Deferred.await(release)
            }
            active--
          })
      })
      file.changed()
      yield* TestClock.adjust("200 millis")
      yield* Deferred.await(started)
      state = "b"
      file.changed()
      const closing = yield* Effect.forkChild(file.close)
      yield* settle
      assert.deepStrictEqual(writes, ["a"])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(closing)
      assert.deepStrictEqual(writes, ["a", "b"])
      assert.isFalse(overlapped)
    }))

  it.effect("a failed write is reported and the next change writes again", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const writes: Array<string> = []
      let state = "a"
      const file = yield* open(sourceOf(() => state), {
        path: "/x/state.json",
        warn: (m) => warnings.push(m),
        write: (_, text) =>
          Effect.suspend(() => {
            writes.push(text)
            return text === "a" ? Effect.fail(new Error("disk full")) : Effect.void
          })
      })
      file.changed()
      yield* TestClock.adjust("200 millis")
      yield* settle
      assert.deepStrictEqual(warnings, ["sandbox Test: could not save state file /x/state.json: disk full"])
      state = "b"
      yield* file.close
      assert.deepStrictEqual(writes, ["a", "b"])
    }))

  it.effect("an unchanged document is not written again, and a change after the close is not saved", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      let state = "same"
      const file = yield* open(sourceOf(() => state), { write: recording(writes) })
      file.changed()
      yield* TestClock.adjust("200 millis")
      yield* settle
      file.changed()
      yield* file.close
      assert.deepStrictEqual(writes, ["same"])
      state = "later"
      file.changed()
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.deepStrictEqual(writes, ["same"])
    }))

  it.effect("a source with its own `serial` is encoded inside it", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      let inside = false
      const file = yield* open({
        encode: () => (inside ? "encoded alone" : "encoded outside"),
        restore: (text) => Result.succeed(text),
        serial: (effect) =>
          Effect.acquireUseRelease(Effect.sync(() => (inside = true)), () => effect, () => Effect.sync(() => (inside = false)))
      }, { write: recording(writes) })
      yield* file.close
      assert.deepStrictEqual(writes, ["encoded alone"])
    }))

  it.effect("a document that cannot be encoded is reported and nothing is written", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const writes: Array<string> = []
      const file = yield* open(sourceOf(() => {
        throw new Error("cycle")
      }), { path: "/x/state.json", warn: (m) => warnings.push(m), write: recording(writes) })
      yield* file.close
      assert.deepStrictEqual(warnings, ["sandbox Test: could not encode state for /x/state.json: cycle"])
      assert.deepStrictEqual(writes, [])
    }))
})

describe("state file on disk", () => {
  let nextCase = 0
  const caseDir = () => Effect.promise(() => mkdtemp(join(root, `case-${nextCase++}-`)))
  const savedFile = (text: string) =>
    Effect.gen(function*() {
      const dir = yield* caseDir()
      const path = join(dir, "state.json")
      yield* Effect.promise(() => writeFile(path, text))
      return { dir, path }
    })

  it.effect("the atomic write creates the directory, leaves the file mode 0600 and no temp file", () =>
    Effect.gen(function*() {
      const dir = yield* caseDir()
      const path = join(dir, "nested", "state.json")
      const fs = yield* FileSystem.FileSystem.pipe(Effect.provide(NodeFileSystem.layer))
      yield* writeAtomically(fs)(path, "one")
      yield* writeAtomically(fs)(path, "two")
      assert.strictEqual(yield* fs.readFileString(path), "two")
      assert.strictEqual((yield* Effect.promise(() => stat(path))).mode & 0o777, 0o600)
      assert.deepStrictEqual(yield* Effect.promise(() => readdir(join(dir, "nested"))), ["state.json"])
    }))

  it.effect("the text a restore returns counts as on disk: encoding the same text after the load writes nothing", () =>
    Effect.gen(function*() {
      const { path } = yield* savedFile("as saved by an older version")
      const writes: Array<string> = []
      const restored: Array<string> = []
      const file = yield* open({
        encode: () => "canonical",
        restore: (text) => {
          restored.push(text)
          return Result.succeed("canonical")
        }
      }, { path, write: recording(writes) })
      file.changed()
      yield* file.close
      assert.deepStrictEqual(restored, ["as saved by an older version"])
      assert.deepStrictEqual(writes, [])
    }))

  it.effect("no file leaves the seed: nothing is restored, and the first save writes", () =>
    Effect.gen(function*() {
      const dir = yield* caseDir()
      const writes: Array<string> = []
      let restores = 0
      const file = yield* open({
        encode: () => "seed",
        restore: () => {
          restores++
          return Result.succeed("seed")
        }
      }, { path: join(dir, "absent.json"), write: recording(writes) })
      yield* file.close
      assert.strictEqual(restores, 0)
      assert.deepStrictEqual(writes, ["seed"])
    }))

  it.effect("an invalid file is moved aside and reported in the sandbox's words", () =>
    Effect.gen(function*() {
      const { dir, path } = yield* savedFile("garbage")
      const warnings: Array<string> = []
      yield* open({ encode: () => "seed", restore: () => Result.fail("not valid JSON") }, {
        path,
        warn: (m) => warnings.push(m),
        write: () => Effect.void
      })
      const aside = (yield* Effect.promise(() => readdir(dir))).filter((name) => name.startsWith("state.json.invalid-"))
      assert.lengthOf(aside, 1)
      assert.deepStrictEqual(warnings, [
        `sandbox Test: state file ${path} is invalid (not valid JSON); it was moved to ${join(dir, aside[0] ?? "")}, ` +
        "and the sandbox starts with its seed only"
      ])
    }))

  it.effect("a file that exists but cannot be read stops the start, naming the sandbox", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(open(sourceOf(() => "seed"), { path: root }))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.include(String(defect), `sandbox Test: cannot read state file ${root}: `)
    }))
})
