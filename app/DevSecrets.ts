// Development secrets: generated once, kept in DATA_DIR so sessions and sealed credentials survive restarts.
import { Effect, Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { InvalidSetting } from "./Config.ts"

interface DevSecrets {
  readonly jwtSecret: Redacted.Redacted<string>
  readonly encryptionKey: Redacted.Redacted<string>
}

const SecretsFile = Schema.fromJsonString(Schema.Struct({ jwtSecret: Schema.String, encryptionKey: Schema.String }))

export const devSecrets = (dataDir: string): Effect.Effect<DevSecrets, InvalidSetting> =>
  Effect.gen(function*() {
    const file = join(dataDir, "secrets.json")
    const existing = yield* Effect.tryPromise(() => readFile(file, "utf8")).pipe(Effect.option)
    if (existing._tag === "Some") {
      const parsed = yield* Schema.decodeUnknownEffect(SecretsFile)(existing.value).pipe(
        Effect.mapError(() => new InvalidSetting({ name: "DATA_DIR", problem: `${file} is not a valid secrets file` }))
      )
      return { jwtSecret: Redacted.make(parsed.jwtSecret), encryptionKey: Redacted.make(parsed.encryptionKey) }
    }
    const secrets = { jwtSecret: randomBytes(48).toString("base64url"), encryptionKey: randomBytes(32).toString("base64") }
    // Written aside, then linked into place: link fails if the file exists, so two processes starting at once
    // agree on whichever secrets landed first, and nobody ever reads a half-written file.
    const created = yield* Effect.tryPromise(async () => {
      await mkdir(dataDir, { recursive: true })
      const aside = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`
      await writeFile(aside, JSON.stringify(secrets, null, 2) + "\n", { mode: 0o600 })
      try {
        await link(aside, file)
        return true
      } catch (e) {
        if (e instanceof Error && "code" in e && e.code === "EEXIST") return false
        throw e
      } finally {
        await rm(aside, { force: true })
      }
    }).pipe(Effect.catch(() => Effect.fail(new InvalidSetting({ name: "DATA_DIR", problem: `cannot write ${file}` }))))
    if (!created) return yield* devSecrets(dataDir)
    yield* Effect.logWarning(
      `JWT_SECRET and ENCRYPTION_KEY are not set: generated development secrets and kept them in ${file}. ` +
        "Set both in production (NODE_ENV=production refuses to start without them)."
    )
    return { jwtSecret: Redacted.make(secrets.jwtSecret), encryptionKey: Redacted.make(secrets.encryptionKey) }
  })
