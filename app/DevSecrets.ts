// Development secrets: generated once, kept in DATA_DIR so sessions and sealed credentials survive restarts.
import { Effect, Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { InvalidSetting } from "./Config.ts"

const SecretsFile = Schema.fromJsonString(Schema.Struct({ jwtSecret: Schema.String, encryptionKey: Schema.String }))

export const devSecrets = (dataDir: string) =>
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
    yield* Effect.tryPromise(async () => {
      await mkdir(dataDir, { recursive: true })
      // `wx`: two processes starting at once cannot overwrite each other's freshly generated keys.
      await writeFile(file, JSON.stringify(secrets, null, 2) + "\n", { mode: 0o600, flag: "wx" })
    }).pipe(Effect.catch(() => Effect.fail(new InvalidSetting({ name: "DATA_DIR", problem: `cannot write ${file}` }))))
    yield* Effect.logWarning(
      `JWT_SECRET and ENCRYPTION_KEY are not set: generated development secrets and kept them in ${file}. ` +
        "Set both in production (NODE_ENV=production refuses to start without them)."
    )
    return { jwtSecret: Redacted.make(secrets.jwtSecret), encryptionKey: Redacted.make(secrets.encryptionKey) }
  })
