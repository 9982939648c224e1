// Specification of development secrets: generated once into DATA_DIR, private to the owner, the same on every start.
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import { Effect, Logger, Redacted, Result } from "effect"
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseEncryptionKey } from "../../adapters/crypto/AesGcmSecretBox.ts"
import { devSecrets } from "../../app/DevSecrets.ts"

interface LogLine {
  readonly level: string
  readonly text: string
}

/** Runs `effect` with a logger that collects every line instead of printing it. */
const withCapturedLogs = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const lines: Array<LogLine> = []
    const collector = Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel, text: Array.isArray(message) ? message.map(String).join(" ") : String(message) })
    })
    const result = yield* effect.pipe(Effect.provide(Logger.layer([collector])))
    return { result, lines }
  })

let root = ""
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "zh-devsecrets-"))
})
afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

const reveal = (secrets: { readonly jwtSecret: Redacted.Redacted<string>; readonly encryptionKey: Redacted.Redacted<string> }) => ({
  jwtSecret: Redacted.value(secrets.jwtSecret),
  encryptionKey: Redacted.value(secrets.encryptionKey)
})

describe("devSecrets", () => {
  it.effect("generates secrets.json readable by the owner only (0600), creating DATA_DIR", () =>
    Effect.gen(function*() {
      const dataDir = join(root, "data", "nested")
      yield* devSecrets(dataDir)
      const info = yield* Effect.promise(() => stat(join(dataDir, "secrets.json")))
      assert.strictEqual(info.mode & 0o777, 0o600)
    }))

  it.effect("warns once, naming the file, that it generated development secrets", () =>
    Effect.gen(function*() {
      const file = join(root, "secrets.json")
      const { lines } = yield* withCapturedLogs(devSecrets(root))
      assert.strictEqual(lines.length, 1)
      const [line] = lines
      assert.strictEqual(line?.level, "Warn")
      assert.include(line?.text, "generated development secrets")
      assert.include(line?.text, file)
    }))

  it.effect("a second call returns the same secrets without rewriting the file or warning again", () =>
    Effect.gen(function*() {
      const file = join(root, "secrets.json")
      const first = yield* devSecrets(root)
      const before = yield* Effect.promise(() => Promise.all([readFile(file, "utf8"), stat(file)]))
      const { result: second, lines } = yield* withCapturedLogs(devSecrets(root))
      const after = yield* Effect.promise(() => Promise.all([readFile(file, "utf8"), stat(file)]))
      assert.deepStrictEqual(reveal(second), reveal(first))
      assert.strictEqual(after[0], before[0])
      assert.strictEqual(after[1].mtimeMs, before[1].mtimeMs)
      assert.strictEqual(after[1].ino, before[1].ino)
      assert.deepStrictEqual(lines, [])
    }))

  it.effect("two data directories get different secrets", () =>
    Effect.gen(function*() {
      const a = reveal(yield* devSecrets(join(root, "a")))
      const b = reveal(yield* devSecrets(join(root, "b")))
      assert.notStrictEqual(a.jwtSecret, b.jwtSecret)
      assert.notStrictEqual(a.encryptionKey, b.encryptionKey)
    }))

  it.effect("the generated ENCRYPTION_KEY decodes to 32 bytes and the JWT secret has at least 32", () =>
    Effect.gen(function*() {
      const secrets = reveal(yield* devSecrets(root))
      const key = parseEncryptionKey(secrets.encryptionKey)
      assert.isTrue(Result.isSuccess(key))
      if (Result.isSuccess(key)) assert.strictEqual(key.success.length, 32)
      assert.isAtLeast(new TextEncoder().encode(secrets.jwtSecret).length, 32)
    }))

  it.effect("the secrets stay redacted until revealed", () =>
    Effect.gen(function*() {
      const secrets = yield* devSecrets(root)
      assert.notInclude(String(secrets.jwtSecret), Redacted.value(secrets.jwtSecret))
      assert.notInclude(String(secrets.encryptionKey), Redacted.value(secrets.encryptionKey))
    }))

  for (const [label, content] of [
    ["not JSON", "{ this is not json"],
    ["JSON of the wrong shape", JSON.stringify({ jwtSecret: 42 })]
  ] as const) {
    it.effect(`a secrets file that is ${label} stops with InvalidSetting naming DATA_DIR`, () =>
      Effect.gen(function*() {
        const file = join(root, "secrets.json")
        yield* Effect.promise(() => writeFile(file, content, { mode: 0o600 }))
        const error = yield* Effect.flip(devSecrets(root))
        assert.strictEqual(error._tag, "InvalidSetting")
        assert.strictEqual(error.name, "DATA_DIR")
        assert.include(error.message, file)
        assert.notInclude(error.message, "\n")
        assert.strictEqual(yield* Effect.promise(() => readFile(file, "utf8")), content)
      }))
  }

  it.effect("a DATA_DIR that cannot be created stops with InvalidSetting naming DATA_DIR", () =>
    Effect.gen(function*() {
      const notADirectory = join(root, "plain-file")
      yield* Effect.promise(() => writeFile(notADirectory, "x"))
      const error = yield* Effect.flip(devSecrets(join(notADirectory, "data")))
      assert.strictEqual(error.name, "DATA_DIR")
      assert.include(error.message, "cannot write")
    }))
})
